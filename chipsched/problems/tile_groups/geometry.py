"""Mesh geometry of the tile_groups analyzer: stripe ids, link vectors, flow loads.

* :func:`stripe_positions` — SET's stripe-based tile ids (Tangram's layout): the mesh
  is cut into vertical stripes ``width`` columns wide; ids run left to right across a
  stripe's columns, row by row, bottom-up in even stripes and top-down in odd ones
  (a snake), so that consecutive ids — the tile groups of S-cut children — are
  compact blocks (seed 002 "Physical tiles", docs/tile_groups.md; SET-ISCA2023
  ``Cluster::get_pos``).
* link vectors — the directed links of :class:`chipsched.cost.LinkLoads` flattened in
  the order east, west, south, north, so loads of many flows add as numpy vectors.
* :func:`all_to_all_loads` — XY-routed link loads of every (producer tile, consumer
  tile) pair at once, from prefix counts, O(mesh) instead of O(|P|·|C|·hops); a test
  checks it against :func:`chipsched.cost.xy_link_loads` on the explicit flows.
"""

from __future__ import annotations

import math

import numpy as np

from chipsched.cost import LinkLoads, xy_link_loads
from chipsched.errors import InputError


def default_stripe_width(cols: int) -> int:
    """Largest divisor of ``cols`` not above √cols (4 columns → 2, 12 → 3) [ours]."""
    best = 1
    for d in range(1, int(math.isqrt(cols)) + 1):
        if cols % d == 0:
            best = d
    return best


def stripe_positions(rows: int, cols: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of stripe ids 0..rows·cols-1 (row 0 is the bottom row).

    Stripe ``s`` covers columns ``[s·width, min(cols, (s+1)·width))`` (the last one may
    be narrower); inside it, id ``k`` is at column ``s·width + k % w_s`` and row
    ``k // w_s`` — counted from the bottom in even stripes, from the top in odd ones.
    """
    if not 1 <= width <= cols:
        raise InputError("stripe_width", f"must be in 1..{cols}, got {width}")
    rr, cc = [], []
    for s, c0 in enumerate(range(0, cols, width)):
        ws = min(width, cols - c0)
        for k in range(rows * ws):
            r = k // ws
            rr.append(r if s % 2 == 0 else rows - 1 - r)
            cc.append(c0 + k % ws)
    return np.array(rr, dtype=np.int64), np.array(cc, dtype=np.int64)


def n_links(rows: int, cols: int) -> int:
    """Directed mesh links: east + west (rows·(cols-1) each), south + north."""
    return 2 * rows * (cols - 1) + 2 * (rows - 1) * cols


def flatten(loads: LinkLoads) -> np.ndarray:
    """A :class:`LinkLoads` as one vector (east, west, south, north)."""
    return np.concatenate([loads.east.ravel(), loads.west.ravel(), loads.south.ravel(),
                           loads.north.ravel()])


def unflatten(vec: np.ndarray, rows: int, cols: int) -> LinkLoads:
    """The inverse of :func:`flatten`."""
    h, v = rows * (cols - 1), (rows - 1) * cols
    return LinkLoads(vec[:h].reshape(rows, cols - 1), vec[h:2 * h].reshape(rows, cols - 1),
                     vec[2 * h:2 * h + v].reshape(rows - 1, cols),
                     vec[2 * h + v:].reshape(rows - 1, cols))


def all_to_all_loads(rows: int, cols: int, pr: np.ndarray, pc: np.ndarray, cr: np.ndarray,
                     cc: np.ndarray) -> np.ndarray:
    """Link loads (flattened) of one unit of data from every tile of P to every tile of C.

    XY routing: a flow moves along its source row to the destination column, then
    along that column. So the east link (r, x)→(r, x+1) carries the pairs with the
    source in row r at a column ≤ x and the destination at a column ≥ x+1; the south
    link (y, x)→(y+1, x) carries the pairs with the source at a row ≤ y (any column)
    and the destination in column x at a row ≥ y+1; west and north mirror them.
    """
    P = np.zeros((rows, cols))
    np.add.at(P, (pr, pc), 1.0)
    C = np.zeros((rows, cols))
    np.add.at(C, (cr, cc), 1.0)
    p_row_cum = np.cumsum(P, axis=1)  # [r, x]: P in row r with col <= x
    p_row_tot = p_row_cum[:, -1:]
    c_cols = C.sum(axis=0)
    c_col_le = np.cumsum(c_cols)  # C with col <= x
    c_col_ge = c_col_le[-1] - c_col_le + c_cols  # C with col >= x
    east = p_row_cum[:, :-1] * c_col_ge[None, 1:]
    west = (p_row_tot - p_row_cum[:, :-1]) * c_col_le[None, :-1]
    p_rows_le = np.cumsum(P.sum(axis=1))  # P with row <= y
    c_cum0 = np.cumsum(C, axis=0)  # [y, x]: C in column x with row <= y
    south = p_rows_le[:-1, None] * (c_cols[None, :] - c_cum0[:-1, :])
    north = (p_rows_le[-1] - p_rows_le[:-1, None]) * c_cum0[:-1, :]
    return np.concatenate([east.ravel(), west.ravel(), south.ravel(), north.ravel()])


def max_hops(pr: np.ndarray, pc: np.ndarray, cr: np.ndarray, cc: np.ndarray) -> int:
    """Largest Manhattan distance between a tile of P and a tile of C."""
    best = 0
    for s1, s2 in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        a = s1 * pr + s2 * pc
        b = s1 * cr + s2 * cc
        best = max(best, int(a.max() - b.min()))
    return best


def port_matrices(rows: int, cols: int, tr: np.ndarray, tc: np.ndarray,
                  ports: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
    """Per tile (in the order of ``tr``/``tc``): mesh link loads of one byte from its
    nearest DRAM port (first in ``ports`` on ties) to the tile, of one byte back, and
    its hops to DRAM (links to the port + 1 for the controller link).
    """
    m = len(tr)
    L = n_links(rows, cols)
    m_in = np.zeros((m, L))
    m_out = np.zeros((m, L))
    hops = np.zeros(m, dtype=np.int64)
    pts = np.array(ports, dtype=np.int64).reshape(-1, 2)
    for t in range(m):
        d = np.abs(pts[:, 0] - tr[t]) + np.abs(pts[:, 1] - tc[t])
        k = int(np.argmin(d))
        a, b = int(pts[k, 0]), int(pts[k, 1])
        m_in[t] = flatten(xy_link_loads(rows, cols, a, b, tr[t], tc[t], 1.0))
        m_out[t] = flatten(xy_link_loads(rows, cols, tr[t], tc[t], a, b, 1.0))
        hops[t] = int(d[k]) + 1
    return m_in, m_out, hops
