"""Seed 004 steps 2–5: heavy-edge coarsening, greedy bisection, uncoarsening with greedy
refinement, packing into neuron groups. Every step is its own function; the hot loops
are numba kernels (``_…``), the drivers take a ``numpy.random.Generator`` or a seed.

Source: CN patent "一种面向众核架构的神经网络拓扑结构映射方法" (seed 004,
``docs/sources.md``); paragraph numbers below are the document's.
The document's numbers are the defaults: merged size ≤ capacity/15, 4 tries per
coarsening level (the document says 4–8), stop when a level removes < 20 % of the
vertices, 4 random starts per bisection (4–8), bisect until every part fits a core.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from chipsched.budget import Budget
from chipsched.errors import InputError
from chipsched.neurongraph import NeuronGraph

#: The document's numbers (§ 27–29, 34, 70–71, 76).
MERGE_FRACTION = 1 / 15
TRIES = 4
MIN_REDUCTION = 0.20
STARTS = 4
_EPS = 1e-9


# ---------------------------------------------------------------------------------------
# numba kernels


@nb.njit(cache=True)
def _mix(x):  # pragma: no cover - numba
    """splitmix64 finaliser: a deterministic hash for tie-breaking."""
    x = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & \
        np.uint64(0xFFFFFFFFFFFFFFFF)
    x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & \
        np.uint64(0xFFFFFFFFFFFFFFFF)
    return x ^ (x >> np.uint64(31))


@nb.njit(cache=True)
def _heaviest_rows(indptr, indices, weights, v0, seed):  # pragma: no cover - numba
    """For rows v0.. of a CSR (local indptr): the neighbour over the heaviest edge and its
    weight; ties broken by a hash of (seed, v, u) — the document does not say."""
    nv = indptr.shape[0] - 1
    heavy = np.full(nv, -1, np.int64)
    hw = np.zeros(nv, np.int64)
    s = np.uint64(seed)
    for i in range(nv):
        v = v0 + i
        best_w = -1
        best_h = np.uint64(0)
        for j in range(indptr[i], indptr[i + 1]):
            u = indices[j]
            w = weights[j]
            if w < best_w:
                continue
            h = _mix(s ^ (np.uint64(v) * np.uint64(0x100000001B3)) ^ np.uint64(u))
            if w > best_w or h > best_h:
                best_w = w
                best_h = h
                heavy[i] = u
        hw[i] = best_w if best_w > 0 else 0
    return heavy, hw


@nb.njit(cache=True)
def _match_try(order, heavy, heavy_w, sizes, limit, mate):  # pragma: no cover - numba
    """One marking pass (§ 67–69): visit vertices in ``order``; pair v with the end of its
    heaviest edge if neither is marked and the merged size ≤ ``limit``. Returns the
    total weight of the paired edges (the reduction of the total edge weight)."""
    red = 0
    for i in range(order.shape[0]):
        v = order[i]
        if mate[v] >= 0:
            continue
        u = heavy[v]
        if u < 0 or mate[u] >= 0 or u == v:
            continue
        if sizes[u] + sizes[v] <= limit:
            mate[v] = u
            mate[u] = v
            red += heavy_w[v]
    return red


@nb.njit(cache=True)
def _match_eligible(order, indptr, indices, weights, sizes, limit, mate, seed, part
                    ):  # pragma: no cover - numba
    """Standard heavy-edge matching (METIS's HEM): pair v with the unmatched neighbour of
    the heaviest edge among those that fit and lie in v's part (``part``: empty when
    unconstrained; a partition for a V-cycle), used by the improved variant only."""
    red = 0
    s = np.uint64(seed)
    constrained = part.shape[0] > 0
    for i in range(order.shape[0]):
        v = order[i]
        if mate[v] >= 0:
            continue
        best = -1
        best_w = -1
        best_h = np.uint64(0)
        for j in range(indptr[v], indptr[v + 1]):
            u = indices[j]
            if mate[u] >= 0 or sizes[u] + sizes[v] > limit:
                continue
            if constrained and part[u] != part[v]:
                continue
            w = weights[j]
            if w < best_w:
                continue
            h = _mix(s ^ (np.uint64(v) * np.uint64(0x100000001B3)) ^ np.uint64(u))
            if w > best_w or h > best_h:
                best, best_w, best_h = u, w, h
        if best >= 0:
            mate[v] = best
            mate[best] = v
            red += best_w
    return red


@nb.njit(cache=True)
def _cmap_from_mate(mate):  # pragma: no cover - numba
    """Coarse ids in increasing order of each pair's smaller vertex."""
    n = mate.shape[0]
    cmap = np.full(n, -1, np.int64)
    k = 0
    for v in range(n):
        if cmap[v] >= 0:
            continue
        cmap[v] = k
        if mate[v] >= 0:
            cmap[mate[v]] = k
        k += 1
    return cmap, k


