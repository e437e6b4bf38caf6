"""Exact methods for region_split: CP-SAT, Pyomo MILP, a dynamic program, brute force.

Chiplet grid (seed 000). The search space: cut the item sequence (pipeline groups
of S in depth order, or layers) into contiguous regions, give each m ≥ 1
sub-chiplets, Σ m ≤ M, at most ``max_regions`` regions. Every model is built over
the table ``c[i, j, m]`` of stage times (:func:`chipsched.problems.region_split.
chiplet_stage_table`) and the objective is Σ c (``cost``), max c (``period``) or
R·max c (``latency``).

* :func:`dp_chiplet` — the dynamic program over (regions, prefix, sub-chiplets used);
  exact for the fixed item order, i.e. for the whole space; no pruning.
* CP-SAT and MILP — a path through the positions 0..n of the sequence: one binary per
  option (segment i..j, count m), flow conservation at every position, the
  sub-chiplet budget and the region limit. Options are pruned first
  (:func:`chiplet_options`) by rules that keep an optimal solution: only counts that
  strictly lower a segment's time (Pareto in m); no segment slower than a known
  solution's objective (UB); for period/latency no more sub-chiplets than needed to
  reach a proven lower bound on the period (LB); for cost, no option whose cheapest
  completion (budget ignored) exceeds the UB.
* brute force — every partition and every count vector, costed by the evaluator's
  direct path (:func:`chipsched.problems.region_split.chiplet_stage`).

Processor chain (seed 001): cut the layers into contiguous sub-models on processors
taken in chain order. CP-SAT and MILP assign every layer to a processor with a
monotone assignment (so every processor holds one contiguous run), the handover
after layer j from p to q is a binary ``x[j,p] ∧ x[j+1,q]``; the DP runs over
(regions, last layer, processor, next processor); brute force enumerates cuts and
processor subsets.

Placement: serpentine by default for every method (seed 000, step 6) — no objective
depends on it, only the d2d metrics. :func:`exact_placement` places a solution's
slots (sub-chiplets) exactly by a core_assignment placement method (a QAP over the
slot flows of :func:`chipsched.problems.region_split.placement_flows`, rounded to
whole bytes), warm-started from serpentine and never worse than it; every chiplet
method reaches it through its ``placement`` parameter
(:func:`chipsched.problems.region_split.with_placement`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyomo.environ as pyo
from ortools.sat.python import cp_model

from chipsched.errors import InputError
from chipsched.problems.region_split import (
    ChipletInstance,
    PlacementFlows,
    SocInstance,
    Solution,
    chiplet_solution,
    chiplet_stage,
    chiplet_stage_table,
    combine,
    evaluate,
    placement_flows,
    serpentine_placement,
    soc_solution,
    soc_stage,
    soc_tables,
    with_placement,
)
from chipsched.result import Status
from chipsched.solvers import (
    MethodOutput,
    SolveOptions,
    enumerate_best,
    register,
    solve_cpsat,
    solve_pyomo,
)

DECISION = "region_split"
SOURCE = "seeds 000/001; exact over tables of segment × count costs"

#: CP-SAT costs are integers: the largest kept option maps to this many units. At 1e10
#: CP-SAT claimed wrong optima (latency, ResNet-50 on 36 sub-chiplets) — large
#: coefficients defeat its LP reasoning; 1e8 keeps the rounding below 1e-7 relative.
CPSAT_RESOLUTION = 1e8
#: MILP costs are scaled so that the upper bound is this number (HiGHS's absolute gap
#: tolerance of 1e-6 is then a relative 1e-12).
MILP_SCALE = 1e6
#: Slack on float comparisons in the pruning rules (relative).
EPS = 1e-9


# ---------------------------------------------------------------------------------------
# The dynamic program (chiplet grid)


def dp_chiplet(table: np.ndarray, M: int, objective: str, max_regions: int | None = None
               ) -> tuple[float, list[tuple[int, int]], list[int]]:
    """Optimal regions and counts over the stage table, by dynamic programming.

    ``F[r, k, u]`` = best value (Σ or max of stage times) of items 0..k−1 cut into r
    regions using exactly u sub-chiplets; ``F[r, k, u] = min over i < k, m ≤ u of
    F[r−1, i, u−m] ⊕ c[i, k−1, m]``. The region count is tracked only when it
    matters (``latency`` = R·max, or a binding ``max_regions``); otherwise r is
    dropped (one layer of F). Exact for the fixed item order.
    """
    n = table.shape[0]
    Rmax = min(n, M, max_regions or n)
    tracked = objective == "latency" or Rmax < min(n, M)
    D = Rmax + 1 if tracked else 1
    add = objective == "cost"
    F = np.full((D, n + 1, M + 1), np.inf)
    F[0, 0, 0] = 0.0
    arg_i = np.full((D, n + 1, M + 1), -1, dtype=np.int64)
    arg_m = np.full((D, n + 1, M + 1), -1, dtype=np.int64)
    src = slice(0, D - 1) if tracked else slice(0, 1)
    dst = slice(1, D) if tracked else slice(0, 1)
    for k in range(1, n + 1):
        for m in range(1, M + 1):
            c = table[:k, k - 1, m - 1]  # (k,)
            A = F[src, :k, :M + 1 - m]  # (D', k, M+1-m)
            cand = A + c[None, :, None] if add else np.maximum(A, c[None, :, None])
            best_i = np.argmin(cand, axis=1)  # (D', M+1-m)
            val = np.take_along_axis(cand, best_i[:, None, :], axis=1)[:, 0, :]
            cur = F[dst, k, m:]
            better = val < cur
            F[dst, k, m:] = np.where(better, val, cur)
            arg_i[dst, k, m:] = np.where(better, best_i, arg_i[dst, k, m:])
            arg_m[dst, k, m:] = np.where(better, m, arg_m[dst, k, m:])
    final = F[:, n, :]  # (D, M+1)
    if tracked:
        rs = np.arange(D)[:, None]
        safe = np.where(np.isfinite(final), final, 0.0)
        score = np.where(np.isfinite(final), rs * safe, np.inf) if objective == "latency" \
            else final.copy()
        score[0] = np.inf
    else:
        score = final
    r, u = np.unravel_index(int(np.argmin(score)), score.shape)
    value = float(score[r, u])
    if not math.isfinite(value):
        raise InputError("instance", "no feasible region split", "check max_regions")
    regions, counts = [], []
    k = n
    while k > 0:
        i, m = int(arg_i[r, k, u]), int(arg_m[r, k, u])
        regions.append((i, k - 1))
        counts.append(m)
        k, u = i, u - m
        r = r - 1 if tracked else r
    return value, regions[::-1], counts[::-1]


# ---------------------------------------------------------------------------------------
# Bounds and options for CP-SAT / MILP (chiplet grid)


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

    ``H[r, u]`` = best Σ (cost) or max (period, latency: R is fixed) over the first r
    regions using exactly u sub-chiplets; O(R·M²). None if the cut needs more than M.
    """
    R = len(regions)
    if R > M:
        return None
    add = objective == "cost"
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
                    warm: Solution | None = None) -> ChipletOptions:
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
    obj = inst.objective
    fin = np.isfinite(table)
    run = np.minimum.accumulate(np.where(fin, table, np.inf), axis=2)
    prev = np.concatenate([np.full((n, n, 1), np.inf), run[:, :, :-1]], axis=2)
    keep = fin & (table < prev)
    cands: list[tuple[list[tuple[int, int]], list[int]]] = []
    cands.append(([(0, n - 1)], [int(np.argmin(table[0, n - 1])) + 1]))
    limit = Rmax if (obj == "latency" or Rmax < min(n, M)) else None
    cands += _period_bisection(table, np.unique(table[keep]), M, limit)
    lam = 0.0
    lb_cost = 0.0
    if obj in ("cost", "latency"):
        lb_cost, lam, feas = lagrangian_cost(table, M)
        cands += [f for f in feas if len(f[0]) <= Rmax]
    if warm is not None and warm.counts and len(warm.regions) <= Rmax and \
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
    if obj in ("period", "latency"):
        le = (table <= lb) & fin
        mmin = np.where(le.any(axis=2), le.argmax(axis=2), M)  # 0-based index
        keep &= np.arange(M)[None, None, :] <= mmin[:, :, None]
    if obj == "latency":
        ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        rmin = 1 + (ii > 0) + (jj < n - 1)
        keep &= table <= (ub / rmin)[:, :, None] * (1 + EPS)
    if obj in ("cost", "latency"):
        # R·max ≥ Σ, so the cost's Lagrangian fixing holds for the latency too
        ms = np.arange(1, M + 1)[None, None, :]
        val = np.where(fin, table + lam * ms, np.inf)
        pre, suf, _ = _shortest(val.min(axis=2))
        bound = pre[:n, None, None] + val + suf[None, 1:, None] - lam * M
        keep &= bound <= ub * (1 + EPS)
    obj_lb = {"cost": lb_cost, "period": lb, "latency": max(lb, lb_cost)}[obj]
    ii, jj, mm = np.nonzero(keep)
    regs, cnts = best
    return ChipletOptions(ii, jj, mm + 1, table[ii, jj, mm], float(ub),
                          (tuple(regs), tuple(cnts)), float(lb), float(obj_lb),
                          int(fin.sum()))


