"""Vertex moves and swaps on the mesh: a mapping-aware refinement [ours; issue 31].

A partition placed on the mesh is refined one neuron at a time with the gain the
objective sees — hop-weighted traffic, Σ w(u, v) · dist(core(u), core(v)) — instead of
the cut: a neuron moves to the core (among its neighbours' cores and the cores next to
its own) that lowers its traffic most and has room; when that core is full, the move
is paired with the best neuron of that core moving back (a swap), if the pair gains.
This is the k-way Fiduccia–Mattheyses idea with the distance-weighted gains of static
mapping (Pellegrini, "Static mapping by dual recursive bipartitioning of process and
architecture graphs", SHPCC 1994, §4), run greedily to a local optimum.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from chipsched.budget import Budget

#: Default passes (most of the gain comes in the first five on lenet5-neurons).
MESH_PASSES = 8
#: A pass that lowers the traffic by less than this share ends the refinement.
MIN_GAIN = 1e-3
#: Largest graph (synapses) seed004-plus refines by default: a pass costs
#: O(synapses × candidate cores × swap partners), 20 s on vgg-cifar-neurons' 1.85 M.
MESH_MAX_EDGES = 3_000_000
#: Neurons per kernel call: the budget is polled between calls.
CHUNK = 1024


@nb.njit(cache=True, inline="always")
def _dist(a, b, cols):  # pragma: no cover - numba
    return abs(a // cols - b // cols) + abs(a % cols - b % cols)


@nb.njit(cache=True)
def _cost_at(v, x, indptr, indices, weights, core, cols):  # pragma: no cover - numba
    c = 0
    for e in range(indptr[v], indptr[v + 1]):
        c += weights[e] * _dist(x, core[indices[e]], cols)
    return c


@nb.njit(cache=True)
def _pair_delta(v, u, indptr, indices, weights, core, cols):  # pragma: no cover - numba
    """Traffic change of swapping the cores of v and u (their shared edge keeps its
    length)."""
    a, b = core[v], core[u]
    d = 0
    for e in range(indptr[v], indptr[v + 1]):
        t = indices[e]
        if t != u:
            d += weights[e] * (_dist(b, core[t], cols) - _dist(a, core[t], cols))
    for e in range(indptr[u], indptr[u + 1]):
        t = indices[e]
        if t != v:
            d += weights[e] * (_dist(a, core[t], cols) - _dist(b, core[t], cols))
    return d


@nb.njit(cache=True)
def _refine(indptr, indices, weights, sizes, core, load, rows, cols, capacity,
            members_ptr, members, order, swap_candidates):  # pragma: no cover
    """One greedy sweep over the neurons of ``order``: (gain, moves, swaps)."""
    n = order.shape[0]
    n_cores = rows * cols
    seen = np.full(n_cores, -1, np.int64)
    cand = np.empty(n_cores, np.int64)
    gained = 0
    moves = 0
    swaps = 0
    for k in range(n):
        v = order[k]
        a = core[v]
        nc = 0
        for e in range(indptr[v], indptr[v + 1]):
            x = core[indices[e]]
            if x != a and seen[x] != v:
                seen[x] = v
                cand[nc] = x
                nc += 1
        r, c = a // cols, a % cols
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            rr, cc = r + dr, c + dc
            if 0 <= rr < rows and 0 <= cc < cols:
                x = rr * cols + cc
                if seen[x] != v:
                    seen[x] = v
                    cand[nc] = x
                    nc += 1
        if nc == 0:
            continue
        here = _cost_at(v, a, indptr, indices, weights, core, cols)
        best_gain = 0
        best_x = -1
        best_u = -1
        for i in range(nc):
            x = cand[i]
            g = here - _cost_at(v, x, indptr, indices, weights, core, cols)
            if g <= 0:
                continue
            if load[x] + sizes[v] <= capacity:
                if g > best_gain:
                    best_gain = g
                    best_x = x
                    best_u = -1
                continue
            # a full core: the best partner of that core to send back (a bounded
            # scan of its neurons)
            lim = min(members_ptr[x + 1] - members_ptr[x], swap_candidates)
            for j in range(lim):
                u = members[members_ptr[x] + j]
                if core[u] != x:
                    continue
                if load[x] - sizes[u] + sizes[v] > capacity or \
                        load[a] - sizes[v] + sizes[u] > capacity:
                    continue
                gg = -_pair_delta(v, u, indptr, indices, weights, core, cols)
                if gg > best_gain:
                    best_gain = gg
                    best_x = x
                    best_u = u
        if best_x < 0:
            continue
        core[v] = best_x
        load[a] -= sizes[v]
        load[best_x] += sizes[v]
        if best_u >= 0:
            core[best_u] = a
            load[best_x] -= sizes[best_u]
            load[a] += sizes[best_u]
            swaps += 1
        else:
            moves += 1
        gained += best_gain
    return gained, moves, swaps


def refine_on_mesh(graph: Any, core: np.ndarray, rows: int, cols: int, capacity: int,
                   seed: int = 0, max_passes: int = MESH_PASSES, swap_candidates: int = 32,
                   min_gain: float = MIN_GAIN, budget: Budget | None = None
                   ) -> tuple[np.ndarray, dict[str, int]]:
    """Greedy vertex moves and swaps that lower the hop-weighted traffic of the mapping
    ``core`` (vertex → row-major core) while every core stays within ``capacity``;
    returns the refined mapping (a copy) and what it did. A swap is tried with the full
    core that attracts the neuron most, its partners the first ``swap_candidates``
    neurons of that core (in a seeded order, refreshed each pass). At most
    ``max_passes`` passes of O(edges · candidate cores); it stops when a pass gains
    less than ``min_gain`` of the traffic, or when the budget is spent (between
    passes)."""
    core = np.ascontiguousarray(core, dtype=np.int64).copy()
    sizes = np.ascontiguousarray(graph.sizes, dtype=np.int64)
    n_cores = rows * cols
    load = np.bincount(core, weights=sizes, minlength=n_cores).astype(np.int64)
    rng = np.random.default_rng(seed)
    stats = {"mesh_gain": 0, "mesh_moves": 0, "mesh_swaps": 0, "mesh_passes": 0}
    weights = np.ascontiguousarray(graph.weights, dtype=np.int64)
    src = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    dst = graph.indices
    traffic = int((weights * (np.abs(core[src] // cols - core[dst] // cols)
                              + np.abs(core[src] % cols - core[dst] % cols))).sum()) // 2
    for _ in range(max_passes):
        if budget is not None and budget.exhausted():
            break
        order = rng.permutation(graph.n).astype(np.int64)
        members = np.argsort(core[order], kind="stable")
        members = order[members].astype(np.int64)
        members_ptr = np.zeros(n_cores + 1, np.int64)
        np.cumsum(np.bincount(core, minlength=n_cores), out=members_ptr[1:])
        gained, stopped = 0, False
        # in chunks, so that a time limit ends a pass on a large graph within a chunk
        for lo in range(0, graph.n, CHUNK):
            if lo and budget is not None and budget.exhausted():
                stopped = True
                break
            g, m, s = _refine(graph.indptr, graph.indices, weights, sizes, core, load,
                              rows, cols, capacity, members_ptr, members,
                              order[lo:lo + CHUNK], swap_candidates)
            gained += int(g)
            stats["mesh_moves"] += int(m)
            stats["mesh_swaps"] += int(s)
        stats["mesh_gain"] += gained
        stats["mesh_passes"] += 1
        traffic -= gained
        if stopped or gained <= min_gain * traffic:
            break
    return core, stats
