"""QAPLIB instances on a grid (``n``, the flow and distance matrices; the distance matrix
must be a rows×cols Manhattan grid, whole or partial) and their ``.sln`` solutions."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.neurongraph import NeuronGraph


def _grid_shape(d: np.ndarray) -> tuple[int, int] | None:
    n = d.shape[0]
    for r in range(1, n + 1):
        if n % r:
            continue
        c = n // r
        rr, cc = np.divmod(np.arange(n), c)
        man = np.abs(rr[:, None] - rr[None, :]) + np.abs(cc[:, None] - cc[None, :])
        if np.array_equal(man, d):
            return r, c
    return None


def _partial_grid(d: np.ndarray) -> tuple[int, int] | None:
    """(rows, cols) when ``d`` is the Manhattan distance of the first n cells (row-major)
    of a larger grid with cols < n (nug14 on 3×5, scr15 on 4×4, …)."""
    n = d.shape[0]
    for c in range(2, n):
        rr, cc = np.divmod(np.arange(n), c)
        man = np.abs(rr[:, None] - rr[None, :]) + np.abs(cc[:, None] - cc[None, :])
        if n % c and np.array_equal(man, d):
            return -(-n // c), c
    return None


def read_qaplib(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A QAPLIB ``.dat`` file whose distance matrix is the Manhattan distance of a
    row-major grid (nug*, scr*, …) as a placement instance: one vertex of size 1 per
    facility, capacity 1, the grid as the core array, edge weight ``a_ij + a_ji`` of the
    flow matrix (so that Σ w·hops over undirected edges equals the QAP objective
    Σ_ij a_ij·d_p(i)p(j)). Returns ``{graph, rows, cols, capacity, name, distance}`` with
    ``distance`` = 'A' or 'B' (which matrix was the grid)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "file not found", "check the path")
    try:
        toks = np.array(p.read_text().split(), dtype=np.int64)
    except (ValueError, OverflowError, UnicodeDecodeError):
        raise InputError(str(p), "not a QAPLIB .dat file (non-integer data)") from None
    if toks.size < 1 or toks[0] < 1 or toks.size != 1 + 2 * int(toks[0]) ** 2:
        raise InputError(str(p), "not a QAPLIB .dat file",
                         "expected n, then two n×n integer matrices")
    n = int(toks[0])
    a = toks[1:1 + n * n].reshape(n, n)
    b = toks[1 + n * n:].reshape(n, n)
    for which, dist, flow in (("A", a, b), ("B", b, a)):
        shape = _grid_shape(dist)
        if shape is not None:
            f = flow + flow.T
            np.fill_diagonal(f, 0)
            if (f < 0).any():
                raise InputError(str(p), "negative flows", "flows must be >= 0")
            iu, ju = np.triu_indices(n, 1)
            graph = NeuronGraph.from_edges(np.ones(n, np.int64), iu, ju, f[iu, ju],
                                           name=p.stem, meta={"source": str(p)})
            return {"graph": graph, "rows": shape[0], "cols": shape[1], "capacity": 1,
                    "name": p.stem, "distance": which}
    for dist in (a, b):
        partial = _partial_grid(dist)
        if partial is not None:
            raise InputError(str(p), f"the distances are those of the first {n} cells of a "
                             f"{partial[0]}×{partial[1]} grid, not a full mesh",
                             "core_assignment places on full R×C meshes only (every core "
                             "usable)")
    raise InputError(str(p), "neither matrix is the Manhattan distance of a grid",
                     "core_assignment reads grid QAPs only (nug*, scr*, …)")


def read_qaplib_solution(path: str | os.PathLike[str]) -> tuple[int, int, np.ndarray]:
    """``(n, optimum, permutation)`` of a QAPLIB ``.sln`` file (permutation 0-based)."""
    toks = Path(path).read_text().split()
    n, opt = int(toks[0]), int(toks[1])
    perm = np.array([int(t) - 1 for t in toks[2:2 + n]], dtype=np.int64)
    return n, opt, perm