def _index_options(opts: ChipletOptions) -> dict[tuple[int, int, int], int]:
    return {(int(a), int(b), int(m)): s for s, (a, b, m) in
            enumerate(zip(opts.i, opts.j, opts.m, strict=True))}


def _start_values(opts: ChipletOptions, warm: Solution | None) -> list[int] | None:
    """Option indices of the best known solution (warm start if it maps, else the UB)."""
    idx = _index_options(opts)
    tries = [opts.ub_solution]
    if warm is not None and warm.counts:
        tries.insert(0, (warm.regions, warm.counts))
    for regs, cnts in tries:
        if len(regs) != len(cnts):
            continue
        sel = [idx.get((a, b, m)) for (a, b), m in zip(regs, cnts, strict=True)]
        if all(s is not None for s in sel):
            return sel  # type: ignore[return-value]
    return None


# ---------------------------------------------------------------------------------------
# CP-SAT (chiplet grid)


def cpsat_chiplet(inst: ChipletInstance, options: SolveOptions,
                  table: np.ndarray | None = None) -> MethodOutput:
    """CP-SAT over the pruned options: a path 0 → n through the positions."""
    table = chiplet_stage_table(inst) if table is None else table
    warm = options.warm_start if isinstance(options.warm_start, Solution) else None
    opts = chiplet_options(inst, table, warm)
    n, M = inst.n_items, inst.chiplets
    scale = CPSAT_RESOLUTION / max(float(opts.c.max()), 1e-300)
    ci = np.floor(opts.c * scale).astype(np.int64)
    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{s}") for s in range(len(opts))]
    starts: list[list[int]] = [[] for _ in range(n)]
    ends: list[list[int]] = [[] for _ in range(n)]
    for s in range(len(opts)):
        starts[int(opts.i[s])].append(s)
        ends[int(opts.j[s])].append(s)
    model.add(sum(x[s] for s in starts[0]) == 1)
    for k in range(1, n):
        if starts[k] or ends[k - 1]:
            model.add(sum(x[s] for s in starts[k]) == sum(x[s] for s in ends[k - 1]))
    model.add(sum(x[s] for s in ends[n - 1]) == 1)
    model.add(sum(int(opts.m[s]) * x[s] for s in range(len(opts))) <= M)
    Rmax = inst.region_limit
    model.add(sum(x) <= Rmax)
    top = int(ci.max())
    total = sum(int(ci[s]) * x[s] for s in range(len(opts)))
    if inst.objective == "cost":
        model.minimize(total)
    else:
        lbi = min(int(math.floor(opts.lb_period * scale)), top)
        P = model.new_int_var(lbi, top, "P")
        for k in range(n):  # at most one chosen option ends at k: a strong LP row
            if ends[k]:
                model.add(P >= sum(int(ci[s]) * x[s] for s in ends[k]))
        for s in range(len(opts)):  # and the same per option, for propagation
            model.add(P >= int(ci[s])).only_enforce_if(x[s])
        if inst.objective == "period":
            model.minimize(P)
        else:
            R = model.new_int_var(1, Rmax, "R")
            model.add(R == sum(x))
            Lv = model.new_int_var(lbi, top * Rmax, "L")
            model.add_multiplication_equality(Lv, [R, P])
            for s in range(len(opts)):  # L ≥ R·c_s for every chosen option: linear in R
                model.add(Lv >= int(ci[s]) * R).only_enforce_if(x[s])
            model.add(Lv >= total)  # R·max ≥ Σ: the latency bounds the additive cost
            model.minimize(Lv)
    start = _start_values(opts, warm)
    hints = {x[s]: int(s in set(start)) for s in range(len(opts))} if start else None
    out, solver = solve_cpsat(model, options, hints)
    stats = {**out.stats, "options": len(opts), "options_total": opts.total,
             "ub_s": opts.ub, "lb_period_s": opts.lb_period}
    if not out.has_solution:
        return MethodOutput(out.status, None, bound=_bound(out.bound, scale), stats=stats)
    chosen = sorted((int(opts.i[s]), int(opts.j[s]), int(opts.m[s]))
                    for s in range(len(opts)) if solver.value(x[s]))
    sol = chiplet_solution(inst, [(a, b) for a, b, _ in chosen], [m for _, _, m in chosen])
    value, _ = evaluate(inst, sol)
    return MethodOutput(out.status, sol, objective=value, bound=_bound(out.bound, scale),
                        stats=stats)


