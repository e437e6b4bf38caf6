"""Bounds and pruned options of the chiplet-grid CP-SAT and MILP models."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chipsched.problems.region_split import (
    ChipletInstance,
    ChipletSolution,
    TransferModel,
    combine,
)
from chipsched.problems.region_split.objectives import aggregate

from .common import EPS


@dataclass(frozen=True)
class ChipletOptions:
    """The options (segment i..j, count m, stage time c) a CP-SAT/MILP model chooses from,
    with the bounds used to prune them."""

    i: np.ndarray
    j: np.ndarray
    m: np.ndarray
    c: np.ndarray
    ub: float
    ub_solution: tuple[tuple[tuple[int, int], ...], tuple[int, ...]]
    lb_period: float
    lb: float  # a proven lower bound on the objective
    total: int  # options before pruning

    def __len__(self) -> int:
        return len(self.i)


def period_lower_bound(inst: ChipletInstance, table: np.ndarray) -> float:
    """A proven lower bound on the period of every solution (seconds).

    Two arguments, the larger wins: (a) the region holding item p has a stage time at
    least that of the cheapest segment containing p on any count; (b) with m_r
    sub-chiplets a stage of time ≥ D_r occupies m_r·D_r chiplet-seconds per period, so
    M·P ≥ Σ_p min_m m·D_p(m).
    """
    n, M = inst.n_items, inst.chiplets
    best = table.min(axis=2)  # (i, j)
    suffix_min = np.minimum.accumulate(best[:, ::-1], axis=1)[:, ::-1]  # min over j' ≥ j
    lb_a = max(float(suffix_min[:p + 1, p].min()) for p in range(n))
    g = inst.group_time
    lb_b = float((g * np.arange(1, M + 1)[None, :]).min(axis=1).sum() / M)
    return max(lb_a, lb_b)


#: what the full-space bound gives up to rounding: the bound is scaled by 1 − this so
#: that the floating-point sums of the stage times can never dip below it
FULL_SPACE_MARGIN = 1e-9


def _held_stage_bounds(g: np.ndarray, w: np.ndarray, c_slope: np.ndarray, t_slope: float,
                       floor: float) -> float:
    """max over items p of the least time of any stage holding p (seconds, a bound).

    For p on m sub-chiplets with C's per-byte slope β_C below T's β_T the stage S ∋ p
    takes ≥ Σ_S D(m) + β_C·in(S) + β_T·sent(S) = Σ_{q∈S} (D_q(m) + β_C·out_q) +
    (β_T − β_C)·sent(S): a minimum s–t cut (q on the source side = in S; q → t costs
    the first term, every edge q → v leaving S the second; p tied to s). Convexity is
    dropped, so every set containing p is a candidate. With β_C ≥ β_T the least such
    set is {p} alone: D_p(m) + β_T·out_p. Capacities are floored to integers (a cut on
    floored capacities is never above the true one). Items whose {p}-alone value is at
    most the best bound so far cannot raise it and are skipped.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    n, M = g.shape
    out = w.sum(axis=1)
    alone = g + t_slope * out[:, None]  # (n, M): S = {p}, everything sent
    cut_counts = [m for m in range(M) if c_slope[m] < t_slope]
    best = floor
    us, vs = np.nonzero(w)
    for p in np.argsort(-alone.min(axis=1)):
        if alone[p].min() <= best:
            break  # sorted: no later item can raise the bound
        value = float(alone[p].min())
        for m in cut_counts:
            node = g[:, m] + c_slope[m] * out
            edge = (t_slope - c_slope[m]) * w[us, vs]
            scale = 2.0 ** 30 / max(float(node.sum() + edge.sum()), 1e-300)
            s, t = n, n + 1
            rows = np.concatenate([us, np.arange(n), [s]])
            cols = np.concatenate([vs, np.full(n, t), [p]])
            cap = np.concatenate([np.floor(edge * scale), np.floor(node * scale),
                                  [2 ** 30]]).astype(np.int32)
            graph = csr_matrix((cap, (rows, cols)), shape=(n + 2, n + 2))
            value = min(value, maximum_flow(graph, s, t).flow_value / scale)
            if value <= best:
                break
        best = max(best, value)
    return best


