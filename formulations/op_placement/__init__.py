"""Exact op placement: CP-SAT (optional intervals), a disjunctive Pyomo MILP, brute force.

All three search the same space — every op on one core, any start times — and decode
their answer the same way: the processor of every op and the order of the starts go
through :func:`chipsched.problems.op_placement.list_schedule`, so the reported
schedule and objective are the shared cost model's.

CP-SAT
------
* Processors that are interchangeable and free to move data between (identical
  processors of an STG file, say) are merged into one *class*; a class is a resource
  of capacity = its cores (``add_no_overlap`` for one core, ``add_cumulative``
  otherwise). The decoding spreads a class's ops over its cores.
* One optional fixed-size interval per (op, class) with presence literal ``l[i,a]``
  and a shared start ``s[i]``; ``Σ_a l[i,a] = 1``; ``e[i] = s[i] + Σ_a d[i,a] · l[i,a]``.
* Precedence with transfers: ``s[j] ≥ e[i]`` for every edge, and ``s[j] ≥ e[i] +
  c[e,a,b]`` enforced if ``l[i,a] ∧ l[j,b]`` for classes a ≠ b with a transfer.
* Makespan ``C ≥ e[i] + tail[i]`` for every op (tail: the longest path after i at the
  fastest times), ``C ≥ LB`` with LB = max(critical path at the fastest times, total
  fastest work / cores) — valid bounds that help the search.
* Identical processors between which data moves at a cost are not merged; their
  symmetry is broken: processor k of a group may run op i only if processor k−1 of the
  group runs an op before i; and a redundant cumulative over the group's intervals with
  capacity = its cores (the relaxation "any of these processors") lets the cumulative
  propagators reason across the group.
* Wherever the model has a cumulative, CP-SAT's timetable edge finding and overload
  checker are switched on (``cumulative_reasoning``; off by default in CP-SAT): on the
  Kasahara STG sets they close bounds that the default propagation leaves open for
  minutes.
* Integer data: times are divided by a resolution τ and **rounded down**, transfers
  too, so that the model's optimum is a valid lower bound on the true one (every real
  schedule, its times floored, is a model schedule). τ = 1 when all data are integers
  (task graphs); otherwise a power of ten giving ~10¹⁰ ticks over the fastest serial
  time. The decoded schedule is reported with the real times; the status is
  ``optimal`` only when its objective is within 10⁻⁶ of the proven bound, otherwise
  ``feasible`` with the message saying that rounding left a gap.
* Warm start: ``options.warm`` (the face-checked schedule, e.g. HEFT's) becomes a complete hint:
  its assignment and per-core order re-timed in ticks, ends and makespan.

MILP (Pyomo, disjunctive)
-------------------------
Binary ``x[i,r]`` per (op, core r), continuous starts ``s[i]``; ``Σ_r x[i,r] = 1``;
duration ``d[i] = Σ_r t[i,p(r)] x[i,r]``; precedence ``s[j] ≥ s[i] + d[i] +
c[e,p,q](X[i,p] + X[j,q] − 1)`` for p ≠ q (no big-M needed: the term is ≤ 0 unless both
hold); for every pair i, j that no path orders and every core r both can use, one
order binary ``y[i,j]`` and ``s[j] ≥ s[i] + t[i,p(r)] − M_ij,r·(3 − y − x[i,r] −
x[j,r])`` and the mirror. Symmetry: cores of a processor and identical processors are
used in order of first use. Times are scaled to ~10³ units to keep the solver's
absolute tolerances harmless; with integral data (task graphs) the makespan is an
integer variable, since every semi-active schedule then has integer times. (HiGHS
1.14.0's MIP presolve returned wrong "optimal" answers on this model — our
differential test found a one-op instance; ERGO-Code/HiGHS#2961 — and 1.13.1 without
presolve a two-op one, ERGO-Code/HiGHS#3273: the project pins highspy 1.16.)

**The horizon U and the big-Ms** (``big_m="incumbent"``, default). U caps the
makespan: for the makespan objective it is the makespan of the best schedule at hand —
the warm start (e.g. HEFT's or seed 003's, handed over by the face), the best single
processor's, and the list schedule of every op on its fastest processor — since an
optimum is no longer; for ``weighted:WT,WE`` it is ``(WT·C + WE·E − WE·E_min) / WT``
of that schedule (E_min = Σ_i min_p energy: no optimum's makespan exceeds it); for
``energy`` (makespan unpriced) and never above it, the serial bound (Σ_i slowest time
+ largest transfer in). Every start then lies in ``[head_i, U − tail_i − t_min(i)]``
(head / tail: the longest path before / after i at the fastest times), and the
per-pair constant is the largest value ``s_i + t[i,p] − s_j`` can take there:
``M_ij,r = U − tail_i − t_min(i) + t[i,p] − head_j``. The best schedule at hand is the
solver's starting incumbent. ``big_m="serial"`` is the model before issue 15: M = U =
the serial bound for every pair, no start windows.
Brute force
-----------
Enumerates every (linear extension of the DAG, core per op) pair as an "append"
schedule — every semi-active schedule, hence an optimal one — skipping only relabelings
of unused identical cores/processors. Refuses instances with more than
``max_candidates`` candidates.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.budget import Budget
from chipsched.method import MethodOutput, count_text, method, param
from chipsched.problems.op_placement import (
    Instance,
    Solution,
    bottom_levels,
    identical_processor_groups,
    list_schedule,
    lower_bound,
    makespan_energy,
    order_by_start,
    priority_order,
)
from chipsched.result import Status
from chipsched.solvers.bruteforce import MAX_CANDIDATES, STOPPED, enumerate_best
from chipsched.solvers.options import SolveOptions

from .models import (
    CUMULATIVE_REASONING,
    OPTIMAL_RTOL,
    _energy_scale,
    _integral,
    _resolution,
    _scaling,
    _status,
    build_cpsat,
    serial_upper_bound,
)
from .models import processor_classes as processor_classes  # the package's own name

BUILD_MILP = "building the MILP"

DECISION = "op_placement"
@dataclass(frozen=True)
class CpsatParams:
    resolution: float | None = param(None, "τ: time units per CP-SAT tick", gt=0,
                                     none="~1e10 ticks over the fastest serial time")
    cumulative_reasoning: bool = param(True, "timetable edge finding and the overload "
                                       "checker in cumulative constraints (off: CP-SAT's "
                                       "defaults)")
    windows: bool = param(True, "the window-decomposition bound: its rows in the model, "
                          "its bound reported, its stitched schedule as a start (when "
                          "cut ops split the graph)")


@method(DECISION, "cpsat", "exact",
        "CP-SAT: optional intervals per (op, processor), no-overlap/cumulative, transfer "
        "delays, LB hint, warm start", source="ours (chipsched)", params=CpsatParams,
        warm_start=True)
def cpsat(instance: Instance, options: SolveOptions, params: CpsatParams) -> MethodOutput:
    """Exact CP-SAT model; ``resolution`` overrides τ (seconds or time units per tick).
    The schedule is decoded from the solver's assignment and start order by list
    scheduling; its objective is the decoded schedule's (never above the model's)."""
    from chipsched.solvers.cpsat import solve_cpsat

    warm = options.warm_solution
    tau, eps, weights, unit = _scaling(instance, params.resolution)
    decomp, stitched, dstats = _decomposition(instance, options, params.windows and
                                              weights[0] > 0)
    if decomp is not None:
        # a start that meets the decomposition bound is optimal: no search needed
        lb = _bound(instance, None, decomp)
        for what, sol in (("the stitched window schedules meet", stitched),
                          ("the warm start meets", warm)):
            if sol is None:
                continue
            v = instance.objective(*makespan_energy(instance, sol))
            if v - lb <= OPTIMAL_RTOL * max(abs(v), 1e-300):
                return MethodOutput(Status.OPTIMAL, sol, objective=v, bound=lb, stats={
                    **dstats, "lower_bound": lower_bound(instance), "resolution": tau},
                    message=f"{what} the window-decomposition bound")
    if stitched is not None and (warm is None or instance.objective(
            *makespan_energy(instance, stitched)) < options.warm.objective):
        warm = stitched  # the better start is the hint
    model, info = build_cpsat(instance, tau, eps, weights, warm, options.budget, decomp)
    extra = CUMULATIVE_REASONING if params.cumulative_reasoning and info["cumulatives"] \
        else None
    out, solver = solve_cpsat(model, options, info["hints"], extra)
    bound = _bound(instance, None if out.bound is None else float(out.bound) * unit, decomp)
    stats = {**out.stats, **dstats, "resolution": tau, "classes": len(info["classes"]),
             "lower_bound": lower_bound(instance), "warm_start": warm is not None}
    if not out.has_solution:
        return MethodOutput(out.status, None, bound=bound, stats=stats,
                            message="no schedule found within the limits",
                            incumbent=stitched)
    classes = info["classes"]
    proc = np.zeros(instance.n_ops, dtype=np.int64)
    for (i, a), lv in info["lit"].items():
        if solver.value(lv):
            proc[i] = classes[a][0]
    start = np.array([solver.value(v) for v in info["s"]], dtype=float)
    sol = list_schedule(instance, proc, order_by_start(instance, start, proc), classes)
    value = instance.objective(*makespan_energy(instance, sol))
    # the model's own value of its schedule: times and energies floored to ticks, so the
    # real schedule may be longer by one tick per op and transfer on its critical path
    w_time, w_energy = weights
    rounding = (w_time * (instance.n_ops + len(instance.edges)) + w_energy * instance.n_ops) \
        * unit
    model = None if out.objective is None else float(out.objective) * unit
    status, msg = _status(instance, out.status, value, bound)
    return MethodOutput(status, sol, objective=value, bound=bound, stats=stats, message=msg,
                        model_objective=model, model_tol=rounding, incumbent=stitched)


def _decomposition(instance: Instance, options: SolveOptions, wanted: bool
                   ) -> tuple[Any, Solution | None, dict[str, Any]]:
    """(the window decomposition or None, its stitched schedule or None, stats) — computed
    when wanted and the cut ops split the graph (:func:`.windows.useful`), on at most a
    third of what is left of the budget."""
    from .windows import budget_share, decomposition_bound, useful, windows

    if not wanted:
        return None, None, {}
    win = windows(instance)
    if not useful(win, instance):
        return None, None, {"cut_ops": len(win.cuts)}
    d = decomposition_bound(instance, budget_share(options, 1 / 3), win)
    return d, d.stitched(instance), dict(d.stats)


def _bound(instance: Instance, solver_bound: float | None, decomp: Any = None) -> float:
    """The best lower bound at hand on the objective: the solver's, the critical-path
    and work bound, the window decomposition's (each valid; their maximum)."""
    from .windows import objective_bound

    lbs = [objective_bound(instance, lower_bound(instance))]
    if decomp is not None:
        lbs.append(objective_bound(instance, decomp.makespan))
    if solver_bound is not None:
        lbs.append(solver_bound)
    return max(lbs)


