"""Seed 004 steps 6–7 (placement of the neuron groups on the mesh) and placement baselines.

Every function places the ``G`` groups of a quotient graph ``Q`` (vertex = group, edge
weight = synapses between the groups) and returns ``group_core[g]`` (row-major core id).
Hop-weighted traffic of a placement = Σ over Q's edges of w·Manhattan distance.

Source: seed 004 (``docs/sources.md``) § 82–89 (recursive-bisection placement, force-directed
refinement). Choices where the document is silent are marked [ours] and listed in
``docs/core_assignment.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numba as nb
import numpy as np

from chipsched.budget import Budget, BudgetExhausted
from chipsched.errors import InputError
from chipsched.neurongraph import NeuronGraph

from .multilevel import STARTS, greedy_bisection

#: Share of the groups with the largest force visited per iteration (§ 87: "5 %").
TOP_FRACTION = 0.05
#: Iteration cap of the force-directed refinement (§ 89 names one; its value is ours).
MAX_ITER = 100


@nb.njit(cache=True)
def _traffic(qptr, qidx, qw, group_core, cols):  # pragma: no cover - numba
    t = 0
    for g in range(qptr.shape[0] - 1):
        rg, cg = group_core[g] // cols, group_core[g] % cols
        for j in range(qptr[g], qptr[g + 1]):
            h = qidx[j]
            if h > g:
                rh, ch = group_core[h] // cols, group_core[h] % cols
                t += qw[j] * (abs(rg - rh) + abs(cg - ch))
    return t


def placement_traffic(q: NeuronGraph, group_core: np.ndarray, cols: int) -> int:
    """Σ w·hops of a placement of the groups of ``q`` (its own arithmetic, independent
    of the evaluator, so that the face's consistency check means something)."""
    return int(_traffic(q.indptr, q.indices, q.weights,
                        np.ascontiguousarray(group_core, dtype=np.int64), cols))


def check_fits(n_groups: int, rows: int, cols: int) -> None:
    """Raise the one-line error for 'fewer cores than parts'."""
    if n_groups > rows * cols:
        raise InputError("cores", f"the partition has {n_groups} parts but the "
                         f"{rows}×{cols} array has only {rows * cols} cores",
                         "use a larger array (chip neuro-RxC) or a larger capacity "
                         "(neuro-RxC-kCAP)")


def fit_to_cores(graph: Any, group: np.ndarray, n_groups: int, capacity: int,
                 cores: int) -> tuple[np.ndarray, int, dict[str, int]]:
    """Make a partition with more groups than cores fit the array [ours; issue 11]: the
    lightest group is dissolved — each of its vertices (largest first) to the group it
    is most connected to among those with room (ties: the fullest that fits) — until
    ``cores`` groups remain; if no group can be dissolved, every vertex is repacked
    first-fit decreasing into ``cores`` groups. Fails (one line) only when the total
    size exceeds cores × capacity, a vertex exceeds a core, or the repacking fails.
    ``graph``: a :class:`NeuronGraph` or an on-disk reader — only its ``sizes`` and the
    rows of the dissolved groups' vertices (``read_rows``) are read. Returns (group, G,
    stats); unchanged when G ≤ cores."""
    if n_groups <= cores:
        return group, n_groups, {}
    total = int(graph.sizes.sum())
    if total > cores * capacity:
        raise InputError("cores", f"{total:,} neurons do not fit {cores} cores of "
                         f"{capacity}", "use a larger array (chip neuro-RxC) or a larger "
                         "capacity (neuro-RxC-kCAP)")
    if int(graph.sizes.max()) > capacity:
        raise InputError("cores", f"a vertex of size {int(graph.sizes.max())} exceeds the "
                         f"core capacity {capacity}", "use a larger capacity")
    g = np.array(group, dtype=np.int64, copy=True)
    load = np.bincount(g, weights=graph.sizes, minlength=n_groups).astype(np.int64)
    alive = np.ones(n_groups, dtype=bool)
    merged = 0
    stuck: set[int] = set()
    while alive.sum() > cores:
        cands = [k for k in np.argsort(load, kind="stable") if alive[k] and k not in stuck]
        if not cands:
            break
        k = int(cands[0])
        verts = np.flatnonzero(g == k)
        verts = verts[np.argsort(-graph.sizes[verts], kind="stable")]
        ptr, idx, wts = graph.read_rows(verts)
        new_load = load.copy()
        moved: list[tuple[int, int]] = []
        ok = True
        for i, v in enumerate(verts):
            conn: dict[int, int] = {}
            for j in range(ptr[i], ptr[i + 1]):
                t = int(g[idx[j]])
                if t != k:
                    conn[t] = conn.get(t, 0) + int(wts[j])
            room = [t for t in np.flatnonzero(alive) if t != k and
                    new_load[t] + graph.sizes[v] <= capacity]
            if not room:
                ok = False
                break
            t = max(room, key=lambda t: (conn.get(int(t), 0), new_load[t]))
            new_load[t] += graph.sizes[v]
            moved.append((int(v), int(t)))
        if not ok:
            stuck.add(k)
            continue
        for v, t in moved:
            g[v] = t
        load = new_load
        load[k] = 0
        alive[k] = False
        merged += 1
    repacked = 0
    if alive.sum() > cores:  # fragmentation: first-fit decreasing over all vertices
        order = np.argsort(-graph.sizes, kind="stable")
        bins = np.zeros(cores, dtype=np.int64)
        for v in order:
            t = int(np.argmax(bins + graph.sizes[v] <= capacity))
            if bins[t] + graph.sizes[v] > capacity:
                raise InputError("cores", f"could not pack {total:,} neurons into {cores} "
                                 f"cores of {capacity} (bin packing)",
                                 "use a larger array or capacity")
            bins[t] += graph.sizes[v]
            g[v] = t
        repacked = 1
    _, g = np.unique(g, return_inverse=True)
    g = g.astype(np.int64)
    return g, int(g.max()) + 1, {"groups_dissolved": merged, "repacked": repacked,
                                 "groups_before_fit": int(n_groups)}


# ---------------------------------------------------------------------------------------
# step 6: recursive-bisection placement


def target_rectangle(n_groups: int, rows: int, cols: int) -> tuple[int, int]:
    """Seed 004 § 83: a rectangle of the mesh (anchored at core (0, 0)) with at least as
    many cores as groups; the spare cores are marked unusable. Which rectangle is ours:
    the smallest perimeter h + w, then the fewest spare cores, then the squarest."""
    check_fits(n_groups, rows, cols)
    best = None
    for h in range(1, rows + 1):
        w = -(-n_groups // h)
        if w > cols:
            continue
        key = (h + w, h * w - n_groups, abs(h - w), h)
        if best is None or key < best[0]:
            best = (key, h, w)
    assert best is not None
    return best[1], best[2]


def usable_cores(n_groups: int, rows: int, cols: int) -> np.ndarray:
    """Boolean ``rows × cols`` mask of the target area's usable cores: the rectangle of
    :func:`target_rectangle` minus its last spare cores in row-major order [ours]."""
    h, w = target_rectangle(n_groups, rows, cols)
    mask = np.zeros((rows, cols), bool)
    ids = np.arange(h * w)[:n_groups]
    mask[ids // w, ids % w] = True
    return mask


def place_recursive_bisection(q: NeuronGraph, rows: int, cols: int, seed: int = 0,
                              starts: int = STARTS, bisector: object = None) -> np.ndarray:
    """Seed 004 step 6 (§ 84): cut the target area across its longer side at the half,
    bisect the groups with the step-3 algorithm so that each half has as many groups as
    its sub-area has usable cores (a sub-area of w//2 columns or h//2 rows gets the
    selected half), recurse until one group ↔ one core."""
    G = q.n
    mask = usable_cores(G, rows, cols)
    rng = np.random.default_rng(seed)
    h, w = target_rectangle(G, rows, cols)
    group_core = np.full(G, -1, np.int64)
    loc = np.full(G, -1, np.int64)
    stack = [((0, 0, h, w), np.arange(G, dtype=np.int64))]
    while stack:
        (r0, c0, hh, ww), groups = stack.pop()
        sub = mask[r0:r0 + hh, c0:c0 + ww]
        count = int(sub.sum())
        if count != groups.shape[0]:  # pragma: no cover - invariant
            raise AssertionError("placement area and group count differ")
        if count == 0:
            continue
        if count == 1:
            r, c = np.argwhere(sub)[0]
            group_core[groups[0]] = (r0 + r) * cols + c0 + c
            continue
        if ww >= hh:
            a = (r0, c0, hh, ww // 2)
            b = (r0, c0 + ww // 2, hh, ww - ww // 2)
        else:
            a = (r0, c0, hh // 2, ww)
            b = (r0 + hh // 2, c0, hh - hh // 2, ww)
        na = int(mask[a[0]:a[0] + a[2], a[1]:a[1] + a[3]].sum())
        if na == 0:
            stack.append((b, groups))
            continue
        if na == count:
            stack.append((a, groups))
            continue
        if bisector is None:
            sel, _ = greedy_bisection(q, groups, rng, starts, target_count=na, loc=loc)
        else:
            sel, _ = bisector(q, groups, rng, loc, na)
        stack.append((b, groups[~sel]))
        stack.append((a, groups[sel]))
    return group_core


# ---------------------------------------------------------------------------------------
# step 7: force-directed refinement


@nb.njit(cache=True)
def _force_directed(qptr, qidx, qw, group_core, rows, cols, top_fraction, max_iter,
                    cost_kind):  # pragma: no cover - numba
    """Seed 004 step 7 (§ 87–89). Force on group g: F_g = Σ_edges w·(p_h − p_g) (the
    document's force multiplied by the edge weight). Each iteration sorts the groups by
    |F|, visits the top ``top_fraction``; for each, the candidate partners are the
    groups in the axis-parallel box between g and the rounded weighted centre of its
    neighbours p_g + F_g/W_g ("in the direction of its force" [ours]); the swap cost is
    |F_g'| − |F_g| + |F_h'| − |F_h| (cost_kind 0, the document) or the exact change of the
    hop-weighted traffic (cost_kind 1, the improved variant); the cheapest swap is made
    if its cost is negative. Stops when an iteration makes no swap or after max_iter."""
    G = qptr.shape[0] - 1
    at = np.full(rows * cols, -1, np.int64)
    pr = np.empty(G, np.float64)
    pc = np.empty(G, np.float64)
    for g in range(G):
        at[group_core[g]] = g
        pr[g] = group_core[g] // cols
        pc[g] = group_core[g] % cols
    W = np.zeros(G, np.float64)
    Sr = np.zeros(G, np.float64)
    Sc = np.zeros(G, np.float64)
    for g in range(G):
        for j in range(qptr[g], qptr[g + 1]):
            h = qidx[j]
            W[g] += qw[j]
            Sr[g] += qw[j] * pr[h]
            Sc[g] += qw[j] * pc[h]
    wg = np.zeros(G, np.float64)
    mag = np.empty(G, np.float64)
    top = max(1, int(math.ceil(top_fraction * G)))
    swaps = 0
    iterations = 0
    for _ in range(max_iter):
        iterations += 1
        for g in range(G):
            fr = Sr[g] - W[g] * pr[g]
            fc = Sc[g] - W[g] * pc[g]
            mag[g] = -math.sqrt(fr * fr + fc * fc)
        order = np.argsort(mag, kind="mergesort")
        made = 0
        for oi in range(min(top, G)):
            g = order[oi]
            if W[g] == 0:
                continue
            fr = Sr[g] - W[g] * pr[g]
            fc = Sc[g] - W[g] * pc[g]
            tr = int(round(pr[g] + fr / W[g]))
            tc = int(round(pc[g] + fc / W[g]))
            tr = min(max(tr, 0), rows - 1)
            tc = min(max(tc, 0), cols - 1)
            r_lo, r_hi = min(int(pr[g]), tr), max(int(pr[g]), tr)
            c_lo, c_hi = min(int(pc[g]), tc), max(int(pc[g]), tc)
            if r_lo == r_hi and c_lo == c_hi:
                continue
            for j in range(qptr[g], qptr[g + 1]):
                wg[qidx[j]] = qw[j]
            fg = math.sqrt(fr * fr + fc * fc)
            best_cost = -1e-9
            best_h = -1
            for r in range(r_lo, r_hi + 1):
                for c in range(c_lo, c_hi + 1):
                    h = at[r * cols + c]
                    if h < 0 or h == g:
                        continue
                    w_gh = wg[h]
                    if cost_kind == 0:
                        hr = Sr[h] - W[h] * pr[h]
                        hc = Sc[h] - W[h] * pc[h]
                        fh = math.sqrt(hr * hr + hc * hc)
                        # after the swap g sits at p_h, h at p_g
                        gr2 = Sr[g] - w_gh * pr[h] + w_gh * pr[g] - W[g] * pr[h]
                        gc2 = Sc[g] - w_gh * pc[h] + w_gh * pc[g] - W[g] * pc[h]
                        hr2 = Sr[h] - w_gh * pr[g] + w_gh * pr[h] - W[h] * pr[g]
                        hc2 = Sc[h] - w_gh * pc[g] + w_gh * pc[h] - W[h] * pc[g]
                        cost = (math.sqrt(gr2 * gr2 + gc2 * gc2) - fg
                                + math.sqrt(hr2 * hr2 + hc2 * hc2) - fh)
                    else:
                        cost = 0.0
                        for q in (g, h):
                            o = h if q == g else g
                            for j in range(qptr[q], qptr[q + 1]):
                                x = qidx[j]
                                if x == o:
                                    continue
                                old = abs(pr[q] - pr[x]) + abs(pc[q] - pc[x])
                                new = abs(pr[o] - pr[x]) + abs(pc[o] - pc[x])
                                cost += qw[j] * (new - old)
                    if cost < best_cost:
                        best_cost = cost
                        best_h = h
            for j in range(qptr[g], qptr[g + 1]):
                wg[qidx[j]] = 0.0
            if best_h < 0:
                continue
            h = best_h
            gr_old, gc_old, hr_old, hc_old = pr[g], pc[g], pr[h], pc[h]
            # move g to h's place, then h to g's old place, updating neighbour sums
            for j in range(qptr[g], qptr[g + 1]):
                x = qidx[j]
                Sr[x] += qw[j] * (hr_old - gr_old)
                Sc[x] += qw[j] * (hc_old - gc_old)
            for j in range(qptr[h], qptr[h + 1]):
                x = qidx[j]
                Sr[x] += qw[j] * (gr_old - hr_old)
                Sc[x] += qw[j] * (gc_old - hc_old)
            pr[g], pc[g], pr[h], pc[h] = hr_old, hc_old, gr_old, gc_old
            cg_core = group_core[g]
            group_core[g] = group_core[h]
            group_core[h] = cg_core
            at[group_core[g]] = g
            at[group_core[h]] = h
            made += 1
        swaps += made
        if made == 0:
            break
    return swaps, iterations


#: force-directed iterations per kernel call between two polls of the budget (an
#: iteration's state is the placement alone, so the chunks add up to one run)
FORCE_CHUNK = 8


def force_directed(q: NeuronGraph, group_core: np.ndarray, rows: int, cols: int,
                   top_fraction: float = TOP_FRACTION, max_iter: int = MAX_ITER,
                   cost: str = "force", budget: Budget | None = None
                   ) -> tuple[np.ndarray, dict]:
    """Seed 004 step 7: force-directed swaps (see :func:`_force_directed`); returns the new
    placement and ``{"swaps", "iterations"}``. ``cost="force"`` is the document's swap
    cost (change of the two force magnitudes); ``cost="traffic"`` (improved variant)
    swaps only when the hop-weighted traffic drops. Stops early once ``budget`` is over
    (polled every :data:`FORCE_CHUNK` iterations)."""
    if not 0 < top_fraction <= 1:
        raise InputError("top_fraction", f"must be in (0, 1], got {top_fraction}")
    gc = np.array(group_core, dtype=np.int64)
    w = q.weights.astype(np.float64)
    swaps = its = 0
    while its < max_iter:
        if budget is not None and budget.exhausted():
            break
        chunk = min(FORCE_CHUNK, int(max_iter) - its)
        sw, it = _force_directed(q.indptr, q.indices, w, gc, rows, cols,
                                 float(top_fraction), chunk, 0 if cost == "force" else 1)
        swaps += int(sw)
        its += int(it)
        if it < chunk or sw == 0:  # an iteration without a swap ended it
            break
    return gc, {"swaps": swaps, "iterations": its}


# ---------------------------------------------------------------------------------------
# baselines and peers


def place_row_major(n_groups: int, rows: int, cols: int) -> np.ndarray:
    """Group g on core g (row-major over the whole mesh)."""
    check_fits(n_groups, rows, cols)
    return np.arange(n_groups, dtype=np.int64)


def place_random(n_groups: int, rows: int, cols: int, seed: int = 0) -> np.ndarray:
    """Groups on distinct random cores of the mesh."""
    check_fits(n_groups, rows, cols)
    return np.random.default_rng(seed).permutation(rows * cols)[:n_groups].astype(np.int64)


def manhattan_matrix(rows: int, cols: int) -> np.ndarray:
    r, c = np.divmod(np.arange(rows * cols), cols)
    return np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])


def place_scipy_qap(q: NeuronGraph, rows: int, cols: int, method: str = "faq", seed: int = 0,
                    max_cores: int = 2048, restarts: int = 1,
                    budget: Budget | None = None) -> np.ndarray:
    """scipy ``quadratic_assignment``: ``faq`` (Vogelstein et al. 2015, Frank–Wolfe on
    the doubly-stochastic relaxation, barycenter start) or ``2opt`` (pairwise exchange
    from a random permutation). The G groups are padded with zero-flow dummies to the N
    cores of the mesh; flows = Q's weights, distances = Manhattan. ``restarts`` > 1
    adds runs from random doubly-stochastic starts (FAQ) or random permutations (2-opt)
    and keeps the best, stopping early once ``budget`` is over; scipy cannot poll it, so
    each run goes through :meth:`~chipsched.budget.Budget.call` (a run the budget ends
    is lost; without any finished run the budget's
    :class:`~chipsched.budget.BudgetExhausted` ends the method)."""
    from scipy.optimize import quadratic_assignment

    G, N = q.n, rows * cols
    check_fits(G, rows, cols)
    if N > max_cores:
        raise InputError("scipy quadratic_assignment", f"{N} cores is too large for the "
                         f"dense O(N³) method (limit {max_cores})", "use a smaller mesh")
    if method not in ("faq", "2opt"):
        raise InputError("method", f"unknown scipy QAP method {method!r}", "use faq or 2opt")
    flow = np.zeros((N, N))
    flow[:G, :G] = q.dense_weights()
    dist = manhattan_matrix(rows, cols).astype(float)
    rng = np.random.default_rng(seed)
    best = None

    def run(opts: dict) -> tuple[Any, np.random.Generator]:
        # the generator comes back too: in a forked child its draws are the child's
        return quadratic_assignment(flow, dist, method=method, options=opts), opts["rng"]

    for k in range(max(1, restarts)):
        if k and budget is not None and budget.exhausted():
            break
        opts: dict = {"rng": rng}
        if k and method == "faq":
            opts["P0"] = "randomized"
        try:
            res, rng = run(opts) if budget is None else \
                budget.call(f"running scipy's QAP ({method})", run, opts)
        except BudgetExhausted:
            if best is None:
                raise
            break
        if best is None or res.fun < best.fun:
            best = res
    return np.asarray(best.col_ind[:G], dtype=np.int64)