def _bound(b: float | None, scale: float) -> float | None:
    """A CP-SAT bound over costs floored to integers, back in seconds (a valid lower bound
    of the true objective: floored costs never exceed the true ones)."""
    return None if b is None else float(b) / scale


# ---------------------------------------------------------------------------------------
# MILP (chiplet grid)


def milp_chiplet(inst: ChipletInstance, options: SolveOptions,
                 table: np.ndarray | None = None) -> MethodOutput:
    """The same path model in Pyomo (HiGHS by default)."""
    table = chiplet_stage_table(inst) if table is None else table
    warm = options.warm_start if isinstance(options.warm_start, Solution) else None
    opts = chiplet_options(inst, table, warm)
    n, M = inst.n_items, inst.chiplets
    S = range(len(opts))
    scale = MILP_SCALE / max(opts.ub, 1e-300)
    c = (opts.c * scale).tolist()
    starts: list[list[int]] = [[] for _ in range(n)]
    ends: list[list[int]] = [[] for _ in range(n)]
    for s in S:
        starts[int(opts.i[s])].append(s)
        ends[int(opts.j[s])].append(s)
    Rmax = inst.region_limit
    mdl = pyo.ConcreteModel()
    mdl.x = pyo.Var(S, domain=pyo.Binary)
    mdl.flow = pyo.ConstraintList()
    mdl.flow.add(sum(mdl.x[s] for s in starts[0]) == 1)
    for k in range(1, n):
        if starts[k] or ends[k - 1]:
            mdl.flow.add(sum(mdl.x[s] for s in starts[k]) ==
                         sum(mdl.x[s] for s in ends[k - 1]))
    mdl.flow.add(sum(mdl.x[s] for s in ends[n - 1]) == 1)
    mdl.budget = pyo.Constraint(expr=sum(int(opts.m[s]) * mdl.x[s] for s in S) <= M)
    mdl.nreg = pyo.Constraint(expr=sum(mdl.x[s] for s in S) <= Rmax)
    pmax = max(c)
    if inst.objective == "cost":
        mdl.obj = pyo.Objective(expr=sum(c[s] * mdl.x[s] for s in S), sense=pyo.minimize)
    else:
        mdl.P = pyo.Var(bounds=(min(opts.lb_period * scale * (1 - EPS), pmax), pmax))
        mdl.stage = pyo.ConstraintList()
        for k in range(n):
            if ends[k]:
                mdl.stage.add(mdl.P >= sum(c[s] * mdl.x[s] for s in ends[k]))
        if inst.objective == "period":
            mdl.obj = pyo.Objective(expr=mdl.P, sense=pyo.minimize)
        else:
            mdl.R = pyo.Var(bounds=(1, Rmax))
            mdl.L = pyo.Var(bounds=(0, Rmax * pmax))
            mdl.count = pyo.Constraint(expr=sum(mdl.x[s] for s in S) == mdl.R)
            # L ≥ R·c_s when option s is chosen (big-M c_s·Rmax, void otherwise)
            mdl.lat = pyo.Constraint(S, rule=lambda md, s: md.L >= c[s] * md.R
                                     - c[s] * Rmax * (1 - md.x[s]))
            mdl.lat_sum = pyo.Constraint(expr=mdl.L >= sum(c[s] * mdl.x[s] for s in S))
            mdl.obj = pyo.Objective(expr=mdl.L, sense=pyo.minimize)
    start = _start_values(opts, warm)
    if start:
        chosen = set(start)
        for s in S:
            mdl.x[s].value = 1 if s in chosen else 0
        if inst.objective != "cost":
            pv = max(c[s] for s in chosen)
            mdl.P.value = pv
            if inst.objective == "latency":
                mdl.R.value = len(chosen)
                mdl.L.value = len(chosen) * pv
    out = solve_pyomo(mdl, options, warm_start=bool(start))
    stats = {**out.stats, "options": len(opts), "options_total": opts.total,
             "ub_s": opts.ub, "lb_period_s": opts.lb_period, "backend": out.backend}
    bound = None if out.bound is None else out.bound / scale
    if not out.has_solution:
        return MethodOutput(out.status, None, bound=bound, stats=stats)
    chosen_opts = sorted((int(opts.i[s]), int(opts.j[s]), int(opts.m[s]))
                         for s in S if (mdl.x[s].value or 0) > 0.5)
    sol = chiplet_solution(inst, [(a, b) for a, b, _ in chosen_opts],
                           [m for _, _, m in chosen_opts])
    value, _ = evaluate(inst, sol)
    if bound is not None and bound > value:
        bound = value  # solver tolerance: the bound cannot exceed a found solution
    return MethodOutput(out.status, sol, objective=value, bound=bound, stats=stats)