# ---------------------------------------------------------------------------------------
# MILP


def comparable_pairs(instance: Instance) -> np.ndarray:
    """Boolean n×n: True where a path orders the two ops (transitive closure)."""
    n = instance.n_ops
    reach = np.zeros((n, n), dtype=bool)
    for i in range(n - 1, -1, -1):
        for j, _ in instance.succs[i]:
            reach[i, j] = True
            reach[i] |= reach[j]
    return reach | reach.T


def start_windows(instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(head, tail, t_min): the longest path of fastest times before each op's start and
    after its end (transfers can only add to both), and each op's fastest time."""
    fastest = np.where(instance.runnable, instance.time, np.inf).min(axis=1)
    tail = bottom_levels(instance, fastest) - fastest
    head = np.zeros(instance.n_ops)
    for j in range(instance.n_ops):
        for i, _ in instance.preds[j]:
            head[j] = max(head[j], head[i] + fastest[i])
    return head, tail, fastest


def build_milp(instance: Instance, unit: float, integral: bool = False,
               horizon: float | None = None, budget: Budget | None = None) -> Any:
    """The disjunctive MILP (module docstring) with times in ``unit``. ``integral``: all
    times and transfers are integers in that unit, so an optimal makespan is one too
    (every semi-active schedule has integer times): the makespan is an integer variable
    and its lower bound is rounded up. ``horizon``: U (real time units), which caps the
    makespan and sets every pair's big-M from start windows; None: the serial bound as
    the one big-M (the model before issue 15). ``budget`` is polled as the rows are
    added (:class:`~chipsched.budget.BudgetExhausted` once it is over)."""
    import pyomo.environ as pyo

    from chipsched.solvers.milp import polled

    bud = budget if budget is not None else Budget(None)
    n = instance.n_ops
    R = instance.resources
    t = np.where(instance.runnable, instance.time, 0.0) / unit
    T = instance.transfer / unit
    UB = serial_upper_bound(instance) / unit
    windows = horizon is not None
    if windows:
        UB = min(UB, horizon / unit)
        if integral:  # an integral optimum ≤ U is ≤ ⌊U⌋
            UB = math.floor(UB + 1e-6)
        head, tail, tmin = (a / unit for a in start_windows(instance))
    else:
        head, tail, tmin = np.zeros(n), np.zeros(n), np.zeros(n)
    M = pyo.ConcreteModel()
    xr = [(i, r) for i in range(n) for r, (p, _) in enumerate(R) if instance.runnable[i, p]]
    M.x = pyo.Var(xr, domain=pyo.Binary)
    # start windows [head_i, U − tail_i − t_min(i)]: implied by the precedence chains and
    # the makespan ≤ U, stated as bounds so that the relaxation sees them
    M.s = pyo.Var(range(n), bounds=lambda M, i: (float(head[i]), max(
        float(head[i]), UB - float(tail[i]) - float(tmin[i])) if windows else UB))
    M.cmax = pyo.Var(bounds=(0, UB), domain=pyo.NonNegativeIntegers if integral
                     else pyo.NonNegativeReals)
    by_op: dict[int, list[int]] = {i: [] for i in range(n)}
    for i, r in xr:
        by_op[i].append(r)

    def X(i: int, p: int) -> Any:
        return sum(M.x[i, r] for r in by_op[i] if R[r][0] == p)

    def dur(i: int) -> Any:
        return sum(float(t[i, R[r][0]]) * M.x[i, r] for r in by_op[i])

    M.one = pyo.Constraint(range(n), rule=polled(bud, BUILD_MILP, lambda M, i: sum(
        M.x[i, r] for r in by_op[i]) == 1))
    M.end = pyo.Constraint(range(n), rule=polled(bud, BUILD_MILP, lambda M, i: M.s[i] + dur(i)
                                                 <= M.cmax))
    M.prec = pyo.ConstraintList()
    P = instance.n_processors
    for k, (i, j) in enumerate(instance.edges):
        bud.tick(BUILD_MILP, 32)
        i, j = int(i), int(j)
        M.prec.add(M.s[j] >= M.s[i] + dur(i))
        for p in range(P):
            for q in range(P):
                c = float(T[k, p, q])
                if p != q and c > 0 and instance.runnable[i, p] and instance.runnable[j, q]:
                    M.prec.add(M.s[j] >= M.s[i] + dur(i) + c * (X(i, p) + X(j, q) - 1))
    comp = comparable_pairs(instance)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if not comp[i, j]
             and set(by_op[i]) & set(by_op[j])]
    M.y = pyo.Var(pairs, domain=pyo.Binary)
    M.disj = pyo.ConstraintList()
    big_ms = []
    for i, j in pairs:
        bud.tick(BUILD_MILP, 64)
        for r in set(by_op[i]) & set(by_op[j]):
            p = R[r][0]
            both = 2 - M.x[i, r] - M.x[j, r]
            if windows:  # the most s_i + t[i,p] − s_j (and the mirror) can be in the windows
                m_ij = max(0.0, UB - tail[i] - tmin[i] + t[i, p] - head[j])
                m_ji = max(0.0, UB - tail[j] - tmin[j] + t[j, p] - head[i])
            else:
                m_ij = m_ji = UB
            big_ms += [m_ij, m_ji]
            M.disj.add(M.s[j] >= M.s[i] + float(t[i, p]) - m_ij * (1 - M.y[i, j] + both))
            M.disj.add(M.s[i] >= M.s[j] + float(t[j, p]) - m_ji * (M.y[i, j] + both))
    M.sym = pyo.ConstraintList()
    for p in range(P):  # cores of a processor in order of first use
        for c in range(1, instance.cores[p]):
            r, r0 = R.index((p, c)), R.index((p, c - 1))
            for i in range(n):
                bud.tick(BUILD_MILP, 64)
                if (i, r) in M.x:
                    M.sym.add(M.x[i, r] <= sum(M.x[k, r0] for k in range(i) if (k, r0) in M.x))
    for g in identical_processor_groups(instance):  # identical processors likewise
        for a, a0 in zip(g[1:], g[:-1], strict=True):
            for i in range(n):
                bud.tick(BUILD_MILP, 64)
                if instance.runnable[i, a]:
                    M.sym.add(X(i, a) <= sum(X(k, a0) for k in range(i)))
    obj = instance.objective
    w_time, w_energy = obj.coefficient("makespan"), obj.coefficient("energy_j")
    # the objective in model units (HiGHS's absolute tolerances need values ≫ 1e-6):
    # real objective = M._obj_unit · model objective
    e_scale = _energy_scale(instance)
    e_unit = 1.0 if _integral(instance.energy) and e_scale <= 1e5 else \
        _resolution(e_scale, False, 1e3)
    if w_energy == 0:
        M._obj_unit, wt, we = w_time * unit, 1.0, 0.0
    elif w_time == 0:
        M._obj_unit, wt, we = w_energy * e_unit, 0.0, 1.0 / e_unit
    else:
        M._obj_unit, wt, we = unit, w_time, w_energy / unit
    energy = sum(float(instance.energy[i, R[r][0]]) * M.x[i, r] for i, r in xr) if we else 0
    M.obj = pyo.Objective(expr=wt * M.cmax + we * energy, sense=pyo.minimize)
    if w_time:
        lb = lower_bound(instance) / unit
        M.lb = pyo.Constraint(expr=M.cmax >= (math.ceil(lb - 1e-9) if integral
                                              else lb * (1 - 1e-9)))
    M._pairs = pairs
    M._by_op = by_op
    M._horizon = UB * unit
    M._big_m_mean = float(np.mean(big_ms)) * unit if big_ms else 0.0
    bud.checkpoint(BUILD_MILP)
    return M


