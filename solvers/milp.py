"""Pyomo MILP backend: HiGHS by default, CBC from the PuLP wheel, any other Pyomo solver.

A formulation is written once as a Pyomo ``ConcreteModel`` with one active objective;
:func:`solve_pyomo` solves it with the named backend, loads the solution into the
model's variables and reads the objective, bound and status back.

* ``highs`` — ``pyomo.contrib.solver``'s persistent HiGHS interface over ``highspy``
  (pinned to 1.16: 1.15 and OR-Tools 9.15 clash in one process, earlier versions
  return wrong optima — ``tests/test_solvers.py`` holds the cases; each answer is
  checked, see :func:`_solve_highs`). Warm start: the
  variables' current values are passed to HiGHS with ``setSolution``. ``threads`` is
  not passed (HiGHS's thread pool is fixed per process).
* ``cbc`` — the CBC binary shipped inside the PuLP wheel, through Pyomo's CBC shell
  interface (``warmstart=True`` writes the variables' values as a start).
* anything else Pyomo knows (``gurobi``, ``cplex``, ``scip``, ``glpk`` …) when installed.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import pyomo.environ as pyo

from chipsched.budget import Budget, BudgetExhausted
from chipsched.errors import SolverError
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions
from chipsched.solvers.outcome import ExactOutcome

MILP_SOLVERS = ("highs", "cbc")


class _NotBudgetStops(logging.Filter):
    """Pyomo logs an error for every exception a constraint rule raises; a budget that
    ran out while a block was being built is not an error (the face reports it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not isinstance(sys.exc_info()[1], BudgetExhausted)


logging.getLogger("pyomo.core").addFilter(_NotBudgetStops())


def polled(budget: Budget, where: str, rule: Callable[..., Any], every: int = 64
           ) -> Callable[..., Any]:
    """``rule`` (a Pyomo constraint rule) polling ``budget`` every ``every`` calls: one
    block of a large model can take seconds to build, and the run's budget covers it."""

    def wrapped(*args: Any) -> Any:
        budget.tick(where, every)
        return rule(*args)

    return wrapped


def cbc_path() -> str:
    """Path of the CBC binary in the PuLP wheel."""
    import warnings

    import pulp

    with warnings.catch_warnings():
        # PuLP 3.3 deprecates the bundled binary (gone in PuLP 4; we pin pulp < 4)
        warnings.simplefilter("ignore", DeprecationWarning)
        path = pulp.apis.PULP_CBC_CMD().path
    if not path:
        raise SolverError("the CBC binary of the PuLP wheel was not found")
    return path


def available_milp_solvers() -> list[str]:
    """Backends that can run here (HiGHS and CBC always; others when installed)."""
    out = list(MILP_SOLVERS)
    for name in ("gurobi", "cplex", "scip", "glpk", "xpress"):
        try:
            if pyo.SolverFactory(name).available(exception_flag=False):
                out.append(name)
        except Exception:  # noqa: BLE001 - a broken plugin is just "not available"
            pass
    return out


def _objective(model: pyo.ConcreteModel) -> Any:
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise SolverError(f"a MILP needs exactly one active objective, found {len(objs)}")
    return objs[0]


def solve_pyomo(model: pyo.ConcreteModel, options: SolveOptions, solver: str | None = None,
                warm_start: bool = False, solver_options: dict[str, Any] | None = None
                ) -> ExactOutcome:
    """Solve ``model``; on success its variables hold the solution.

    ``warm_start`` passes the variables' current values (set them from a heuristic's
    solution first) as the initial incumbent. ``solver_options`` are extra options for
    the backend, in its own names (HiGHS's, CBC's command-line options).
    """
    name = (solver or options.milp_solver).lower()
    options.budget.checkpoint(f"handing the MILP to {name}")
    obj = _objective(model)
    minimize = obj.sense == pyo.minimize
    t0 = time.perf_counter()
    logging.getLogger("pyomo").setLevel(logging.ERROR)
    if name == "highs":
        out = _solve_highs(model, options, warm_start, solver_options)
    else:
        out = _solve_legacy(model, options, name, warm_start, minimize, solver_options)
    status, objective, bound, has_solution, stats = out
    if status is Status.OPTIMAL and objective is not None:
        # the backend stops at its gap tolerance; report its bound, not the objective
        bound = bound if bound is not None else objective
        gap = (objective - bound) if minimize else (bound - objective)
        if options.mip_gap > 0 and gap > 1e-9 * max(1.0, abs(objective)):
            # stopped at the user's gap limit: a solution and a bound, not a proof
            status = Status.FEASIBLE
    if objective is not None and bound is not None and \
            ((bound - objective) if minimize else (objective - bound)) \
            > 1e-6 * max(1.0, abs(objective)):
        # a "bound" beyond the backend's own incumbent is no bound (CBC stopped inside
        # its LP reported 8.5e12 against an incumbent of 522)
        stats = {**stats, "solver_bound_dropped": bound}
        bound = None
    return ExactOutcome(name, status, objective, bound, time.perf_counter() - t0, has_solution,
                        stats)


def _finite(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _solve_highs(model: pyo.ConcreteModel, options: SolveOptions, warm_start: bool,
                 extra: dict[str, Any] | None = None):
    """HiGHS with its default presolve, checked: the objective it reports must be the
    value of the solution it returns. highspy 1.16's presolve maps a MIP start into its
    reduced space, where the start can read better than it is, and may then return the
    start as a solution of that better value — a 4-op placement's start of makespan 6
    came back "optimal at 5" (``tests/test_solvers.py``). Such a run's point is kept at
    its true value, with no proof and no bound, and solved again without the start if
    the budget allows; the second run counts only if it reports its own point and is
    no worse. (Without presolve, 1.16 — like 1.13 — proves non-optimal points optimal: an
    ε-constraint solve of the tile allocation front, where CBC and HiGHS with presolve
    agree on the optimum.)"""
    obj = _objective(model)
    minimize = obj.sense == pyo.minimize
    status, objective, bound, has_solution, stats = _highs_once(model, options, warm_start,
                                                                extra)
    if not has_solution or _reports_its_solution(obj, objective):
        return status, objective, bound, has_solution, stats
    # the point HiGHS returned is a solution, at its own value, with no proof and no bound
    value = float(pyo.value(obj))
    stats = {**stats, "solution_misreported": objective}
    status = Status.TIME_LIMIT if status is Status.TIME_LIMIT else Status.FEASIBLE
    if not warm_start or options.budget.exhausted():
        return status, value, None, True, stats
    kept = [(v, v.value) for v in model.component_data_objects(pyo.Var)]
    st2, obj2, bnd2, sol2, stats2 = _highs_once(model, options, False, extra)
    stats = {**stats, "resolved_without_start": {**stats2, "objective": obj2}}
    if sol2 and _reports_its_solution(obj, obj2) and \
            (obj2 <= value if minimize else obj2 >= value):
        return st2, obj2, bnd2, True, stats
    for v, x in kept:  # the second run found nothing better: keep the first
        v.set_value(x, skip_validation=True)
    return status, value, None, True, stats


def _reports_its_solution(obj: Any, objective: float | None) -> bool:
    """Whether ``objective`` is the objective's value at the variables' values (a run
    that reports its own point differs by rounding only: 0 in every run measured)."""
    value = pyo.value(obj, exception=False)
    return objective is None or value is None or \
        abs(float(value) - objective) <= 1e-9 * max(1.0, abs(objective))


def _highs_once(model: pyo.ConcreteModel, options: SolveOptions, warm_start: bool,
                extra: dict[str, Any] | None = None):
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
    from pyomo.contrib.solver.solvers.highs import Highs

    opt = Highs()
    if not opt.available():
        raise SolverError("HiGHS (highspy) is not available")
    solver_options: dict[str, Any] = {"random_seed": int(options.seed) % (2**31 - 1),
                                      "mip_rel_gap": float(options.mip_gap)}
    solver_options.update(extra or {})
    stats: dict[str, Any] = {}
    if warm_start:
        opt.set_instance(model)
        stats["warm_start"] = _highs_set_solution(opt)
    # No `threads`: HiGHS's thread pool is process-global, and asking a later run for a
    # different count makes that run fail (model status kNotset); its MIP search is
    # essentially serial anyway.
    # --log: the backend's log goes to stderr (stdout may carry --json or a table)
    res = opt.solve(model, tee=sys.stderr if options.verbose else False, load_solutions=False,
                    raise_exception_on_nonoptimal_result=False,
                    time_limit=options.solver_seconds(), solver_options=solver_options)
    tc = res.termination_condition
    has_solution = res.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
    if tc == TerminationCondition.convergenceCriteriaSatisfied:
        status = Status.OPTIMAL
    elif tc in (TerminationCondition.maxTimeLimit, TerminationCondition.iterationLimit,
                TerminationCondition.objectiveLimit, TerminationCondition.interrupted):
        # stopped by a limit (time, nodes, iterations): maybe a solution, no proof
        status = Status.TIME_LIMIT
    elif tc in (TerminationCondition.provenInfeasible,
                TerminationCondition.locallyInfeasible,
                TerminationCondition.infeasibleOrUnbounded):
        status = Status.INFEASIBLE
    elif has_solution:
        status = Status.FEASIBLE
    else:
        raise SolverError(f"HiGHS ended with {tc.name}")
    if has_solution:
        res.solution_loader.load_vars()
    objective = _finite(res.incumbent_objective) if has_solution else None
    bound = _finite(res.objective_bound)
    return status, objective, bound, has_solution, stats


def _highs_set_solution(opt: Any) -> bool:
    """Hand the variables' current values to HiGHS as a start (``Highs.setSolution``).

    Uses the persistent interface's variable map; returns False (no warm start) when a
    value is missing or the interface changed — a test keeps this path honest.
    """
    import highspy

    try:
        var_map = opt._pyomo_var_to_solver_var_map
        vars_ = opt._vars
        h = opt._solver_model
    except AttributeError:
        return False
    n = len(var_map)
    values = [0.0] * n
    for vid, col in var_map.items():
        v = vars_[vid][0]
        if v.value is None:
            return False
        values[col] = float(v.value)
    sol = highspy.HighsSolution()
    sol.col_value = values
    sol.value_valid = True
    return h.setSolution(sol) == highspy.HighsStatus.kOk


def _solve_legacy(model: pyo.ConcreteModel, options: SolveOptions, name: str, warm_start: bool,
                  minimize: bool, extra: dict[str, Any] | None = None):
    from pyomo.opt import SolverStatus, TerminationCondition

    given_s = options.solver_seconds()  # what the backend gets, fixed before it runs
    if name == "cbc":
        opt = pyo.SolverFactory("cbc", executable=cbc_path())
        opt.options["seconds"] = given_s if given_s is not None else 1e9
        opt.options["threads"] = options.workers
        opt.options["randomCbcSeed"] = int(options.seed) % (2**31 - 1) or 1
        opt.options["ratioGap"] = float(options.mip_gap)
    else:
        opt = pyo.SolverFactory(name)
        if opt is None or not opt.available(exception_flag=False):
            raise SolverError(f"MILP solver {name!r} is not available here; available: "
                              f"{', '.join(available_milp_solvers())}")
        if given_s is not None:
            key = {"gurobi": "TimeLimit", "cplex": "timelimit", "glpk": "tmlim",
                   "scip": "limits/time"}.get(name)
            if key:
                opt.options[key] = given_s
    for key, value in (extra or {}).items():
        opt.options[key] = value
    # --log: pyomo's legacy tee writes to stdout (which may carry --json or a table), so
    # the solver writes its log to a file that is copied to stderr afterwards
    kwargs: dict[str, Any] = {"load_solutions": False, "tee": False}
    log_file = None
    if options.verbose:
        import tempfile

        fd, log_file = tempfile.mkstemp(prefix="chipsched-milp-", suffix=".log")
        os.close(fd)
        kwargs["logfile"] = log_file
    if warm_start and opt.warm_start_capable():
        kwargs["warmstart"] = True
    # Pyomo's CBC reader does not negate the bound of a maximisation: solve min −f.
    flip = name == "cbc" and not minimize
    obj = _objective(model)
    if flip:
        obj.deactivate()
        model._chipsched_min = pyo.Objective(expr=-obj.expr, sense=pyo.minimize)
    t_solve = time.perf_counter()
    try:
        res = opt.solve(model, **kwargs)
    except Exception as exc:  # noqa: BLE001 - report as a solver failure, one line
        raise SolverError(f"{name} failed: {str(exc).splitlines()[0]}") from None
    finally:
        if flip:
            model.del_component("_chipsched_min")
            obj.activate()
        if log_file is not None:
            with open(log_file, errors="replace") as fh:
                sys.stderr.write(fh.read())
            os.unlink(log_file)
    tc = res.solver.termination_condition
    has_solution = len(res.solution) > 0 and tc not in (TerminationCondition.infeasible,)
    ran = _finite(getattr(res.solver, "wallclock_time", None)) or \
        (time.perf_counter() - t_solve)
    no_incumbent = False  # CBC stopped before an incumbent: its "bound" is not trusted
    if tc == TerminationCondition.intermediateNonInteger or (
            name == "cbc" and tc == TerminationCondition.infeasible
            and given_s is not None and ran >= 0.9 * given_s):
        # CBC stopped by its limit before an integer solution: what it hands back is the
        # LP relaxation's values, or — its "No feasible solution found" read by Pyomo as
        # "proven infeasible" whatever stopped it — an infeasibility it did not prove
        # (a proof near the limit is reported as a time limit: no false claim)
        has_solution = False
        no_incumbent = tc == TerminationCondition.infeasible
        tc = TerminationCondition.maxTimeLimit
    if name == "cbc" and has_solution and tc != TerminationCondition.optimal:
        # stopped by a limit: without an incumbent (no finite upper bound of the min
        # problem CBC solves) the values it hands back are not an integer solution
        inc = _finite(res.problem.upper_bound)
        if inc is None or abs(inc) >= 1e50:
            has_solution = False
            no_incumbent = True
            tc = TerminationCondition.maxTimeLimit  # stopped by a limit, whichever
    if tc == TerminationCondition.optimal:
        status = Status.OPTIMAL
    elif tc in (TerminationCondition.maxTimeLimit, TerminationCondition.maxIterations,
                TerminationCondition.maxEvaluations):
        status = Status.TIME_LIMIT
    elif tc in (TerminationCondition.infeasible, TerminationCondition.infeasibleOrUnbounded):
        status = Status.INFEASIBLE
    elif has_solution and res.solver.status in (SolverStatus.ok, SolverStatus.aborted,
                                                SolverStatus.warning):
        status = Status.FEASIBLE
    else:
        raise SolverError(f"{name} ended with {tc}")
    if has_solution:
        model.solutions.load_from(res)
    objective = _finite(pyo.value(_objective(model))) if has_solution else None
    lb, ub = _finite(res.problem.lower_bound), _finite(res.problem.upper_bound)
    if flip:
        bound = -lb if lb is not None else None
    else:
        bound = lb if minimize else ub
    if no_incumbent:
        bound = None
    return status, objective, bound, has_solution, {}