def full_space_bound(inst: ChipletInstance) -> float:
    """A proven lower bound on the objective over *every* convex partition (seconds).

    The relaxation drops the partition itself and keeps, per item and per edge, the
    cheapest way any stage could hold it. Stage r on m_r sub-chiplets takes
    D_r + C(m_r, in_r) + T(sent_r) with D additive over its items, and C(m, ·), T
    zero at 0 and affine with a non-negative fixed term above it (the instance's
    :class:`TransferModel`); every edge is either inside one stage (C) or sent by one
    (T). Charging each edge to its producer p, on p's stage's count m it costs at
    least β(m)·w, β(m) = min(C's per-byte slope on m, T's). Hence, with
    e_p(m) = D_p(m) + β(m)·out_p (out_p: p's outgoing bytes):

    * Σ of the stage times ≥ Σ_p min_m e_p(m)  (cost, latency);
    * the period ≥ the least time of any stage holding item p, for every p: at least
      min_m [D_p(m) + min(C(m, out_p), T(out_p))] (p's outgoing bytes split between C
      and T; two such affine pieces sum to their least at an end), and at least a
      minimum cut per item and count (:func:`_held_stage_bounds`); and M·P ≥ Σ_r m_r·t_r ≥
      Σ_p min_m m·e_p(m); the larger bounds the period;
    * R·max ≥ both the Σ bound and the period bound (sync_latency).

    Unlike :func:`period_lower_bound`, nothing here follows the item order, so it holds
    for the DP over ideals' space too — the bound the fall-back of ``dp`` reports for
    DAGs with too many ideals. With a transfer model of another class only the compute
    terms are used (its shape is unknown).
    """
    g = np.asarray(inst.group_time, dtype=float)  # (n, M): D_p(m)
    n, M = g.shape
    w = np.asarray(inst.edge_bytes, dtype=float)
    tr = inst.transfer
    counts = np.arange(1, M + 1)
    kind = aggregate(inst.objective)
    affine = type(tr) is TransferModel and float(w.sum()) > 0
    # per item p and count m: D_p(m) + the cheapest per-byte way to move p's outgoing
    # bytes on m (inside the stage, C's slope, or sent, T's slope)
    per_item = g
    if affine:
        probe = 1e6  # slopes of affine pieces: any two positive volumes give them
        c_slope = (np.asarray(tr.within(counts, 2 * probe), dtype=float) -
                   np.asarray(tr.within(counts, probe), dtype=float)) / probe
        t_slope = (float(tr.between(2 * probe)) - float(tr.between(probe))) / probe
        per_item = g + np.maximum(0.0, np.minimum(c_slope, t_slope))[None, :] * \
            w.sum(axis=1)[:, None]
    total = float(per_item.min(axis=1).sum())
    value = total
    if kind != "sum":
        work = float((per_item * counts[None, :]).min(axis=1).sum()) / M
        held = g
        if affine:  # p's outgoing bytes split between C and T: least at an end
            out = w.sum(axis=1)
            held = g + np.minimum(np.asarray(tr.within(counts[None, :], out[:, None])),
                                  np.asarray(tr.between(out))[:, None])
        period = max(work, float(held.min(axis=1).max()) if n else 0.0)
        if affine:
            period = _held_stage_bounds(g, w, c_slope, t_slope, period)
        value = period if kind == "max" else max(period, total)
    return value * (1 - FULL_SPACE_MARGIN)


def fewest_chiplets(table: np.ndarray, P: float, M: int, regions: int | None
                    ) -> tuple[list[tuple[int, int]], list[int]] | None:
    """A cut with every stage ≤ P using the fewest sub-chiplets (a primal heuristic).

    Shortest path over positions, segment weight = the fewest sub-chiplets that bring
    its stage to ≤ P; with ``regions`` the path is limited to that many segments (one
    more dimension). Returns None when even the fewest exceed M.
    """
    n = table.shape[0]
    le = table <= P
    has = le.any(axis=2)
    w = np.where(has, le.argmax(axis=2) + 1, np.inf)  # (i, j) fewest count
    R = 1 if regions is None else regions
    G = np.full((R + 1, n + 1), np.inf)
    G[0, 0] = 0.0
    arg = np.full((R + 1, n + 1), -1, dtype=np.int64)
    for k in range(1, n + 1):
        if regions is None:
            cand = G[0, :k] + w[:k, k - 1]
            i = int(np.argmin(cand))
            G[0, k], arg[0, k] = cand[i], i
        else:
            cand = G[:-1, :k] + w[None, :k, k - 1]  # (R, k)
            i = np.argmin(cand, axis=1)
            G[1:, k] = cand[np.arange(R), i]
            arg[1:, k] = i
    if regions is None:
        r, used = 0, G[0, n]
    else:
        r = int(np.argmin(G[1:, n])) + 1
        used = G[r, n]
    if not used <= M:
        return None
    regs, cnts, k = [], [], n
    while k > 0:
        i = int(arg[r, k])
        regs.append((i, k - 1))
        cnts.append(int(w[i, k - 1]))
        k = i
        r = r if regions is None else r - 1
    return regs[::-1], cnts[::-1]