def _set_milp_start(M: Any, instance: Instance, sol: Solution, unit: float
                    ) -> None:
    R = instance.resources
    sol = _canonical_solution(instance, sol)
    for (i, r) in M.x:
        M.x[i, r].value = float(R[r] == (int(sol.proc[i]), int(sol.core[i])))
    for i in range(instance.n_ops):
        M.s[i].value = float(sol.start[i]) / unit
    end = sol.end(instance)
    M.cmax.value = float(end.max()) / unit
    for i, j in M._pairs:
        M.y[i, j].value = float((sol.start[i], i) <= (sol.start[j], j))


def _canonical_solution(instance: Instance, sol: Solution) -> Solution:
    """Relabel identical processors and cores by first use (the MILP's symmetry cuts)."""
    proc, core = sol.proc.copy(), sol.core.copy()
    for g in identical_processor_groups(instance):
        if len(g) > 1:
            first = sorted(g, key=lambda p: (np.flatnonzero(proc == p)[0] if (proc == p).any()
                                             else len(proc), p))
            mapping = dict(zip(first, g, strict=True))
            proc = np.array([mapping.get(int(p), int(p)) for p in proc])
    for p in range(instance.n_processors):
        if instance.cores[p] > 1:
            on = proc == p
            used = []
            for i in np.flatnonzero(on):
                if core[i] not in used:
                    used.append(int(core[i]))
            mapping = {c: k for k, c in enumerate(used)}
            core = np.where(on, [mapping.get(int(c), int(c)) for c in core], core)
    return instance.solution(proc, core, sol.start)