# ---------------------------------------------------------------------------------------
# Brute force (chiplet grid)


def brute_chiplet(inst: ChipletInstance, max_candidates: int = 200_000
                  ) -> tuple[float, Solution, int]:
    """Every cut of the items into ≤ limit regions × every count vector with Σ ≤ M,
    costed with the evaluator's direct path. Returns (value, solution, candidates)."""
    n, M, Rmax = inst.n_items, inst.chiplets, inst.region_limit
    size = sum(math.comb(n - 1, R - 1) * math.comb(M, R) for R in range(1, Rmax + 1))
    cache: dict[tuple[int, int, int], float] = {}

    def stage(a: int, b: int, m: int) -> float:
        key = (a, b, m)
        if key not in cache:
            cache[key] = chiplet_stage(inst, a, b, m)
        return cache[key]

    def candidates():
        for R in range(1, Rmax + 1):
            for cuts in itertools.combinations(range(1, n), R - 1):
                starts = (0, *cuts)
                regs = tuple((starts[k], (starts[k + 1] - 1) if k + 1 < R else n - 1)
                             for k in range(R))
                for cnts in itertools.product(range(1, M - R + 2), repeat=R):
                    if sum(cnts) <= M:
                        yield regs, cnts

    res = enumerate_best(candidates(), lambda rc: combine(
        inst.objective, [stage(a, b, m) for (a, b), m in zip(rc[0], rc[1], strict=True)]),
        size=size, max_candidates=max_candidates, what=f"instance {inst.name}")
    regs, cnts = res.best
    return res.value, chiplet_solution(inst, regs, cnts), res.count


# ---------------------------------------------------------------------------------------
# Processor chain (seed 001): DP, CP-SAT, MILP, brute force


def dp_soc(inst: SocInstance) -> tuple[float, list[tuple[int, int]], list[int]]:
    """DP over (regions r, last layer j, its processor p, the next processor q).

    ``G[r, j, p, q]`` = best value of layers 0..j cut into r sub-models, the last on
    chain processor p followed by one on q (q = P: none, then j = L−1), with every
    stage complete (the handover after j depends on q, hence q in the state).
    """
    L, P = inst.n_items, inst.n_procs
    Rmax = inst.region_limit
    pre, hand = soc_tables(inst)
    add = inst.objective == "cost"
    G = np.full((Rmax + 1, L, P, P + 1), np.inf)
    arg = np.full((Rmax + 1, L, P, P + 1, 2), -1, dtype=np.int64)  # (start i, prev p')
    for r in range(1, Rmax + 1):
        # H[i, p] = best over r−1 regions ending at i−1 whose next processor is p
        if r > 1:
            H = np.full((L, P), np.inf)
            Hp = np.full((L, P), -1, dtype=np.int64)
            for p in range(P):
                if p == 0:
                    continue
                prev = G[r - 1, :, :p, p]  # (L, p) over j = i−1 and p' < p
                Hp[1:, p] = np.argmin(prev[:-1], axis=1)
                H[1:, p] = prev[:-1].min(axis=1)
        for j in range(L):
            qs = [P] if j == L - 1 else list(range(P))
            for p in range(P):
                seg = pre[j + 1, p] - pre[:j + 1, p]  # (j+1,) over start i
                for q in qs:
                    if q != P and q <= p:
                        continue
                    st = seg + (hand[j, p, q] if q != P else 0.0)
                    if r == 1:
                        val, i, pp = st[0], 0, -1
                    else:
                        h = H[:j + 1, p]
                        cand = h + st if add else np.maximum(h, st)
                        i = int(np.argmin(cand))
                        val, pp = cand[i], int(Hp[i, p])
                    if val < G[r, j, p, q]:
                        G[r, j, p, q] = val
                        arg[r, j, p, q] = (i, pp)
    last = G[1:, L - 1, :, P]  # (Rmax, P)
    score = last * np.arange(1, Rmax + 1)[:, None] if inst.objective == "latency" else last
    r0, p0 = np.unravel_index(int(np.argmin(score)), score.shape)
    value = float(score[r0, p0])
    if not math.isfinite(value):
        raise InputError("instance", "no feasible split", "a layer no processor can run?")
    r, j, p, q = r0 + 1, L - 1, int(p0), P
    regions, procs = [], []
    while r > 0:
        i, pp = (int(v) for v in arg[r, j, p, q])
        regions.append((i, j))
        procs.append(p)
        r, j, q, p = r - 1, i - 1, p, pp
    return value, regions[::-1], procs[::-1]