def _period_bisection(table: np.ndarray, levels: np.ndarray, M: int, regions: int | None
                      ) -> list[tuple[list[tuple[int, int]], list[int]]]:
    """Feasible cuts found by bisecting the period target over ``levels`` (sorted stage
    times) with :func:`fewest_chiplets` as the test (primal heuristic for the UB)."""
    out = []
    lo, hi = 0, len(levels) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        g = fewest_chiplets(table, float(levels[mid]), M, regions)
        if g is None:
            lo = mid + 1
        else:
            out.append(g)
            hi = mid - 1
    return out


def best_counts(table: np.ndarray, regions: Sequence[tuple[int, int]], M: int, objective: str
                ) -> list[int] | None:
    """The best sub-chiplet counts for a fixed cut (a primal repair step).

    ``H[r, u]`` = best Σ (cost, latency) or max (period, sync_latency: R is fixed) over the first r
    regions using exactly u sub-chiplets; O(R·M²). None if the cut needs more than M.
    """
    R = len(regions)
    if R > M:
        return None
    add = aggregate(objective) == "sum"
    H = np.full((R + 1, M + 1), np.inf)
    H[0, 0] = 0.0
    arg = np.zeros((R + 1, M + 1), dtype=np.int64)
    for r, (a, b) in enumerate(regions):
        c = table[a, b, :]  # (M,) for m = 1..M
        for u in range(1, M + 1):
            prev = H[r, u - 1::-1][:u]  # H[r, u − m] for m = 1..u
            cand = prev + c[:u] if add else np.maximum(prev, c[:u])
            m = int(np.argmin(cand))
            H[r + 1, u], arg[r + 1, u] = cand[m], m + 1
    u = int(np.argmin(H[R]))
    if not np.isfinite(H[R, u]):
        return None
    counts = []
    for r in range(R, 0, -1):
        m = int(arg[r, u])
        counts.append(m)
        u -= m
    return counts[::-1]