@dataclass(frozen=True)
class MilpParams:
    max_order_constraints: int = param(300_000, "largest number of disjunctive order "
                                       "constraints built (Pyomo spends minutes and "
                                       "gigabytes on more)", ge=1)
    windows: bool = param(True, "report the window-decomposition bound too (when cut ops "
                          "split the graph; its window problems are solved with CP-SAT)")
    big_m: str = param("incumbent", "incumbent: the makespan capped by the best schedule "
                       "at hand, a big-M per pair from start windows; serial: one big-M, "
                       "the serial bound (the model before issue 15)",
                       choices=("incumbent", "serial"))


def incumbent(instance: Instance, warm: Solution | None) -> tuple[str, Solution, float]:
    """(where from, schedule, objective) of the best schedule at hand: the warm start,
    every single-processor schedule, and every op on its fastest processor
    (list-scheduled by bottom level)."""
    fastest = np.argmin(np.where(instance.runnable, instance.time, np.inf), axis=1)
    t = instance.time[np.arange(instance.n_ops), fastest]
    cands = [("fastest processor", list_schedule(
        instance, fastest, priority_order(instance, bottom_levels(instance, t))))]
    cands += [(f"single {instance.processors[p]}", s)
              for p, s in instance.single_processor_schedules.items()]
    if warm is not None:
        cands.insert(0, ("warm start", warm))
    scored = [(instance.objective(*makespan_energy(instance, s)), k, name, s)
              for k, (name, s) in enumerate(cands)]
    value, _, name, sol = min(scored, key=lambda x: x[:2])
    return name, sol, value