def _soc_ub(inst: SocInstance) -> tuple[float, list[tuple[int, int]], list[int]]:
    """The best single-processor split (a feasible solution for scaling and hints)."""
    best = (math.inf, [(0, inst.n_items - 1)], [0])
    for p in range(inst.n_procs):
        v = combine(inst.objective, [soc_stage(inst, 0, inst.n_items - 1, p, None)])
        if v < best[0]:
            best = (v, [(0, inst.n_items - 1)], [p])
    return best


def _soc_decode(inst: SocInstance, assign: list[int]) -> Solution:
    regions, procs, a = [], [], 0
    for k in range(1, len(assign) + 1):
        if k == len(assign) or assign[k] != assign[a]:
            regions.append((a, k - 1))
            procs.append(assign[a])
            a = k
    return soc_solution(regions, procs)


def _soc_start(inst: SocInstance, warm: Any) -> list[int]:
    """Processor of every layer in the warm start (if a valid SoC solution) or the UB."""
    if isinstance(warm, Solution) and warm.processors and not warm.counts:
        try:
            evaluate(inst, warm)
            regs, procs = warm.regions, warm.processors
        except InputError:
            regs, procs = None, None
        if regs is not None:
            return [p for (a, b), p in zip(regs, procs, strict=True) for _ in range(a, b + 1)]
    _, regs, procs = _soc_ub(inst)
    return [p for (a, b), p in zip(regs, procs, strict=True) for _ in range(a, b + 1)]


def cpsat_soc(inst: SocInstance, options: SolveOptions) -> MethodOutput:
    """CP-SAT: monotone layer → processor assignment with handover literals.

    A stage is written with prefix sums, ``pre[end+1, p] − pre[start, p]``, through exact
    start/end literals of each processor's run of layers, so that the integer rounding
    of a stage is below two units however many layers it holds.
    """
    L, P, Rmax = inst.n_items, inst.n_procs, inst.region_limit
    _, hand = soc_tables(inst)
    t = inst.loaded_time
    ub = _soc_ub(inst)[0]
    finite = np.isfinite(t)
    allowed = finite & (np.where(finite, t, 0.0) <= ub * (1 + EPS))  # a longer layer: > UB
    pre = np.zeros((L + 1, P))
    pre[1:] = np.cumsum(np.where(finite, t, 0.0), axis=0)
    scale = CPSAT_RESOLUTION / max(ub, float(pre[L].max()), float(hand.max(initial=0.0)),
                                   1e-300)
    Pi = np.floor(pre * scale).astype(np.int64)
    hi = np.floor(hand * scale).astype(np.int64)
    md = cp_model.CpModel()
    x = [[md.new_bool_var(f"x{l}_{p}") for p in range(P)] for l in range(L)]
    for l in range(L):
        md.add_exactly_one(x[l])
        for p in range(P):
            if not allowed[l, p]:
                md.add(x[l][p] == 0)
    for l in range(L - 1):
        for p in range(P - 1):
            md.add(sum(x[l][q] for q in range(p + 1)) >= sum(x[l + 1][q] for q in range(p + 1)))
    used = [md.new_bool_var(f"u{p}") for p in range(P)]
    first = [[md.new_bool_var(f"a{l}_{p}") for p in range(P)] for l in range(L)]
    last = [[md.new_bool_var(f"e{l}_{p}") for p in range(P)] for l in range(L)]
    for p in range(P):
        for l in range(L):
            md.add_implication(x[l][p], used[p])
            # first[l,p] ⇔ x[l,p] ∧ ¬x[l−1,p]; last[l,p] ⇔ x[l,p] ∧ ¬x[l+1,p]
            for lit, other in ((first[l][p], l - 1), (last[l][p], l + 1)):
                md.add_implication(lit, x[l][p])
                if 0 <= other < L:
                    md.add_implication(lit, x[other][p].Not())
                    md.add_bool_or([x[l][p].Not(), x[other][p], lit])
                else:
                    md.add_implication(x[l][p], lit)
        md.add(used[p] <= sum(x[l][p] for l in range(L)))
    hv: dict[tuple[int, int, int], Any] = {}
    for j in range(L - 1):
        for p in range(P):
            for q in range(p + 1, P):
                v = md.new_bool_var(f"h{j}_{p}_{q}")
                md.add_bool_or([x[j][p].Not(), x[j + 1][q].Not(), v])
                hv[j, p, q] = v
    top = int(ub * scale) + 4  # every stage of a solution at least as good as the UB
    stage = []
    for p in range(P):
        sv = md.new_int_var(0, top, f"s{p}")
        md.add(sv == sum(int(Pi[l + 1, p]) * last[l][p] for l in range(L))
               - sum(int(Pi[l, p]) * first[l][p] for l in range(L))
               + sum(int(hi[j, pp, q]) * v for (j, pp, q), v in hv.items() if pp == p))
        stage.append(sv)
    R = md.new_int_var(1, Rmax, "R")
    md.add(R == sum(used))
    if inst.objective == "cost":
        md.minimize(sum(stage))
    else:
        Pv = md.new_int_var(0, top, "P")
        md.add_max_equality(Pv, stage)
        if inst.objective == "period":
            md.minimize(Pv)
        else:
            Lv = md.new_int_var(0, top * Rmax, "L")
            md.add_multiplication_equality(Lv, [R, Pv])
            md.minimize(Lv)
    start = _soc_start(inst, options.warm_start)
    hints = {x[l][p]: int(start[l] == p) for l in range(L) for p in range(P)}
    out, solver = solve_cpsat(md, options, hints)
    stats = {**out.stats, "layers": L, "processors": P}
    # a stage's integer value is within (−1, +2) units of the true one: subtract Rmax·2
    bound = None if out.bound is None else max(0.0, (out.bound - 2 * Rmax) / scale)
    if not out.has_solution:
        return MethodOutput(out.status, None, bound=bound, stats=stats)
    assign = [next(p for p in range(P) if solver.value(x[l][p])) for l in range(L)]
    sol = _soc_decode(inst, assign)
    value, _ = evaluate(inst, sol)
    return MethodOutput(out.status, sol, objective=value, bound=min(bound, value), stats=stats)


