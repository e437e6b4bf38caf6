"""k-way Fiduccia–Mattheyses refinement under a hard part capacity, and the balancing
step that makes a partition fit before it — the refinement of ``seed004-plus`` on every
level of its multilevel partition (issue 11).

Sources: Fiduccia & Mattheyses, "A linear-time heuristic for improving network
partitions", DAC 1982 (moves of highest gain, negative ones allowed, vertices locked,
rolled back to the best prefix); the k-way form with one best target part per vertex as
in Sanders & Schulz, "Engineering multilevel graph partitioning algorithms" (KaHIP),
ESA 2011, and Karypis & Kumar's k-way refinement (METIS, JPDC 1998). A part's load
never exceeds the capacity during a pass, so every prefix of the moves is a feasible
partition.

The priority queue is an addressable binary max-heap over vertices (O(log n) per
update, one entry per vertex), not the bucket array of the unit-weight FM: our edge
weights are synapse counts, so gains range over the weighted degrees (up to 10⁵ on the
CNN neuron graphs) and a bucket array would be mostly empty.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from chipsched.neurongraph import NeuronGraph

_NONE = np.iinfo(np.int64).min


@nb.njit(cache=True)
def _best_target(v, ptr, idx, w, sizes, part, load, cap, acc, mark, touched):  # pragma: no cover
    """The adjacent part (other than v's) with the heaviest connection to v that has room
    for v (ties: the lighter part), and the gain of moving v there (cut decrease).
    Returns (target, gain); target −1 when no adjacent part has room."""
    own = part[v]
    t = 0
    for j in range(ptr[v], ptr[v + 1]):
        p = part[idx[j]]
        if mark[p] != v:
            mark[p] = v
            acc[p] = 0
            touched[t] = p
            t += 1
        acc[p] += w[j]
    w_own = acc[own] if mark[own] == v else 0
    best = -1
    best_w = -1
    for q in range(t):
        p = touched[q]
        if p == own or load[p] + sizes[v] > cap:
            continue
        if acc[p] > best_w or (acc[p] == best_w and load[p] < load[best]):
            best = p
            best_w = acc[p]
    # the marks are per vertex id: reset so that the next call for v recounts
    for q in range(t):
        mark[touched[q]] = -1
    if best < 0:
        return -1, 0
    return best, best_w - w_own


@nb.njit(cache=True)
def _swap(hk, hv, pos, a, b):  # pragma: no cover - numba
    """Exchange heap slots a and b, keeping ``pos`` (vertex → slot) in step."""
    hk[a], hk[b] = hk[b], hk[a]
    hv[a], hv[b] = hv[b], hv[a]
    pos[hv[a]] = a
    pos[hv[b]] = b


@nb.njit(cache=True)
def _sift_up(hk, hv, pos, i):  # pragma: no cover - numba
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] >= hk[i]:
            break
        _swap(hk, hv, pos, p, i)
        i = p


@nb.njit(cache=True)
def _sift_down(hk, hv, pos, i, size):  # pragma: no cover - numba
    while True:
        a = 2 * i + 1
        if a >= size:
            break
        c = a
        if a + 1 < size and hk[a + 1] > hk[a]:
            c = a + 1
        if hk[i] >= hk[c]:
            break
        _swap(hk, hv, pos, c, i)
        i = c


@nb.njit(cache=True)
def _heap_set(hk, hv, pos, size, v, key):  # pragma: no cover - numba
    """Insert v with ``key`` or change its key; returns the new size."""
    i = pos[v]
    if i < 0:
        i = size
        hk[i] = key
        hv[i] = v
        pos[v] = i
        _sift_up(hk, hv, pos, i)
        return size + 1
    old = hk[i]
    hk[i] = key
    if key > old:
        _sift_up(hk, hv, pos, i)
    else:
        _sift_down(hk, hv, pos, i, size)
    return size


@nb.njit(cache=True)
def _heap_remove(hk, hv, pos, size, v):  # pragma: no cover - numba
    i = pos[v]
    if i < 0:
        return size
    size -= 1
    pos[v] = -1
    if i == size:
        return size
    hk[i] = hk[size]
    hv[i] = hv[size]
    pos[hv[i]] = i
    _sift_up(hk, hv, pos, i)
    _sift_down(hk, hv, pos, pos[hv[i]], size)
    return size


@nb.njit(cache=True)
def _scratch(n, nparts):  # pragma: no cover - numba
    """Per-part tallies for :func:`_best_target` (acc, mark, touched) and an empty
    addressable heap over n vertices (keys, vertices, slot of each vertex)."""
    return (np.zeros(nparts, np.int64), np.full(nparts, -1, np.int64),
            np.empty(nparts, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
            np.full(n, -1, np.int64))


@nb.njit(cache=True)
def _kway_fm_pass(ptr, idx, w, sizes, part, load, cap, nparts, stall):  # pragma: no cover
    """One k-way FM pass in place on ``part``/``load``: every boundary vertex is queued
    by the gain of its best target with room; the top vertex is moved (negative gains
    too) and locked, its unlocked neighbours re-rated; the pass ends when the queue is
    empty or after ``stall`` moves without a new best cut, and the moves after the best
    prefix are undone. Returns the cut decrease (≥ 0) and the moves kept."""
    n = ptr.shape[0] - 1
    acc, mark, touched, hk, hv, pos = _scratch(n, nparts)
    tgt = np.full(n, -1, np.int64)
    size = 0
    for v in range(n):
        pv = part[v]
        for j in range(ptr[v], ptr[v + 1]):
            if part[idx[j]] != pv:
                t, g = _best_target(v, ptr, idx, w, sizes, part, load, cap, acc, mark,
                                    touched)
                if t >= 0:
                    tgt[v] = t
                    size = _heap_set(hk, hv, pos, size, v, g)
                break
    locked = np.zeros(n, np.bool_)
    moved = np.empty(n, np.int64)
    origin = np.empty(n, np.int64)
    nm = 0
    cur = 0
    best = 0
    best_nm = 0
    while size > 0 and nm - best_nm < stall:
        v = hv[0]
        g = hk[0]
        # loads changed since v was rated: re-rate and move only on a current key
        t, g2 = _best_target(v, ptr, idx, w, sizes, part, load, cap, acc, mark, touched)
        if t < 0:
            size = _heap_remove(hk, hv, pos, size, v)
            continue
        if g2 != g or t != tgt[v]:
            tgt[v] = t
            size = _heap_set(hk, hv, pos, size, v, g2)
            continue
        size = _heap_remove(hk, hv, pos, size, v)
        src = part[v]
        part[v] = t
        load[src] -= sizes[v]
        load[t] += sizes[v]
        locked[v] = True
        moved[nm] = v
        origin[nm] = src
        nm += 1
        cur += g
        if cur > best:
            best = cur
            best_nm = nm
        for j in range(ptr[v], ptr[v + 1]):
            u = idx[j]
            if locked[u]:
                continue
            tu, gu = _best_target(u, ptr, idx, w, sizes, part, load, cap, acc, mark,
                                  touched)
            boundary = False
            pu = part[u]
            for jj in range(ptr[u], ptr[u + 1]):
                if part[idx[jj]] != pu:
                    boundary = True
                    break
            if tu >= 0 and boundary:
                tgt[u] = tu
                size = _heap_set(hk, hv, pos, size, u, gu)
            else:
                size = _heap_remove(hk, hv, pos, size, u)
    for q in range(nm - 1, best_nm - 1, -1):
        v = moved[q]
        load[part[v]] -= sizes[v]
        load[origin[q]] += sizes[v]
        part[v] = origin[q]
    return best, best_nm


@nb.njit(cache=True)
def _balance(ptr, idx, w, sizes, part, load, cap, nparts):  # pragma: no cover - numba
    """Move vertices out of parts above ``cap``: repeatedly the vertex of an overloaded
    part whose move to a part with room loses the least cut weight (an adjacent part if
    one has room, else the lightest part that fits). Returns (cut change, moves,
    still-overloaded parts)."""
    n = ptr.shape[0] - 1
    acc, mark, touched, hk, hv, pos = _scratch(n, nparts)
    size = 0
    for v in range(n):
        # a vertex of size 0 frees nothing: moving it would only add cut
        if load[part[v]] > cap and sizes[v] > 0:
            t, g = _best_target(v, ptr, idx, w, sizes, part, load, cap, acc, mark, touched)
            if t < 0:
                g = -_own_weight(v, ptr, idx, w, part)
            size = _heap_set(hk, hv, pos, size, v, g)
    delta = 0
    moves = 0
    while size > 0:
        v = hv[0]
        g = hk[0]
        src = part[v]
        if load[src] <= cap:
            size = _heap_remove(hk, hv, pos, size, v)
            continue
        t, g2 = _best_target(v, ptr, idx, w, sizes, part, load, cap, acc, mark, touched)
        if t < 0:
            g2 = -_own_weight(v, ptr, idx, w, part)
            lightest = -1
            for p in range(nparts):
                if p != src and load[p] + sizes[v] <= cap and (
                        lightest < 0 or load[p] < load[lightest]):
                    lightest = p
            t = lightest
            if t < 0:
                size = _heap_remove(hk, hv, pos, size, v)
                continue
        if g2 != g:
            size = _heap_set(hk, hv, pos, size, v, g2)
            continue
        size = _heap_remove(hk, hv, pos, size, v)
        part[v] = t
        load[src] -= sizes[v]
        load[t] += sizes[v]
        delta -= g2
        moves += 1
        for j in range(ptr[v], ptr[v + 1]):
            u = idx[j]
            if load[part[u]] > cap and sizes[u] > 0:
                tu, gu = _best_target(u, ptr, idx, w, sizes, part, load, cap, acc, mark,
                                      touched)
                if tu < 0:
                    gu = -_own_weight(u, ptr, idx, w, part)
                size = _heap_set(hk, hv, pos, size, u, gu)
    over = 0
    for p in range(nparts):
        if load[p] > cap:
            over += 1
    return delta, moves, over


@nb.njit(cache=True)
def _own_weight(v, ptr, idx, w, part):  # pragma: no cover - numba
    s = 0
    pv = part[v]
    for j in range(ptr[v], ptr[v + 1]):
        if part[idx[j]] == pv:
            s += w[j]
    return s


def _loads(graph: NeuronGraph, part: np.ndarray, nparts: int) -> np.ndarray:
    """Part loads; labels outside 0..nparts−1 would index past the kernels' arrays."""
    if part.shape != (graph.n,):
        raise ValueError(f"part has {part.shape[0]} entries for {graph.n} vertices")
    if part.size and (part.min() < 0 or part.max() >= nparts):
        raise ValueError(f"part labels must lie in 0..{nparts - 1}")
    return np.bincount(part, weights=graph.sizes, minlength=nparts).astype(np.int64)


def balance(graph: NeuronGraph, part: np.ndarray, nparts: int, capacity: int
            ) -> tuple[int, int, int]:
    """Make every part of ``part`` (in place) fit ``capacity`` by the cheapest moves
    (:func:`_balance`). Returns (change of the cut weight, moves, parts still above the
    capacity — 0 unless no single vertex fits anywhere else)."""
    load = _loads(graph, part, nparts)
    d, mv, over = _balance(graph.indptr, graph.indices, graph.weights, graph.sizes, part,
                           load, int(capacity), int(nparts))
    return int(d), int(mv), int(over)


#: A pass ends after max(100, n / STALL_DIV) moves without a new best (the default).
STALL_DIV = 1000


def kway_fm(graph: NeuronGraph, part: np.ndarray, nparts: int, capacity: int,
            passes: int = 8, stall: int | None = None, min_gain: float = 1e-4,
            cut: int | None = None) -> tuple[int, int]:
    """k-way FM refinement of ``part`` (in place), every part kept within ``capacity``
    (parts already above it may only shrink). Passes repeat until one gains less than
    ``min_gain`` of the cut or after ``passes``; ``stall`` moves without a new best end a
    pass (default max(100, n / ``STALL_DIV``)); ``cut``: the partition's cut weight if the caller
    knows it (else computed). Returns (change of the cut weight ≤ 0, moves kept)."""
    load = _loads(graph, part, nparts)
    st = int(stall if stall is not None else max(100, graph.n // STALL_DIV))
    cut = graph.cut_weight(part) if cut is None else int(cut)
    delta = moves = 0
    for _ in range(passes):
        d, mv = _kway_fm_pass(graph.indptr, graph.indices, graph.weights, graph.sizes,
                              part, load, int(capacity), int(nparts), st)
        delta -= int(d)
        moves += int(mv)
        if d <= min_gain * max(cut, 1):
            break
    return delta, moves