def makespan_cap(instance: Instance, value: float) -> float:
    """The largest makespan an optimum can have when a schedule of objective ``value`` is
    known: ``(value − WE·E_min) / WT`` (module docstring), the serial bound when the
    makespan is unpriced or the cap would be looser."""
    obj = instance.objective
    wt, we = obj.coefficient("makespan"), obj.coefficient("energy_j")
    serial = serial_upper_bound(instance)
    if wt <= 0:
        return serial
    e_min = float(np.where(instance.runnable, instance.energy, np.inf).min(axis=1).sum())
    # a hair above, so the solver's tolerances never cut the incumbent itself off
    return min(serial, (value - we * e_min) / wt * (1 + 1e-9))


def order_constraints(instance: Instance) -> int:
    """How many disjunctive order constraints the MILP needs."""
    n = instance.n_ops
    comp = comparable_pairs(instance)
    return 2 * int((~comp[np.triu_indices(n, 1)]).sum()) * instance.n_resources


def _milp_applies(instance: Instance, params: MilpParams, warm: bool = False) -> str | None:
    k = order_constraints(instance)
    if k > params.max_order_constraints:
        return (f"too large for the MILP (~{k:,} order constraints > max_order_constraints "
                f"{params.max_order_constraints:,}); use cpsat")
    return None