def milp_soc(inst: SocInstance, options: SolveOptions) -> MethodOutput:
    """MILP (Pyomo): the monotone assignment, handovers linearized, R·P by cases."""
    L, P, Rmax = inst.n_items, inst.n_procs, inst.region_limit
    _, hand = soc_tables(inst)
    t = inst.loaded_time
    ub = _soc_ub(inst)[0]
    scale = MILP_SCALE / max(ub, 1e-300)
    finite = np.isfinite(t)
    tt = np.where(finite, t, 0.0) * scale
    hh = hand * scale
    pairs = [(j, p, q) for j in range(L - 1) for p in range(P) for q in range(p + 1, P)]
    md = pyo.ConcreteModel()
    md.x = pyo.Var(range(L), range(P), domain=pyo.Binary)
    md.u = pyo.Var(range(P), domain=pyo.Binary)
    md.h = pyo.Var(pairs, bounds=(0, 1))
    md.c = pyo.ConstraintList()
    for l in range(L):
        md.c.add(sum(md.x[l, p] for p in range(P)) == 1)
        for p in range(P):
            if not finite[l, p]:
                md.c.add(md.x[l, p] == 0)
            md.c.add(md.u[p] >= md.x[l, p])
    for p in range(P):
        md.c.add(md.u[p] <= sum(md.x[l, p] for l in range(L)))
    for l in range(L - 1):
        for p in range(P - 1):
            md.c.add(sum(md.x[l, q] for q in range(p + 1)) >=
                     sum(md.x[l + 1, q] for q in range(p + 1)))
    for j, p, q in pairs:
        md.c.add(md.h[j, p, q] >= md.x[j, p] + md.x[j + 1, q] - 1)
    md.c.add(sum(md.u[p] for p in range(P)) <= Rmax)
    stage = {p: sum(float(tt[l, p]) * md.x[l, p] for l in range(L) if finite[l, p]) +
             sum(float(hh[j, pp, q]) * md.h[j, pp, q] for j, pp, q in pairs if pp == p)
             for p in range(P)}
    top = float(tt.sum() + hh.sum()) + 1.0
    if inst.objective == "cost":
        md.obj = pyo.Objective(expr=sum(stage.values()), sense=pyo.minimize)
    else:
        md.P = pyo.Var(bounds=(0, top))
        for p in range(P):
            md.c.add(md.P >= stage[p])
        if inst.objective == "period":
            md.obj = pyo.Objective(expr=md.P, sense=pyo.minimize)
        else:
            rs = range(1, Rmax + 1)
            md.z = pyo.Var(rs, domain=pyo.Binary)
            md.L = pyo.Var(bounds=(0, Rmax * top))
            md.c.add(sum(md.z[r] for r in rs) == 1)
            md.c.add(sum(md.u[p] for p in range(P)) == sum(r * md.z[r] for r in rs))
            for r in rs:
                md.c.add(md.L >= r * md.P - r * top * (1 - md.z[r]))
            md.obj = pyo.Objective(expr=md.L, sense=pyo.minimize)
    start = _soc_start(inst, options.warm_start)
    for l in range(L):
        for p in range(P):
            md.x[l, p].value = int(start[l] == p)
    for p in range(P):
        md.u[p].value = int(p in start)
    for j, p, q in pairs:
        md.h[j, p, q].value = int(start[j] == p and start[j + 1] == q)
    if inst.objective != "cost":
        sv = [pyo.value(stage[p]) for p in range(P)]
        md.P.value = max(sv)
        if inst.objective == "latency":
            R0 = len(set(start))
            for r in range(1, Rmax + 1):
                md.z[r].value = int(r == R0)
            md.L.value = R0 * max(sv)
    out = solve_pyomo(md, options, warm_start=True)
    stats = {**out.stats, "layers": L, "processors": P, "backend": out.backend}
    bound = None if out.bound is None else out.bound / scale
    if not out.has_solution:
        return MethodOutput(out.status, None, bound=bound, stats=stats)
    assign = [max(range(P), key=lambda p, l=l: md.x[l, p].value or 0) for l in range(L)]
    sol = _soc_decode(inst, assign)
    value, _ = evaluate(inst, sol)
    if bound is not None and bound > value:
        bound = value
    return MethodOutput(out.status, sol, objective=value, bound=bound, stats=stats)