@nb.njit(cache=True)
def _heap_push(hk, hs, hv, size, key, seq, v):  # pragma: no cover - numba
    i = size
    hk[i] = key
    hs[i] = seq
    hv[i] = v
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] < hk[i] or (hk[p] == hk[i] and hs[p] <= hs[i]):
            break
        hk[p], hk[i] = hk[i], hk[p]
        hs[p], hs[i] = hs[i], hs[p]
        hv[p], hv[i] = hv[i], hv[p]
        i = p
    return size + 1


@nb.njit(cache=True)
def _heap_pop(hk, hs, hv, size):  # pragma: no cover - numba
    key, v = hk[0], hv[0]
    size -= 1
    hk[0], hs[0], hv[0] = hk[size], hs[size], hv[size]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= size:
            break
        b = a + 1
        c = a
        if b < size and (hk[b] < hk[a] or (hk[b] == hk[a] and hs[b] < hs[a])):
            c = b
        if hk[i] < hk[c] or (hk[i] == hk[c] and hs[i] <= hs[c]):
            break
        hk[c], hk[i] = hk[i], hk[c]
        hs[c], hs[i] = hs[i], hs[c]
        hv[c], hv[i] = hv[i], hv[c]
        i = c
    return key, v, size


@nb.njit(cache=True)
def _pop_fresh(hk, hs, hv, size, sel, cost):  # pragma: no cover - numba
    """The cheapest unselected vertex of a growth heap whose key is current (stale keys
    of vertices whose cost changed are dropped: lazy deletion), or −1; and the new
    heap size."""
    while size > 0:
        key, cand, size = _heap_pop(hk, hs, hv, size)
        if sel[cand] == 0 and key == cost[cand]:
            return cand, size
    return -1, size


@nb.njit(cache=True)
def _grow(indptr, indices, weights, sizes, verts, loc, start, target_count, target_size,
          sel):  # pragma: no cover - numba
    """Greedy graph-growing bisection of the vertex set ``verts`` (§ 74–75).

    ``loc[v]`` is v's index in ``verts`` (−1 outside). Selection cost of an unselected
    vertex = (weight of its edges to unselected vertices) − (weight to selected ones),
    kept in a lazy min-priority queue (binary heap, ties first-in first-out). Starting
    from ``start``, the cheapest vertex moves to the selected set until it holds
    ``target_count`` vertices (or, with ``target_size`` ≥ 0, until its size would exceed
    ``target_size`` — the improved variant). Fills ``sel`` (1 = selected) and returns the
    cut weight (tracked: selecting v changes the cut by its cost)."""
    m = verts.shape[0]
    cost = np.zeros(m, np.int64)
    nnz = 0
    for i in range(m):
        v = verts[i]
        sel[i] = 0
        for j in range(indptr[v], indptr[v + 1]):
            if loc[indices[j]] >= 0:
                cost[i] += weights[j]
                nnz += 1
    cap = m + nnz + 1
    hk = np.empty(cap, np.int64)
    hs = np.empty(cap, np.int64)
    hv = np.empty(cap, np.int64)
    size = 0
    seq = 0
    for i in range(m):
        if i != start:
            size = _heap_push(hk, hs, hv, size, cost[i], seq, i)
            seq += 1
    cut = 0
    count = 0
    total = 0
    cur = start
    while True:
        # select cur
        sel[cur] = 1
        count += 1
        total += sizes[verts[cur]]
        cut += cost[cur]
        v = verts[cur]
        for j in range(indptr[v], indptr[v + 1]):
            li = loc[indices[j]]
            if li >= 0 and sel[li] == 0:
                cost[li] -= 2 * weights[j]
                size = _heap_push(hk, hs, hv, size, cost[li], seq, li)
                seq += 1
        if target_size < 0:
            if count >= target_count:
                break
        elif total >= target_size:
            break
        nxt, size = _pop_fresh(hk, hs, hv, size, sel, cost)
        if nxt < 0:
            break
        if target_size >= 0 and total + sizes[verts[nxt]] > target_size and count > 0:
            # size-targeted growth: stop before overshooting (improved variant)
            break
        cur = nxt
    return cut