@method(DECISION, "milp", "exact",
        "Pyomo MILP: assignment binaries, disjunctive order per core, transfer delays",
        source="ours (chipsched)", params=MilpParams, applies=_milp_applies, warm_start=True)
def milp(instance: Instance, options: SolveOptions, params: MilpParams) -> MethodOutput:
    """The disjunctive MILP (its order constraints capped by ``max_order_constraints``);
    the schedule is decoded from the solver's assignment and start order."""
    import pyomo.environ as pyo

    from chipsched.solvers.milp import solve_pyomo

    warm = options.warm_solution
    decomp, _, dstats = _decomposition(instance, options, params.windows and
                                       instance.objective.coefficient("makespan") > 0)
    times = np.concatenate([instance.time[instance.runnable], instance.transfer.ravel()])
    scale = serial_upper_bound(instance)
    integral = _integral(times) and scale <= 1e5
    unit = 1.0 if integral else _resolution(scale, False, 1e3)
    inc, source = warm, "warm start" if warm is not None else None
    horizon = None
    if params.big_m == "incumbent":
        source, inc, inc_value = incumbent(instance, warm)
        horizon = makespan_cap(instance, inc_value)
    M = build_milp(instance, unit, integral, horizon, options.budget)
    if inc is not None:
        _set_milp_start(M, instance, inc, unit)
    out = solve_pyomo(M, options, warm_start=inc is not None)
    own_start = inc if params.big_m == "incumbent" else None  # the face keeps the best
    stats = {**out.stats, **dstats, "unit": unit, "order_pairs": len(M._pairs),
             "big_m": params.big_m, "horizon": M._horizon, "mean_big_m": M._big_m_mean,
             "incumbent": source}
    bound = None if out.bound is None else out.bound * M._obj_unit
    if not out.has_solution:
        return MethodOutput(out.status, None, bound=_bound(instance, bound, decomp), stats=stats,
                            message="no schedule found within the limits",
                            incumbent=own_start)
    R = instance.resources
    proc = np.zeros(instance.n_ops, dtype=np.int64)
    for i in range(instance.n_ops):
        r = max(M._by_op[i], key=lambda r: pyo.value(M.x[i, r]))
        proc[i] = R[r][0]
    start = np.array([pyo.value(M.s[i]) for i in range(instance.n_ops)]) * unit
    sol = list_schedule(instance, proc, order_by_start(instance, start, proc))
    value = instance.objective(*makespan_energy(instance, sol))
    if bound is not None and bound > value:
        # HiGHS's bound can exceed the true optimum by its tolerances (1e-6 relative on
        # the gap); report the decoded value then rather than an invalid bound
        stats["solver_bound"] = bound
        bound = value if bound - value <= 1e-6 * max(abs(value), 1e-300) else bound
    if bound is None or bound <= value:
        bound = _bound(instance, bound, decomp)
    status, msg = _status(instance, out.status, value, bound)
    model = None if out.objective is None else float(out.objective) * M._obj_unit
    # HiGHS's feasibility tolerance (1e-7 in model units) on every constraint of a path
    slack = 1e-6 * (instance.n_ops + len(instance.edges)) * M._obj_unit
    # HiGHS may reject its start (tolerances) and stop on a worse schedule: the face
    # then reports the start
    return MethodOutput(status, sol, objective=value, bound=bound, stats=stats, message=msg,
                        model_objective=model, model_tol=slack, incumbent=own_start)


