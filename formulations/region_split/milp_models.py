"""Pyomo MILP models of both platforms (HiGHS by default, CBC, any Pyomo solver)."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from chipsched.method import MethodOutput
from chipsched.problems.region_split import (
    ChipletInstance,
    SocInstance,
    chiplet_solution,
    chiplet_stage_table,
    soc_tables,
)
from chipsched.problems.region_split.objectives import aggregate
from chipsched.solvers.milp import solve_pyomo
from chipsched.solvers.options import SolveOptions

from .common import (
    EPS,
    MILP_SCALE,
    chiplet_table_value,
    soc_output,
    soc_start,
    soc_ub,
)
from .cpsat_models import model_value, pruning_incumbent
from .pruning import chiplet_options, start_values


def milp_chiplet(inst: ChipletInstance, options: SolveOptions,
                 table: np.ndarray | None = None) -> MethodOutput:
    """The same path model in Pyomo (HiGHS by default)."""
    table = chiplet_stage_table(inst) if table is None else table
    warm = options.warm_solution
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
    if aggregate(inst.objective) == "sum":
        mdl.obj = pyo.Objective(expr=sum(c[s] * mdl.x[s] for s in S), sense=pyo.minimize)
    else:
        mdl.P = pyo.Var(bounds=(min(opts.lb_period * scale * (1 - EPS), pmax), pmax))
        mdl.stage = pyo.ConstraintList()
        for k in range(n):
            if ends[k]:
                mdl.stage.add(mdl.P >= sum(c[s] * mdl.x[s] for s in ends[k]))
        if aggregate(inst.objective) == "max":
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
    start = start_values(opts, warm)
    if start:
        chosen = set(start)
        for s in S:
            mdl.x[s].value = 1 if s in chosen else 0
        if aggregate(inst.objective) != "sum":
            pv = max(c[s] for s in chosen)
            mdl.P.value = pv
            if aggregate(inst.objective) == "count_max":
                mdl.R.value = len(chosen)
                mdl.L.value = len(chosen) * pv
    out = solve_pyomo(mdl, options, warm_start=bool(start))
    stats = {**out.stats, "options": len(opts), "options_total": opts.total,
             "ub_s": opts.ub, "lb_period_s": opts.lb_period, "backend": out.backend}
    bound = None if out.bound is None else out.bound / scale
    if not out.has_solution:
        return pruning_incumbent(inst, table, opts, out.status, bound, stats)
    chosen_opts = sorted((int(opts.i[s]), int(opts.j[s]), int(opts.m[s]))
                         for s in S if (mdl.x[s].value or 0) > 0.5)
    regs, cnts = [(a, b) for a, b, _ in chosen_opts], [m for _, _, m in chosen_opts]
    value = chiplet_table_value(inst, table, regs, cnts)
    if bound is not None and bound > value:
        bound = value  # solver tolerance: the bound cannot exceed a found solution
    return MethodOutput(out.status, chiplet_solution(inst, regs, cnts), objective=value,
                        bound=bound, stats=stats, model_objective=model_value(out, scale),
                        model_tol=1e-6 * opts.ub)


def milp_soc(inst: SocInstance, options: SolveOptions) -> MethodOutput:
    """MILP (Pyomo): the monotone assignment, handovers linearized, R·P by cases."""
    L, P, Rmax = inst.n_items, inst.n_procs, inst.region_limit
    _, hand = soc_tables(inst)
    t = inst.loaded_time
    ub = soc_ub(inst)[0]
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
    if aggregate(inst.objective) == "sum":
        md.obj = pyo.Objective(expr=sum(stage.values()), sense=pyo.minimize)
    else:
        md.P = pyo.Var(bounds=(0, top))
        for p in range(P):
            md.c.add(md.P >= stage[p])
        if aggregate(inst.objective) == "max":
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
    start = soc_start(inst, options.warm_solution)
    for l in range(L):
        for p in range(P):
            md.x[l, p].value = int(start[l] == p)
    for p in range(P):
        md.u[p].value = int(p in start)
    for j, p, q in pairs:
        md.h[j, p, q].value = int(start[j] == p and start[j + 1] == q)
    if aggregate(inst.objective) != "sum":
        sv = [pyo.value(stage[p]) for p in range(P)]
        md.P.value = max(sv)
        if aggregate(inst.objective) == "count_max":
            R0 = len(set(start))
            for r in range(1, Rmax + 1):
                md.z[r].value = int(r == R0)
            md.L.value = R0 * max(sv)
    out = solve_pyomo(md, options, warm_start=True)
    stats = {**out.stats, "layers": L, "processors": P, "backend": out.backend}
    bound = None if out.bound is None else out.bound / scale
    assign = [max(range(P), key=lambda p, l=l: md.x[l, p].value or 0) for l in range(L)] \
        if out.has_solution else None
    return soc_output(inst, out, start, assign, bound, stats, model_value(out, scale),
                      1e-6 * ub)