@nb.njit(cache=True)
def _refine_pass(indptr, indices, weights, rows, verts, sizes, part, load, capacity,
                 nparts):  # pragma: no cover - numba
    """One greedy refinement pass (§ 79–80): for each vertex v = ``verts[i]`` in turn
    (its edges in CSR row ``rows[i]``: the whole graph's rows with ``rows = verts``, or
    a batch read from disk) of part i, W_k = weight of its edges into part k, moving v to
    k costs c_ik = W_i − W_k; if the lowest cost is negative, move v to that part if its
    capacity holds, else try the next-cheapest negative one. Costs are computed when v
    is visited, so they reflect every earlier move. Returns (change of the cut, moves)."""
    acc = np.zeros(nparts, np.int64)
    mark = np.full(nparts, -1, np.int64)
    touched = np.empty(nparts, np.int64)
    cand_c = np.empty(nparts, np.int64)
    cand_k = np.empty(nparts, np.int64)
    delta = 0
    moves = 0
    for oi in range(verts.shape[0]):
        v = verts[oi]
        r = rows[oi]
        i = part[v]
        t = 0
        for j in range(indptr[r], indptr[r + 1]):
            p = part[indices[j]]
            if mark[p] != v:
                mark[p] = v
                acc[p] = 0
                touched[t] = p
                t += 1
            acc[p] += weights[j]
        wi = acc[i] if mark[i] == v else 0
        nc = 0
        for q in range(t):
            k = touched[q]
            if k == i:
                continue
            c = wi - acc[k]
            if c < 0:
                # insertion sort by (cost, part)
                pos = nc
                while pos > 0 and (cand_c[pos - 1] > c or
                                   (cand_c[pos - 1] == c and cand_k[pos - 1] > k)):
                    cand_c[pos] = cand_c[pos - 1]
                    cand_k[pos] = cand_k[pos - 1]
                    pos -= 1
                cand_c[pos] = c
                cand_k[pos] = k
                nc += 1
        for q in range(nc):
            k = cand_k[q]
            if load[k] + sizes[v] <= capacity:
                part[v] = k
                load[i] -= sizes[v]
                load[k] += sizes[v]
                delta += cand_c[q]
                moves += 1
                break
    return delta, moves


# ---------------------------------------------------------------------------------------
# step 2: coarsening


@dataclass(frozen=True, eq=False)
class Level:
    """One coarsening level: ``cmap[v]`` = coarse vertex of fine vertex v; ``graph`` is
    the coarse graph; ``reduction`` the edge weight removed (the weight of the merged
    pairs' edges); ``tries`` the reduction of every try."""

    graph: NeuronGraph
    cmap: np.ndarray
    reduction: int
    tries: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """The graphs from the original (``graphs[0]``) to the coarsest, and the maps."""

    graphs: tuple[NeuronGraph, ...]
    cmaps: tuple[np.ndarray, ...]
    stats: tuple[dict, ...] = field(default=())

    @property
    def coarsest(self) -> NeuronGraph:
        return self.graphs[-1]

    def project(self, part: np.ndarray, level: int) -> np.ndarray:
        """Labels of level ``level`` → labels of level ``level - 1``."""
        return part[self.cmaps[level - 1]]