def brute_soc(inst: SocInstance, max_candidates: int = 500_000
              ) -> tuple[float, Solution, int]:
    """Every cut of the layers into R ≤ limit sub-models × every increasing choice of R
    chain processors, costed with the evaluator's direct path."""
    L, P, Rmax = inst.n_items, inst.n_procs, inst.region_limit
    size = sum(math.comb(L - 1, R - 1) * math.comb(P, R) for R in range(1, Rmax + 1))

    def candidates():
        for R in range(1, Rmax + 1):
            for cuts in itertools.combinations(range(1, L), R - 1):
                starts = (0, *cuts)
                regs = tuple((starts[k], (starts[k + 1] - 1) if k + 1 < R else L - 1)
                             for k in range(R))
                for procs in itertools.combinations(range(P), R):
                    yield regs, procs

    def value(rp):
        regs, procs = rp
        st = [soc_stage(inst, a, b, procs[k], procs[k + 1] if k + 1 < len(procs) else None)
              for k, (a, b) in enumerate(regs)]
        v = combine(inst.objective, st)
        return v if math.isfinite(v) else None

    res = enumerate_best(candidates(), value, size=size, max_candidates=max_candidates,
                         what=f"instance {inst.name}")
    regs, procs = res.best
    return res.value, soc_solution(regs, procs), res.count


# ---------------------------------------------------------------------------------------
# Exact placement of the regions on the grid (the core_assignment QAP)

#: The core_assignment methods that place slots exactly.
PLACEMENT_METHODS = ("bnb-place", "cpsat-place", "milp-place")