def _shortest(seg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shortest paths over positions with segment weights ``seg[i, j]``: prefix costs
    ``pre[k]`` (items 0..k−1), suffix costs ``suf[k]`` (items k..n−1), and the argmin
    start of the last segment of every prefix."""
    n = seg.shape[0]
    pre = np.full(n + 1, np.inf)
    pre[0] = 0.0
    arg = np.zeros(n + 1, dtype=np.int64)
    for k in range(1, n + 1):
        cand = pre[:k] + seg[:k, k - 1]
        arg[k] = int(np.argmin(cand))
        pre[k] = cand[arg[k]]
    suf = np.full(n + 1, np.inf)
    suf[n] = 0.0
    for k in range(n - 1, -1, -1):
        suf[k] = np.min(seg[k, k:] + suf[k + 1:])
    return pre, suf, arg


def lagrangian_cost(table: np.ndarray, M: int, iters: int = 40
                    ) -> tuple[float, float, list[tuple[list[tuple[int, int]], list[int]]]]:
    """Lagrangian bound of the additive cost with the sub-chiplet budget dualized.

    For λ ≥ 0, LB(λ) = min over cuts of Σ (c + λ·m) − λ·M ≤ the optimum (the region
    limit is dropped too, which only lowers it). LB is concave in λ: maximized by
    bisection on its subgradient M − Σ m. Returns (best LB, its λ, the paths met that
    fit the budget — feasible solutions).
    """
    n = table.shape[0]
    ms = np.arange(1, M + 1)[None, None, :]
    fin = np.isfinite(table)

    def path(lam: float):
        val = np.where(fin, table + lam * ms, np.inf)
        k_best = np.argmin(val, axis=2)
        seg = np.take_along_axis(val, k_best[:, :, None], axis=2)[:, :, 0]
        pre, _, arg = _shortest(seg)
        regs, cnts, k = [], [], n
        while k > 0:
            i = int(arg[k])
            regs.append((i, k - 1))
            cnts.append(int(k_best[i, k - 1]) + 1)
            k = i
        return float(pre[n] - lam * M), regs[::-1], cnts[::-1]

    lb0, regs, cnts = path(0.0)
    cuts = [regs]
    if sum(cnts) <= M:
        return lb0, 0.0, [(regs, cnts)]
    lo, hi = 0.0, float(np.max(table[fin]))
    best = (lb0, 0.0)
    for _ in range(iters):
        lam = 0.5 * (lo + hi)
        v, regs, cnts = path(lam)
        cuts.append(regs)
        if v > best[0]:
            best = (v, lam)
        if sum(cnts) <= M:
            hi = lam
        else:
            lo = lam
    feas = []  # every cut met, with its best counts (feasible solutions)
    for regs in {tuple(c) for c in cuts}:
        c = best_counts(table, regs, M, "cost")
        if c is not None:
            feas.append((list(regs), c))
    return best[0], best[1], feas


def chiplet_options(inst: ChipletInstance, table: np.ndarray,
                    warm: ChipletSolution | None = None) -> ChipletOptions:
    """Prune the (i, j, m) options; every rule keeps at least one optimal solution.

    1. Pareto in m: keep m only if c[i, j, m] < c[i, j, m'] for every m' < m (a smaller
       count with no larger time serves every objective at least as well).
    2. UB: with a feasible solution of objective value UB (the best of: one region; the
       cuts met by a bisection on the period target; the Lagrangian paths that fit;
       the warm start), no kept stage may exceed UB — nor UB/2 unless the segment is the
       whole sequence (then R ≥ 2), nor UB/3 for an inner segment (R ≥ 3), for latency.
    3. period/latency: with LB ≤ every solution's period, a count larger than the
       fewest reaching c ≤ LB is dominated (that stage stays ≤ LB ≤ the period).
    4. cost: Lagrangian reduced-cost fixing — drop an option if the cheapest cut through
       it under the prices c + λ·m, minus λ·M, exceeds UB.
    """
    n, M = inst.n_items, inst.chiplets
    Rmax = inst.region_limit
    obj = inst.objective.name
    kind = aggregate(obj)  # sum (cost, latency), max (period), count_max (sync_latency)
    fin = np.isfinite(table)
    run = np.minimum.accumulate(np.where(fin, table, np.inf), axis=2)
    prev = np.concatenate([np.full((n, n, 1), np.inf), run[:, :, :-1]], axis=2)
    keep = fin & (table < prev)
    cands: list[tuple[list[tuple[int, int]], list[int]]] = []
    cands.append(([(0, n - 1)], [int(np.argmin(table[0, n - 1])) + 1]))
    limit = Rmax if (kind == "count_max" or Rmax < min(n, M)) else None
    cands += _period_bisection(table, np.unique(table[keep]), M, limit)
    lam = 0.0
    lb_cost = 0.0
    if kind in ("sum", "count_max"):
        lb_cost, lam, feas = lagrangian_cost(table, M)
        cands += [f for f in feas if len(f[0]) <= Rmax]
    if warm is not None and len(warm.regions) <= Rmax and \
            sum(warm.counts) <= M and len(warm.regions) == len(warm.counts):
        cands.append((list(warm.regions), list(warm.counts)))
    # repair: the best counts for every candidate's cut
    for regs, _ in list(cands):
        c = best_counts(table, regs, M, obj)
        if c is not None:
            cands.append((list(regs), c))
    best_val, best = math.inf, cands[0]
    for regs, cnts in cands:
        v = combine(obj, [table[a, b, m - 1] for (a, b), m in zip(regs, cnts, strict=True)])
        if v < best_val:
            best_val, best = v, (regs, cnts)
    ub = best_val
    keep &= table <= ub * (1 + EPS)
    lb = period_lower_bound(inst, table)
    if kind in ("max", "count_max"):
        le = (table <= lb) & fin
        mmin = np.where(le.any(axis=2), le.argmax(axis=2), M)  # 0-based index
        keep &= np.arange(M)[None, None, :] <= mmin[:, :, None]
    if kind == "count_max":
        ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        rmin = 1 + (ii > 0) + (jj < n - 1)
        keep &= table <= (ub / rmin)[:, :, None] * (1 + EPS)
    if kind in ("sum", "count_max"):
        # R·max ≥ Σ, so the cost's Lagrangian fixing holds for sync_latency too
        ms = np.arange(1, M + 1)[None, None, :]
        val = np.where(fin, table + lam * ms, np.inf)
        pre, suf, _ = _shortest(val.min(axis=2))
        bound = pre[:n, None, None] + val + suf[None, 1:, None] - lam * M
        keep &= bound <= ub * (1 + EPS)
    obj_lb = {"sum": lb_cost, "max": lb, "count_max": max(lb, lb_cost)}[kind]
    ii, jj, mm = np.nonzero(keep)
    regs, cnts = best
    return ChipletOptions(ii, jj, mm + 1, table[ii, jj, mm], float(ub),
                          (tuple(regs), tuple(cnts)), float(lb), float(obj_lb),
                          int(fin.sum()))


def _index_options(opts: ChipletOptions) -> dict[tuple[int, int, int], int]:
    return {(int(a), int(b), int(m)): s for s, (a, b, m) in
            enumerate(zip(opts.i, opts.j, opts.m, strict=True))}


def start_values(opts: ChipletOptions, warm: ChipletSolution | None) -> list[int] | None:
    """Option indices of the best known solution (warm start if it maps, else the UB)."""
    idx = _index_options(opts)
    tries = [opts.ub_solution]
    if warm is not None:
        tries.insert(0, (warm.regions, warm.counts))
    for regs, cnts in tries:
        if len(regs) != len(cnts):
            continue
        sel = [idx.get((a, b, m)) for (a, b), m in zip(regs, cnts, strict=True)]
        if all(s is not None for s in sel):
            return sel  # type: ignore[return-value]
    return None