# ---------------------------------------------------------------------------------------
# the bound


@method(DECISION, "bound", "bound",
        "a proven lower bound: the window decomposition (exact windows between cut ops, "
        "chained by a DP) and the critical-path and work bounds; no schedule",
        source="ours (chipsched); docs/op_placement.md")
def bound(instance: Instance, options: SolveOptions) -> MethodOutput:
    """The best of the critical-path / work bound and, when cut ops split the graph, the
    window-decomposition bound (:mod:`.windows`) — on the makespan; the energy term's
    least total alongside for ``energy`` and ``weighted`` objectives."""
    from .windows import decomposition_bound, windows

    win = windows(instance)
    decomp = decomposition_bound(instance, options, win) if \
        instance.objective.coefficient("makespan") > 0 and win.cuts else None
    lb = _bound(instance, None, decomp)
    stats: dict[str, Any] = {"lower_bound": lower_bound(instance), "cut_ops": len(win.cuts)}
    if decomp is not None:
        stats.update(decomp.stats)
        stats["proven_windows"] = decomp.proven
    where = "window decomposition" if decomp is not None and \
        decomp.makespan >= lower_bound(instance) else "critical path / work"
    return MethodOutput(Status.BOUND_ONLY, bound=lb, stats=stats,
                        message=f"bound from the {where}; no schedule")


# ---------------------------------------------------------------------------------------
# Brute force


def count_linear_extensions(instance: Instance) -> int:
    """Topological orders of the DAG (DP over subsets; n ≤ 22)."""
    n = instance.n_ops
    if n > 22:
        return math.factorial(n)
    pred_mask = [0] * n
    for a, b in instance.edges:
        pred_mask[int(b)] |= 1 << int(a)
    ways = [0] * (1 << n)
    ways[0] = 1
    for mask in range(1 << n):
        w = ways[mask]
        if not w:
            continue
        for i in range(n):
            if not mask >> i & 1 and pred_mask[i] & mask == pred_mask[i]:
                ways[mask | 1 << i] += w
    return ways[(1 << n) - 1]