def rounded_flows(flows: PlacementFlows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The undirected slot flows (:meth:`PlacementFlows.pairs`) as positive integers.

    core_assignment's graphs have integer weights (synapse counts): every flow is
    rounded to whole bytes, a positive flow to at least 1 byte so that no traffic
    vanishes. Flows are KB–MB per frame on the library networks, so the rounding moves
    the objective by < 1e-5 relative; the model's optimality proof is for these
    rounded flows, the reported d2d metrics are the evaluator's exact ones.
    """
    u, v, w = flows.pairs()
    keep = w > 0
    u, v, w = u[keep], v[keep], w[keep]
    return u, v, np.maximum(1, np.rint(w)).astype(np.int64)


def placement_qap(inst: ChipletInstance, flows: PlacementFlows) -> Any:
    """The core_assignment instance that places ``flows``' slots: one vertex of size 1 per
    slot, capacity 1 (every slot its own grid node), the chiplet grid's rows × cols,
    objective ``traffic`` = Σ rounded bytes × Manhattan hops, the chip's NoC figures."""
    from chipsched.neurongraph import NeuronGraph
    from chipsched.problems.core_assignment import Instance as QapInstance

    h = inst.hardware
    u, v, w = rounded_flows(flows)
    graph = NeuronGraph.from_edges(np.ones(flows.n_slots, np.int64), u, v, w,
                                   name=f"{inst.name}-slots")
    return QapInstance(f"{inst.name}-placement", graph, h.rows, h.cols, 1, "traffic",
                       weight_bytes=1.0, hop_energy_pj_per_bit=h.noc.hop_energy_pj_per_bit,
                       link_bandwidth_gb_s=h.noc.link_bandwidth_gb_s)


def exact_placement(inst: ChipletInstance, sol: Solution, method: str = "bnb-place",
                    time_limit: float | None = 10.0, seed: int = 0,
                    threads: int | None = None) -> tuple[Solution, dict[str, Any]]:
    """Place ``sol``'s regions on the grid by a core_assignment placement method.

    The slots of ``sol`` (:func:`placement_flows`) become the vertices of a QAP
    (:func:`placement_qap`, flows rounded to whole bytes) solved by ``method``
    (``bnb-place``, ``cpsat-place`` or ``milp-place``) through ``chipsched.solve``,
    warm-started from ``sol``'s placement (serpentine unless given). The regions and
    counts stay; the placement is the better, by the evaluator's exact byte·hops, of
    the solver's and the start — never worse than the start. Returns the solution and
    stats: method, status, ``proven`` (the returned placement is optimal for the
    rounded flows), ``gap`` (relative, rounded flows), byte·hops of the start and of
    the result, the QAP objective and bound (rounded bytes), the solver's wall time.
    """
    from chipsched.api import solve
    from chipsched.problems.core_assignment import Solution as QapSolution

    if not isinstance(inst, ChipletInstance):
        raise InputError("instance", "exact placement needs a chiplet grid")
    if method not in PLACEMENT_METHODS:
        raise InputError("method", f"unknown placement method {method!r}",
                         f"use one of {', '.join(PLACEMENT_METHODS)}")
    h = inst.hardware
    flows = placement_flows(inst, sol.regions, sol.counts)
    start_pl = sol.placement or serpentine_placement(h.rows, h.cols, sol.counts)
    start = flows.slot_nodes(start_pl)
    start_bh = flows.byte_hops(start, h.cols)
    stats: dict[str, Any] = {"method": method, "start": "given" if sol.placement and
                             sol.placement != serpentine_placement(h.rows, h.cols, sol.counts)
                             else "serpentine", "start_byte_hops": start_bh}
    u, v, w = rounded_flows(flows)
    if not w.size:  # no die-to-die traffic: every placement is optimal
        return replace(sol, placement=start_pl), {
            **stats, "status": Status.OPTIMAL.value, "proven": True, "gap": 0.0,
            "byte_hops": start_bh, "improved": False, "qap_objective": 0, "qap_bound": 0,
            "solver_s": 0.0}
    qinst = placement_qap(inst, flows)
    res = solve("core_assignment", qinst, method, time_limit=time_limit, seed=seed,
                threads=threads, warm_start=QapSolution(start))
    nodes, improved = start, False
    if res.solution is not None:
        cand = np.asarray(res.solution.core, dtype=np.int64)
        if flows.byte_hops(cand, h.cols) < start_bh:
            nodes, improved = cand, True
    rounded = _rounded_value(u, v, w, nodes, h.cols)
    bound = None if res.bound is None else float(res.bound)
    proven = res.status is Status.OPTIMAL and bound is not None and rounded <= bound + 0.5
    gap = None if bound is None else (0.0 if rounded <= 0 else max(0.0, 1 - bound / rounded))
    out = replace(sol, placement=flows.split(nodes))
    return out, {**stats, "status": res.status.value, "proven": bool(proven), "gap": gap,
                 "byte_hops": flows.byte_hops(nodes, h.cols), "improved": improved,
                 "qap_objective": rounded, "qap_bound": bound, "solver_s": round(res.wall_s, 3),
                 **({"message": res.message} if res.message else {})}


def _rounded_value(u: np.ndarray, v: np.ndarray, w: np.ndarray, nodes: np.ndarray,
                   cols: int) -> int:
    """Σ w·hops of the integer flows for a slot → node map (the QAP's objective)."""
    (ur, uc), (vr, vc) = np.divmod(nodes[u], cols), np.divmod(nodes[v], cols)
    return int((w * (np.abs(ur - vr) + np.abs(uc - vc))).sum())




# ---------------------------------------------------------------------------------------
# Registered methods


def _kind(instance: Any) -> str:
    if isinstance(instance, ChipletInstance):
        return "chiplet"
    if isinstance(instance, SocInstance):
        return "soc"
    raise InputError("instance", f"not a region_split instance: {type(instance).__name__}",
                     "build one with chipsched.make_instance('region_split', …)")


@register(DECISION, "cpsat", "exact", "CP-SAT over segment × count options (path model); "
          "SoC: monotone layer → processor assignment", source=SOURCE)
@with_placement
def cpsat(instance: Any, options: SolveOptions, **params: Any) -> MethodOutput:
    """CP-SAT for either platform."""
    _no_params("cpsat", params)
    if _kind(instance) == "chiplet":
        return cpsat_chiplet(instance, options)
    return cpsat_soc(instance, options)


@register(DECISION, "milp", "exact", "Pyomo MILP (HiGHS/CBC/…) over segment × count options; "
          "SoC: monotone assignment", source=SOURCE)
@with_placement
def milp(instance: Any, options: SolveOptions, **params: Any) -> MethodOutput:
    """The MILP for either platform, solved by ``options.milp_solver``."""
    _no_params("milp", params)
    if _kind(instance) == "chiplet":
        return milp_chiplet(instance, options)
    return milp_soc(instance, options)


@register(DECISION, "dp", "exact", "dynamic program over (regions, prefix, sub-chiplets); "
          "exact for the fixed item order", source=SOURCE)
@with_placement
def dp(instance: Any, options: SolveOptions, **params: Any) -> MethodOutput:
    """The dynamic program for either platform (a third, independent exact check)."""
    _no_params("dp", params)
    if _kind(instance) == "chiplet":
        value, regs, cnts = dp_chiplet(chiplet_stage_table(instance), instance.chiplets,
                                       instance.objective, instance.max_regions)
        sol = chiplet_solution(instance, regs, cnts)
    else:
        value, regs, procs = dp_soc(instance)
        sol = soc_solution(regs, procs)
    return MethodOutput(Status.OPTIMAL, sol, objective=evaluate(instance, sol)[0],
                        bound=value, stats={"dp_value": value})


@register(DECISION, "bruteforce", "oracle", "every cut × every count (or processor subset), "
          "for tiny instances", source="enumeration")
@with_placement
def bruteforce(instance: Any, options: SolveOptions, max_candidates: int = 500_000,
               **params: Any) -> MethodOutput:
    """Enumerate the whole space (guarded by ``max_candidates``)."""
    _no_params("bruteforce", params)
    if _kind(instance) == "chiplet":
        value, sol, count = brute_chiplet(instance, max_candidates)
    else:
        value, sol, count = brute_soc(instance, max_candidates)
    return MethodOutput(Status.OPTIMAL, sol, objective=value, bound=value,
                        stats={"candidates": count})


def _no_params(name: str, params: dict[str, Any]) -> None:
    if params:
        raise InputError(f"method {name}", f"unknown parameter {sorted(params)[0]!r}",
                         "this method takes only the solve options")
