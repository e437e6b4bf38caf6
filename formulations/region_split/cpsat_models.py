"""CP-SAT models of both platforms."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from chipsched.method import MethodOutput
from chipsched.problems.region_split import (
    ChipletInstance,
    SocInstance,
    chiplet_solution,
    chiplet_stage_table,
    soc_tables,
)
from chipsched.problems.region_split.objectives import aggregate
from chipsched.result import Status
from chipsched.solvers.cpsat import solve_cpsat
from chipsched.solvers.options import SolveOptions

from .common import (
    CPSAT_RESOLUTION,
    EPS,
    chiplet_table_value,
    soc_output,
    soc_start,
    soc_ub,
)
from .pruning import ChipletOptions, chiplet_options, start_values


def cpsat_chiplet(inst: ChipletInstance, options: SolveOptions,
                  table: np.ndarray | None = None) -> MethodOutput:
    """CP-SAT over the pruned options: a path 0 → n through the positions."""
    table = chiplet_stage_table(inst) if table is None else table
    warm = options.warm_solution
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
    if aggregate(inst.objective) == "sum":
        model.minimize(total)
    else:
        lbi = min(int(math.floor(opts.lb_period * scale)), top)
        P = model.new_int_var(lbi, top, "P")
        for k in range(n):  # at most one chosen option ends at k: a strong LP row
            if ends[k]:
                model.add(P >= sum(int(ci[s]) * x[s] for s in ends[k]))
        for s in range(len(opts)):  # and the same per option, for propagation
            model.add(P >= int(ci[s])).only_enforce_if(x[s])
        if aggregate(inst.objective) == "max":
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
    start = start_values(opts, warm)
    hints = {x[s]: int(s in set(start)) for s in range(len(opts))} if start else None
    out, solver = solve_cpsat(model, options, hints)
    stats = {**out.stats, "options": len(opts), "options_total": opts.total,
             "ub_s": opts.ub, "lb_period_s": opts.lb_period}
    bound = None if out.bound is None else float(out.bound) / scale
    if not out.has_solution:
        return pruning_incumbent(inst, table, opts, out.status, bound, stats)
    chosen = sorted((int(opts.i[s]), int(opts.j[s]), int(opts.m[s]))
                    for s in range(len(opts)) if solver.value(x[s]))
    regs, cnts = [(a, b) for a, b, _ in chosen], [m for _, _, m in chosen]
    # the model's own value: costs floored to ticks, less than one tick lost per region
    return MethodOutput(out.status, chiplet_solution(inst, regs, cnts),
                        objective=chiplet_table_value(inst, table, regs, cnts),
                        bound=bound, stats=stats, model_objective=model_value(out, scale),
                        model_tol=Rmax / scale)


def model_value(out: Any, scale: float) -> float | None:
    """The objective the solver gives its own solution, in the decision's unit."""
    return None if out.objective is None else float(out.objective) / scale


def pruning_incumbent(inst: ChipletInstance, table: np.ndarray, opts: ChipletOptions,
                      status: Status, bound: float | None, stats: dict[str, Any]
                      ) -> MethodOutput:
    """When the solver stops without an incumbent: no solution of its own, the better of
    the solver's and the pruning's lower bound (a model's bound over floored or scaled
    costs is still a valid lower bound), and the pruning step's best solution (its
    upper bound) as the method's start, which the face reports."""
    regs, cnts = opts.ub_solution
    lb = opts.lb if bound is None else max(opts.lb, bound)
    st = status if status in (Status.INFEASIBLE, Status.ERROR) else Status.TIME_LIMIT
    if st is not Status.TIME_LIMIT:
        return MethodOutput(st, None, bound=bound, stats=stats)
    return MethodOutput(st, None, bound=lb, stats={**stats, "incumbent": "pruning upper "
                                                   "bound"},
                        incumbent=chiplet_solution(inst, regs, cnts))


def cpsat_soc(inst: SocInstance, options: SolveOptions) -> MethodOutput:
    """CP-SAT: monotone layer → processor assignment with handover literals.

    A stage is written with prefix sums, ``pre[end+1, p] − pre[start, p]``, through exact
    start/end literals of each processor's run of layers, so that the integer rounding
    of a stage is below two units however many layers it holds.
    """
    L, P, Rmax = inst.n_items, inst.n_procs, inst.region_limit
    _, hand = soc_tables(inst)
    t = inst.loaded_time
    ub = soc_ub(inst)[0]
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
    if aggregate(inst.objective) == "sum":
        md.minimize(sum(stage))
    else:
        Pv = md.new_int_var(0, top, "P")
        md.add_max_equality(Pv, stage)
        if aggregate(inst.objective) == "max":
            md.minimize(Pv)
        else:
            Lv = md.new_int_var(0, top * Rmax, "L")
            md.add_multiplication_equality(Lv, [R, Pv])
            md.minimize(Lv)
    start = soc_start(inst, options.warm_solution)
    hints = {x[l][p]: int(start[l] == p) for l in range(L) for p in range(P)}
    out, solver = solve_cpsat(md, options, hints)
    stats = {**out.stats, "layers": L, "processors": P}
    # a stage's integer value is within (−1, +2) units of the true one: subtract Rmax·2
    bound = None if out.bound is None else max(0.0, (out.bound - 2 * Rmax) / scale)
    assign = [next(p for p in range(P) if solver.value(x[l][p])) for l in range(L)] \
        if out.has_solution else None
    # a true stage is below its integer value plus one unit: Rmax + 1 units in all
    return soc_output(inst, out, start, assign, bound, stats, model_value(out, scale),
                      (Rmax + 1) / scale)