def enumerate_schedules(instance: Instance) -> Iterator[tuple[float, Solution]]:
    """Every append schedule: pick a ready op and a core, repeat. Unused identical cores of
    a processor, and wholly unused identical processors, are tried once each."""
    n = instance.n_ops
    R = instance.resources
    T = instance.transfer
    obj = instance.objective
    groups = identical_processor_groups(instance)
    group_of = {p: k for k, g in enumerate(groups) for p in g}
    proc = np.full(n, -1, dtype=np.int64)
    core = np.full(n, -1, dtype=np.int64)
    start, end = np.zeros(n), np.zeros(n)
    free = {rc: 0.0 for rc in R}
    used_cores = {rc: 0 for rc in R}
    used_proc = [0] * instance.n_processors
    npred = np.zeros(n, dtype=np.int64)
    for _, b in instance.edges:
        npred[b] += 1

    def candidates(i: int) -> list[tuple[int, int]]:
        out, seen = [], set()
        for p, c in R:
            if not instance.runnable[i, p]:
                continue
            if used_cores[(p, c)] == 0:
                # an unused core of a processor equals any other unused core of it, and a
                # wholly unused processor equals any other wholly unused one of its group
                key = ("proc", group_of[p]) if used_proc[p] == 0 else ("core", p)
                if key in seen:
                    continue
                seen.add(key)
            out.append((p, c))
        return out

    def rec(placed: int, energy: float, span: float) -> Iterator[tuple[float, Solution]]:
        if placed == n:
            yield obj(span, energy), instance.solution(proc, core, start)
            return
        for i in range(n):
            if proc[i] >= 0 or npred[i]:
                continue
            for p, c in candidates(i):
                ready = free[(p, c)]
                for k, e in instance.preds[i]:
                    ready = max(ready, end[k] + T[e, proc[k], p])
                old_free = free[(p, c)]
                proc[i], core[i], start[i] = p, c, ready
                end[i] = ready + instance.time[i, p]
                free[(p, c)] = end[i]
                used_cores[(p, c)] += 1
                used_proc[p] += 1
                for j, _ in instance.succs[i]:
                    npred[j] -= 1
                yield from rec(placed + 1, energy + instance.energy[i, p], max(span, end[i]))
                for j, _ in instance.succs[i]:
                    npred[j] += 1
                used_proc[p] -= 1
                used_cores[(p, c)] -= 1
                free[(p, c)] = old_free
                proc[i] = core[i] = -1

    yield from rec(0, 0.0, 0.0)


@dataclass(frozen=True)
class BruteParams:
    max_candidates: int = param(MAX_CANDIDATES, "largest number of (order, core) "
                                "candidates", ge=1)


def candidate_count(instance: Instance) -> int:
    """An upper bound on the append schedules :func:`enumerate_schedules` visits."""
    if instance.n_ops > 22:
        return math.factorial(instance.n_ops) * instance.n_resources ** instance.n_ops
    return count_linear_extensions(instance) * instance.n_resources ** instance.n_ops


def _brute_applies(instance: Instance, params: BruteParams, warm: bool = False) -> str | None:
    size = candidate_count(instance)
    if size > params.max_candidates:
        return (f"too large for brute force ({count_text(size)} candidates > max_candidates "
                f"{params.max_candidates:,})")
    return None


@method(DECISION, "bruteforce", "oracle",
        "enumerates every (topological order, core per op) append schedule; tiny graphs",
        source="ours (chipsched)", params=BruteParams, applies=_brute_applies)
def bruteforce(instance: Instance, options: SolveOptions, params: BruteParams
               ) -> MethodOutput:
    size = candidate_count(instance)
    best = enumerate_best(enumerate_schedules(instance), lambda c: c[0], size=size,
                          max_candidates=params.max_candidates,
                          what=f"op_placement instance {instance.name!r}",
                          budget=options.budget)
    stats = {"schedules": best.count, "ties": best.ties, "candidates_bound": size}
    if best.best is None:
        return MethodOutput(Status.TIME_LIMIT, None, stats=stats, message=STOPPED)
    value = best.value
    if not best.complete:
        return MethodOutput(Status.TIME_LIMIT, best.best[1], objective=value, stats=stats,
                            message=STOPPED)
    return MethodOutput(Status.OPTIMAL, best.best[1], objective=value, bound=value,
                        stats=stats)