def heaviest_neighbors(graph: NeuronGraph, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """For every vertex, the neighbour over its heaviest edge and that edge's weight
    (−1, 0 for an isolated vertex). Source: seed 004 § 67 ("for each vertex, find its
    heaviest edge"); ties are broken by a hash of ``seed`` (the document is silent)."""
    return _heaviest_rows(graph.indptr, graph.indices, graph.weights, 0,
                          int(seed) & (2**63 - 1))


def match_heavy_edges(heavy: np.ndarray, heavy_w: np.ndarray, sizes: np.ndarray,
                      limit: float, order: np.ndarray) -> tuple[np.ndarray, int]:
    """One marking pass of seed 004 § 67–69 in the given vertex order: ``mate[v]`` (−1 if
    unpaired) and the reduction of the total edge weight. A pair is marked when
    neither end is marked yet and the merged size ≤ ``limit`` (capacity/15)."""
    mate = np.full(sizes.shape[0], -1, np.int64)
    red = _match_try(np.ascontiguousarray(order, dtype=np.int64), heavy, heavy_w, sizes,
                     math.floor(limit + _EPS), mate)
    return mate, int(red)


def coarsen_level(graph: NeuronGraph, capacity: int, rng: np.random.Generator,
                  tries: int = TRIES, merge_fraction: float = MERGE_FRACTION,
                  matching: str = "heaviest", part: np.ndarray | None = None
                  ) -> Level | None:
    """One coarsening level (seed 004 § 67–70): ``tries`` marking passes in random orders,
    keep the one with the largest reduction of the total edge weight, merge its pairs.
    Returns ``None`` when no pair can be merged.

    ``matching="heaviest"`` is the document's rule (only each vertex's heaviest edge is
    considered); ``"eligible"`` (improved variant) takes the heaviest edge among the
    unmarked neighbours that fit, as METIS's heavy-edge matching does; with ``part``
    (``"eligible"`` only) only vertices of the same part are paired (a V-cycle keeps the
    partition representable on every level)."""
    if tries < 1:
        raise InputError("tries", f"must be >= 1, got {tries}")
    limit = math.floor(capacity * merge_fraction + _EPS)
    seed = int(rng.integers(2**62))
    heavy, heavy_w = (heaviest_neighbors(graph, seed) if matching == "heaviest"
                      else (None, None))
    if part is not None and matching != "eligible":
        raise ValueError("a partition constraint needs matching='eligible'")
    within = (np.zeros(0, np.int64) if part is None
              else np.ascontiguousarray(part, dtype=np.int64))
    best, best_red, reds = None, -1, []
    for _ in range(tries):
        order = rng.permutation(graph.n)
        if matching == "heaviest":
            mate, red = match_heavy_edges(heavy, heavy_w, graph.sizes, limit, order)
        else:
            mate = np.full(graph.n, -1, np.int64)
            red = int(_match_eligible(order, graph.indptr, graph.indices, graph.weights,
                                      graph.sizes, limit, mate, int(rng.integers(2**62)),
                                      within))
        reds.append(red)
        if red > best_red:
            best, best_red = mate, red
    cmap, nc = _cmap_from_mate(best)
    if nc == graph.n:
        return None
    coarse = graph.contract(cmap, nc, name=f"{graph.name}/c")
    return Level(coarse, cmap, best_red, tuple(reds))


def coarsen(graph: NeuronGraph, capacity: int, seed: int = 0, tries: int = TRIES,
            merge_fraction: float = MERGE_FRACTION, min_reduction: float = MIN_REDUCTION,
            max_levels: int = 64, matching: str = "heaviest", progress: object = None
            ) -> Hierarchy:
    """Seed 004 step 2 (§ 66–71): coarsen level after level until a level reduces the
    vertex count by less than ``min_reduction`` (20 %); that last level is kept."""
    rng = np.random.default_rng(seed)
    graphs, cmaps, stats = [graph], [], []
    g = graph
    for _ in range(max_levels):
        lvl = coarsen_level(g, capacity, rng, tries, merge_fraction, matching)
        if lvl is None:
            break
        graphs.append(lvl.graph)
        cmaps.append(lvl.cmap)
        stats.append({"n": lvl.graph.n, "m": lvl.graph.m, "reduction": lvl.reduction,
                      "tries": lvl.tries})
        if callable(progress):
            progress(f"coarsen level {len(cmaps)}: {lvl.graph.n:,} vertices")
        shrink = 1 - lvl.graph.n / g.n
        g = lvl.graph
        if shrink < min_reduction:
            break
    return Hierarchy(tuple(graphs), tuple(cmaps), tuple(stats))


# ---------------------------------------------------------------------------------------
# step 3: initial partition by recursive greedy bisection


def greedy_bisection(graph: NeuronGraph, vertices: np.ndarray, rng: np.random.Generator,
                     starts: int = STARTS, target_count: int | None = None,
                     target_size: int | None = None, loc: np.ndarray | None = None
                     ) -> tuple[np.ndarray, int]:
    """Seed 004 step 3 (§ 74–76) on the subgraph induced by ``vertices``: graph growing
    from ``starts`` random start vertices with the selection-cost min-priority queue,
    until the selected set holds ``target_count`` vertices (default half, rounded down);
    keep the cheapest cut. Returns (selected mask over ``vertices``, cut weight).

    ``target_size`` (improved variant) grows by size instead of count."""
    verts = np.ascontiguousarray(vertices, dtype=np.int64)
    m = verts.shape[0]
    if m < 2:
        raise InputError("greedy_bisection", "needs at least two vertices")
    own = loc is None
    if own:
        loc = np.full(graph.n, -1, np.int64)
    loc[verts] = np.arange(m)
    tc = m // 2 if target_count is None else int(target_count)
    ts = -1 if target_size is None else int(target_size)
    tc = min(max(tc, 1), m - 1)
    k = min(starts, m)
    cands = rng.choice(m, size=k, replace=False)
    best_sel, best_cut = None, None
    sel = np.zeros(m, np.int8)
    for s in cands:
        cut = _grow(graph.indptr, graph.indices, graph.weights, graph.sizes, verts, loc,
                    int(s), tc, ts, sel)
        if best_cut is None or cut < best_cut:
            best_cut, best_sel = int(cut), sel.astype(bool)
    loc[verts] = -1
    return best_sel, best_cut


def split_depth_first(n: int, split: Callable[[np.ndarray], tuple[np.ndarray, int] | None]
                      ) -> tuple[np.ndarray, int]:
    """Recursive bisection of the vertices ``0..n-1``, the driver shared by
    :func:`recursive_bisection` (seed 004 § 76) and the improved variant's
    :func:`.improved.size_bisection`.

    ``split(vertices)`` returns ``None`` when ``vertices`` is a part, else ``(mask, cut)``:
    the selected side (recursed on first) and the weight of the edges the split cuts. The
    sets live as segments of one permutation (memory O(n) at any depth), and a stack
    visits them depth first, so parts are numbered in depth-first order (siblings get
    consecutive ids) and ``split`` is called in that order — which fixes how a shared
    random generator is consumed. Returns (part of every vertex, total cut weight)."""
    perm = np.arange(n, dtype=np.int64)
    stack = [(0, n)]
    part = np.empty(n, np.int64)
    nparts = 0
    total_cut = 0
    while stack:
        lo, hi = stack.pop()
        # a copy: perm[lo:hi] is rewritten below while seg[~mask] is still needed
        seg = perm[lo:hi].copy()
        got = split(seg)
        if got is None:
            part[seg] = nparts
            nparts += 1
            continue
        mask, cut = got
        total_cut += cut
        k = lo + int(mask.sum())
        perm[lo:k] = seg[mask]
        perm[k:hi] = seg[~mask]
        stack.append((k, hi))
        stack.append((lo, k))
    return part, total_cut


def recursive_bisection(graph: NeuronGraph, capacity: int, seed: int = 0, starts: int = STARTS,
                        bisector: object = None) -> tuple[np.ndarray, int]:
    """Seed 004 step 3–4 (§ 76, "recurse on any half whose total size exceeds a core's
    capacity"): parts numbered in depth-first order (siblings get consecutive ids).
    ``bisector(graph, vertices, rng, loc) -> (mask, cut)`` replaces the greedy bisection
    (e.g. Kernighan–Lin). Returns (part of every vertex, cut weight)."""
    rng = np.random.default_rng(seed)
    bis = bisector or (lambda g, vs, r, loc: greedy_bisection(g, vs, r, starts, loc=loc))
    loc = np.full(graph.n, -1, np.int64)

    def split(seg: np.ndarray) -> tuple[np.ndarray, int] | None:
        if int(graph.sizes[seg].sum()) <= capacity:
            return None
        return bis(graph, seg, rng, loc)

    return split_depth_first(graph.n, split)


# ---------------------------------------------------------------------------------------
# step 4: uncoarsening with refinement


def refine(graph: NeuronGraph, part: np.ndarray, nparts: int, capacity: int,
           rng: np.random.Generator, passes: int = 1) -> tuple[int, int]:
    """Seed 004 step 4's refinement (§ 79–80), ``passes`` passes in random orders, in
    place on ``part``. Returns (change of the cut weight, moves)."""
    load = np.bincount(part, weights=graph.sizes, minlength=nparts).astype(np.int64)
    delta = moves = 0
    for _ in range(passes):
        order = rng.permutation(graph.n)
        d, mv = _refine_pass(graph.indptr, graph.indices, graph.weights, order, order,
                             graph.sizes, part, load, capacity, nparts)
        delta += int(d)
        moves += int(mv)
        if mv == 0:
            break
    return delta, moves


def uncoarsen(hier: Hierarchy, coarse_part: np.ndarray, nparts: int, capacity: int,
              seed: int = 0, passes: int = 1, refine_finest: bool = False,
              budget: Budget | None = None) -> tuple[np.ndarray, int, list[int]]:
    """Seed 004 step 4 (§ 78–81): undo the levels one at a time, refining before each
    projection ("在每次反向应用之前使用优化算法"). The document refines before every
    projection, so the original graph itself is not refined (``refine_finest=True``
    adds that pass — the improved variant). Once ``budget`` is over the remaining levels
    are projected without refinement (the partition stays valid: projection keeps the
    loads). Returns (parts of the original vertices, total change of the cut, moves per
    level from the coarsest)."""
    rng = np.random.default_rng(seed)
    part = np.array(coarse_part, dtype=np.int64)
    delta = 0
    moves = []
    for lvl in range(len(hier.graphs) - 1, 0, -1):
        if budget is None or not budget.exhausted():
            d, mv = refine(hier.graphs[lvl], part, nparts, capacity, rng, passes)
            delta += d
            moves.append(mv)
        part = hier.project(part, lvl)
    if refine_finest and (budget is None or not budget.exhausted()):
        d, mv = refine(hier.graphs[0], part, nparts, capacity, rng, passes)
        delta += d
        moves.append(mv)
    return part, delta, moves


# ---------------------------------------------------------------------------------------
# step 5: neuron groups


def pack_groups(part: np.ndarray) -> tuple[np.ndarray, int]:
    """Seed 004 step 5 (§ 55): the parts as neuron groups 0..G-1 (empty parts dropped,
    order kept)."""
    uniq, inv = np.unique(part, return_inverse=True)
    return inv.astype(np.int64), int(uniq.shape[0])


@dataclass(frozen=True, eq=False)
class PartitionResult:
    """Output of steps 2–5: ``group[v]`` for the original vertices, G, the cut weight
    (tracked through the steps), and what each step did."""

    group: np.ndarray
    n_groups: int
    cut: int
    stats: dict


def seed004_partition(graph: NeuronGraph, capacity: int, seed: int = 0, tries: int = TRIES,
                      merge_fraction: float = MERGE_FRACTION,
                      min_reduction: float = MIN_REDUCTION, starts: int = STARTS,
                      passes: int = 1, bisector: object = None, progress: object = None,
                      budget: Budget | None = None) -> PartitionResult:
    """Seed 004 steps 2–5 with the document's defaults: coarsen, recursive greedy
    bisection of the coarsest graph, uncoarsen with refinement (skipped on the levels
    left once ``budget`` is over), pack into groups."""
    if graph.n == 0:
        return PartitionResult(np.zeros(0, np.int64), 0, 0, {})
    ss = np.random.SeedSequence(seed).generate_state(3)
    hier = coarsen(graph, capacity, int(ss[0]), tries, merge_fraction, min_reduction,
                   progress=progress)
    part, cut = recursive_bisection(hier.coarsest, capacity, int(ss[1]), starts, bisector)
    nparts = int(part.max()) + 1
    if callable(progress):
        progress(f"initial partition: {nparts} parts")
    fine, delta, moves = uncoarsen(hier, part, nparts, capacity, int(ss[2]), passes,
                                   budget=budget)
    group, g = pack_groups(fine)
    return PartitionResult(group, g, int(cut + delta), {
        "levels": len(hier.cmaps), "coarsest_vertices": hier.coarsest.n,
        "initial_parts": nparts, "initial_cut": int(cut), "refine_moves": moves,
        "coarsening": list(hier.stats)})
