"""The Python face: ``solve``, ``compare`` and instance construction by decision name.

The face does what no method does for itself:

* **validates** a method's parameters against its declaration (one-line
  :class:`InputError` naming the parameter, its type or range and its doc);
* **skips** a method that does not apply to an instance (:class:`NotApplicable`;
  ``compare`` shows a ``skipped`` row with the reason and goes on);
* **chains** methods: a warm start may be another method's name (that method runs
  first on the same instance), a ``Result``, a result file's dict or a solution; chain
  steps declared per decision (``chipsched.chains``: exact region placement, the
  groups a ``-place`` method places) run before or after the method;
* **checks** every solution with the decision's evaluator (the shared cost model):
  ``Result.objective`` is always the evaluator's number, and a method whose own
  reported objective differs beyond its declared scaling tolerance, or an "optimal"
  run whose bound exceeds its objective, raises :class:`ConsistencyError`.
"""

from __future__ import annotations

import functools
import math
import os
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from chipsched import jit
from chipsched.budget import Budget, BudgetExhausted
from chipsched.errors import ChipschedError, InputError
from chipsched.method import Method, MethodOutput, ParamSpec, build_params
from chipsched.registry import Decision, Registry, registry
from chipsched.result import Result, Status
from chipsched.solvers.options import SolveOptions, WarmStart

__all__ = [
    "DEFAULT_EXACT_TIME_LIMIT", "OBJECTIVE_RTOL", "ConsistencyError", "NotApplicable",
    "best_bound", "best_found", "compare", "make_instance", "method_param_specs",
    "registry", "solve", "warm_up",
]

#: Relative tolerance between a method's reported objective and the evaluator's.
OBJECTIVE_RTOL = 1e-6
#: Seconds per exact (or bound) run in ``compare`` and ``bench`` when no time limit is given.
DEFAULT_EXACT_TIME_LIMIT = 10.0

_OPTION_NAMES = {f.name for f in fields(SolveOptions)} - {"budget", "warm"}  # the face's own


class ConsistencyError(ChipschedError, AssertionError):
    """A method's numbers disagree with the shared cost model (a bug, not bad input)."""


class NotApplicable(InputError):
    """The method does not apply to the instance (wrong platform, too large …);
    ``reason`` says why."""

    def __init__(self, field: str, problem: str, fix: str | None = None, reason: str = ""):
        super().__init__(field, problem, fix)
        self.reason = reason or problem

    def __reduce__(self) -> tuple:
        return (NotApplicable, (self.field, self.problem, self.fix, self.reason))


def split_options(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split keyword arguments into SolveOptions fields and method parameters."""
    opts = {k: v for k, v in kwargs.items() if k in _OPTION_NAMES}
    params = {k: v for k, v in kwargs.items() if k not in _OPTION_NAMES}
    return opts, params


def method_param_specs(decision: str, method: str, *, registry_: Registry | None = None
                       ) -> tuple[ParamSpec, ...]:
    """Every parameter ``method`` takes: its own and those of the chain steps that apply
    to it (e.g. region_split's ``placement``)."""
    dec = (registry_ or registry()).decision(decision)
    m = dec.method(method)
    out = list(m.param_specs)
    for c in dec.chains_of(m):
        out += c.param_specs
    return tuple(out)


def check_params(dec: Decision, m: Method, values: Mapping[str, Any]
                 ) -> tuple[Any, list[tuple[Any, Any]]]:
    """``(the method's params, [(chain, its params)…])`` from user values, validated."""
    where = f"{dec.name}/{m.name}"
    chains = dec.chains_of(m)
    chain_names = {s.name: c for c in chains for s in c.param_specs}
    own = {s.name for s in m.param_specs}
    for k in values:
        if k not in own and k not in chain_names:
            known = [s.name for s in m.param_specs] + list(chain_names)
            raise InputError(f"parameter {k!r}", f"is not a parameter of {where}",
                             f"its parameters: {', '.join(known) or 'none'}")
    params = build_params(m.params, {k: v for k, v in values.items() if k in own}, where)
    chained = [(c, build_params(c.params, {k: v for k, v in values.items()
                                           if chain_names.get(k) is c}, where))
               for c in chains]
    return params, chained


def make_instance(decision: str, instance: Any, chip: Any = None, *,
                  registry_: Registry | None = None, **options: Any) -> Any:
    """Build a decision's instance from ``instance`` (a library network name or a file,
    a ``Workload``, whatever the decision reads — an STG file, a neuron graph … — or a
    ready instance) and a chip (name, file, ``Hardware``; default: the decision's
    natural preset). ``options`` are the decision's instance options (``objective``,
    ``batch`` …; see ``Problem.instance_options``)."""
    from chipsched.instances.chips import get_chip

    dec = (registry_ or registry()).decision(decision)
    known = dec.problem.instance_options
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InputError(f"{decision} option {unknown[0]!r}", "does not apply",
                         f"options of {decision}: {', '.join(known) or 'none'}")
    if isinstance(instance, str) and instance.startswith("lib:"):
        return _library_instance(dec.name, instance[4:], chip, options)
    hw = get_chip(chip if chip is not None else dec.problem.default_chip)
    return dec.load_instance(instance, hw, **options)


def _library_instance(decision: str, name: str, chip: Any, options: Mapping[str, Any]
                      ) -> Any:
    """``lib:ID``: a chipsched-lib instance, exactly as published (its own chip and
    options; checked against its fingerprint)."""
    from chipsched import library

    e = library.entry(name)
    if e.decision != decision:
        raise InputError(f"instance lib:{name}", f"is a {e.decision} instance, not "
                         f"{decision}", f"use chipsched solve {e.decision} …")
    given = [k for k, v in options.items() if v is not None] + (["chip"] if chip else [])
    if given:
        raise InputError(f"instance lib:{name}", f"fixes its chip and options; "
                         f"{given[0]} cannot change it", "leave it out, or build the "
                         f"instance from its spec: -i {e.spec} -c {e.chip_spec}")
    return library.build_instance(e)


def _warm_solution(dec: Decision, instance: Any, warm: Any, opts: SolveOptions,
                   reg: Registry, seen: tuple[str, ...], budget: Budget
                   ) -> WarmStart | None:
    """The checked :class:`WarmStart` for the ``warm_start`` given to ``solve``: a
    method's name (run first, on a share of the run's budget), a ``Result``, a result
    file's path or dict, or a solution; the evaluator must accept it on ``instance``."""
    if warm is None:
        return None
    if isinstance(warm, WarmStart):
        return warm
    if isinstance(warm, Result):
        if warm.decision != dec.name:
            raise InputError("warm start", f"is a {warm.decision} result, not {dec.name}")
        if warm.solution is None:
            raise InputError("warm start", f"the {warm.method} result has no solution "
                             f"({warm.status.value})", "give a run that found one")
        sol, origin = warm.solution, f"{warm.method} result"
    elif isinstance(warm, str) and warm in dec.methods:
        if warm in seen:
            raise InputError("warm start", f"{' → '.join((*seen, warm))} is circular")
        res = solve(dec.name, instance, warm, options=opts.replace(warm_start=None),
                    budget=budget.share(WARM_START_SHARE), registry_=reg,
                    _chain=(*seen, warm))
        if res.solution is None:
            raise InputError("warm start", f"{warm} gave no solution ({res.status.value}"
                             + (f": {res.message}" if res.message else "") + ")")
        return WarmStart(res.solution, float(res.objective), f"{warm} (seed {opts.seed})")
    elif isinstance(warm, (str, os.PathLike)):
        p = Path(warm)
        if not p.is_file():
            raise InputError("warm start", f"{str(warm)!r} is neither a {dec.name} method "
                             "nor a result file", "give a method name (chipsched list "
                             f"{dec.name}) or a file written with --out")
        from chipsched.files import read_data

        sol, origin = dec.problem.read_solution(instance, read_data(p)), str(p)
    elif isinstance(warm, Mapping):
        sol, origin = dec.problem.read_solution(instance, warm), "given dict"
    else:
        dec.problem.check_solution(warm)
        sol, origin = warm, "given solution"
    try:
        value, _ = dec.problem.evaluate(instance, sol)
    except InputError as exc:
        raise InputError("warm start", f"is not a solution of "
                         f"{dec.problem.instance_name(instance)}: {exc}",
                         "give a solution of this instance (a result of it, or its file)"
                         ) from None
    return WarmStart(sol, float(value), origin)


def _best_heuristic(dec: Decision, instance: Any, opts: SolveOptions, reg: Registry,
                    method: str, budget: Budget) -> Result | None:
    """The best result among the decision's ``warm_start_from`` heuristics (those that
    apply), to warm-start exact method ``method``; each runs on an equal share of what
    is left of ``budget``."""
    best: Result | None = None
    names = [h for h in dec.warm_start_from if h in dec.methods]
    for k, h in enumerate(names):
        if budget.exhausted():
            break
        try:
            r = solve(dec.name, instance, h, options=opts.replace(warm_start=None,
                                                                  progress=None),
                      budget=budget.share(1.0 / (len(names) - k)), registry_=reg,
                      _chain=(method, h))
        except ConsistencyError:  # a bug in the heuristic: never hidden
            raise
        except ChipschedError:  # not applicable, or failing: the others may still serve
            continue
        if r.objective is not None and (best is None or r.objective < best.objective):
            best = r
    return best


#: a run whose wall time exceeds its time limit by more than 10 % says so in its message
OVERRUN_TOLERANCE = 1.10
#: share of what is left of a run's budget that a warm start named by method gets, and
#: that the automatic warm start's heuristics get together
WARM_START_SHARE = 0.5


def warm_up(decisions: Iterable[str] | None = None, *, registry_: Registry | None = None
            ) -> float:
    """Compile (or load from numba's cache) the kernels of ``decisions`` (default: all)
    in this process; the seconds it took. ``solve`` does this by itself before a run's
    clock starts; call it to fill numba's on-disk cache after an install (``make``
    does), or to pay the cost up front in a long-lived process."""
    reg = registry_ or registry()
    t0 = time.perf_counter()
    for d in (decisions if decisions is not None else reg.decisions()):
        jit.warm_up(d, reg.decision(d).warm_ups)
    return time.perf_counter() - t0


@functools.cache
def _load_backends() -> None:
    """Import the solver backends (OR-Tools, Pyomo with HiGHS) once per process — an
    exact method would otherwise import them on its clock (~2 s on a first run)."""
    import chipsched.solvers.cpsat  # noqa: F401
    import chipsched.solvers.milp  # noqa: F401


def _reachable(dec: Decision, chained: Sequence[tuple[Any, Any]]) -> tuple[str, ...]:
    """The decisions a run can reach: its own and those its chain steps call."""
    out = [dec.name]
    for c, cp in chained:
        out += [d for d in c.uses(cp) if d not in out]
    return tuple(out)


def solve(decision: str, instance: Any, method: str, *, options: SolveOptions | None = None,
          budget: Budget | None = None, registry_: Registry | None = None,
          _chain: tuple[str, ...] = (), **kwargs: Any) -> Result:
    """Run ``method`` of ``decision`` on ``instance`` and return a checked :class:`Result`.

    Keyword arguments that are :class:`SolveOptions` fields (``time_limit``, ``seed``,
    ``threads``, ``mip_gap``, ``warm_start``, ``milp_solver``, ``progress``,
    ``callback``, ``verbose``) set the options; the others are the method's declared
    parameters. ``warm_start`` may be a solution, its ``to_dict()``, a :class:`Result`
    (or a result file's dict), a result file's path, or the name of another method of
    the decision (run first, on a share of the budget).

    The run's :class:`~chipsched.budget.Budget` — ``budget`` when given (a caller's, or
    a share of an enclosing run's), else one of ``time_limit`` seconds — starts after
    the decision's compiled kernels are loaded and covers everything else: the warm
    start, chain steps, the method, checking. The face keeps the best of the method's
    solution, the warm start and the method's own start (``MethodOutput.incumbent``).
    Raises :class:`NotApplicable` when the method does not apply to the instance,
    :class:`InputError` on bad parameters or a warm start that does not fit.
    """
    reg = registry_ or registry()
    dec = reg.decision(decision)
    m = dec.method(method)
    opt_kw, values = split_options(kwargs)
    opts = (options or SolveOptions()).replace(**opt_kw) if opt_kw else (options or
                                                                         SolveOptions())
    params, chained = check_params(dec, m, values)
    problem = dec.problem
    problem.check_instance(instance)
    # compiled kernels are loaded (or compiled, once per install) and an exact method's
    # solver libraries imported before the clock starts: a first run is timed as a second
    t_load = time.perf_counter()
    for d in _reachable(dec, chained):
        jit.warm_up(d, reg.decision(d).warm_ups)
    if m.exact:
        _load_backends()
    load_s = time.perf_counter() - t_load
    if budget is None:
        budget = Budget(opts.time_limit, callback=opts.callback)
    elif not isinstance(budget, Budget):
        raise InputError("budget", f"must be a chipsched.budget.Budget, got {budget!r}",
                         "give time_limit=SECONDS for a plain limit")
    elif not budget.running:
        budget.start()
    if opts.callback is not None and budget.callback is None and budget._parent is None:
        budget.callback = opts.callback
    opts = opts.replace(budget=budget, warm=None)
    for c, cp in chained:
        opts = c.before(instance, opts, cp, m, solve=_chain_solver(reg, dec, (*_chain, method)),
                        methods=tuple(dec.methods))
    # refuse before anything runs: a warm start the method does not take, a method that
    # does not apply (which may depend on whether it gets a warm start)
    if opts.warm_start is not None and not m.warm_start:
        raise InputError("warm start", f"{decision}/{method} takes no warm start",
                         "methods that do: " + ", ".join(n for n, x in dec.methods.items()
                                                          if x.warm_start))
    auto_warm = opts.warm_start is None and opts.auto_warm_start and m.exact and \
        m.warm_start and bool(dec.warm_start_from) and not _chain

    def refuse_unless_applicable(warm: bool) -> None:
        reason = m.not_applicable(instance, params, problem.platform(instance),
                                  problem.describe_platform, warm=warm)
        if reason:
            raise NotApplicable(f"method {decision}/{method}", f"does not apply to "
                                f"{problem.instance_name(instance)}: {reason}", reason=reason)

    # a method that applies only with a warm start applies when the face will find one
    refuse_unless_applicable(opts.warm_start is not None or auto_warm)
    warm_start_s = None
    if auto_warm:
        t_h = budget.elapsed()
        best_h = _best_heuristic(dec, instance, opts, reg, method,
                                 budget.share(WARM_START_SHARE))
        warm_start_s = budget.elapsed() - t_h
        if best_h is not None:
            opts = opts.replace(warm_start=best_h)
        else:
            refuse_unless_applicable(False)
    warm = _warm_solution(dec, instance, opts.warm_start, opts, reg, (*_chain, method),
                          budget)
    opts = opts.replace(warm_start=None, warm=warm)
    if warm is not None:
        budget.improved(warm.objective)
    t_method = budget.elapsed()
    try:
        out = m.run(instance, opts, params)
    except BudgetExhausted as exc:  # stopped between blocks of its model: nothing of its own
        out = MethodOutput(Status.TIME_LIMIT, None, message=f"{exc} "
                           f"({budget.elapsed() - t_method:.3g} s into the method)")
    objective, metrics = _check(dec, m, instance, out)
    out, objective, metrics = _keep_best(dec, m, instance, out, objective, metrics, warm)
    for c, cp in chained:
        # a chain step (e.g. -p placement=…) runs on the method's budget
        new = c.after(instance, out, opts, cp,
                      solve=_chain_solver(reg, dec, (*_chain, method)))
        if new is not out and new.solution is not None:
            value, metrics = problem.evaluate(instance, new.solution)
            if objective is not None and not _close(value, objective, 0.0):
                raise ConsistencyError(f"{decision}/{method}: chain step {c.name} changed "
                                       f"the objective from {objective!r} to {value!r}")
        out = new
    wall = budget.elapsed()
    bound = None if out.bound is None else float(out.bound)
    if out.status is Status.OPTIMAL and objective is not None:
        bound = objective if bound is None else bound
    elif out.status in (Status.TIME_LIMIT, Status.FEASIBLE) and objective is not None and \
            bound is not None and objective - bound <= OBJECTIVE_RTOL * abs(objective):
        # the bound meets the solution (the warm start's, a start's): that is a proof
        out = replace(out, status=Status.OPTIMAL, message=(
            f"{out.message}; " if out.message else "") + "proven optimal by the bound")
    stats = dict(out.stats)
    if warm is not None:
        stats.setdefault("warm_start_from", warm.origin)
        stats.setdefault("warm_start_objective", warm.objective)
    if warm_start_s is not None:  # the heuristics ran on the run's budget, first
        stats["warm_start_s"] = warm_start_s
    if load_s > 0.01:  # kernels and solver libraries loaded before the clock started
        stats["load_s"] = round(load_s, 3)
    if out.objective is not None:
        stats["reported_objective"] = float(out.objective)
    if out.model_objective is not None:
        stats["model_objective"] = float(out.model_objective)
    if objective is not None or bound is not None:
        budget.trace.append((wall, objective, bound))
    if budget.trace and not _chain:
        stats["trace"] = [list(p) for p in budget.trace]
    message = out.message
    if budget.stop_reason and budget.stop_reason != "time limit" and not _chain and \
            budget.stop_reason not in (message or ""):
        why = f"stopped: {budget.stop_reason}"
        message = f"{message}; {why}" if message else why
    if opts.time_limit is not None and wall > OVERRUN_TOLERANCE * opts.time_limit:
        stats["time_limit_overrun_s"] = wall - opts.time_limit
        note = (f"ran {wall:.3g} s against a time limit of {opts.time_limit:g} s "
                f"(+{100 * (wall / opts.time_limit - 1):.0f} %: one uninterruptible step "
                "of the method — a solver call, a library call or a block of model "
                "building — outlasted the budget)")
        message = f"{message}; {note}" if message else note
    metrics = {**metrics, **({"solver": stats} if stats else {})}
    obj = problem.objective(instance)
    return Result(decision=decision, method=method, status=out.status, objective=objective,
                  bound=bound, wall_s=wall, seed=opts.seed if m.randomized or m.exact
                  else None, solution=out.solution, metrics=metrics, objective_name=obj.name,
                  objective_unit=obj.unit, message=message,
                  instance=problem.instance_name(instance),
                  space=m.space if out.space is None else out.space)


def _keep_best(dec: Decision, m: Method, instance: Any, out: MethodOutput,
               objective: float | None, metrics: dict, warm: WarmStart | None
               ) -> tuple[MethodOutput, float | None, dict]:
    """The rule "never report worse than the start", in one place: a run that ends
    without a proof reports the best of its own solution, the warm start it was handed
    and its own start (``out.incumbent``). The method's bound stays when it bounds the
    reported solution (a restricted-space bound above a warm start from outside that
    space is moved to ``stats['space_bound']``). A full-space method that proves an
    optimum (or infeasibility) worse than a feasible warm start is a bug."""
    name = f"{dec.name}/{m.name}"
    space = m.space if out.space is None else out.space
    if warm is not None and not space:
        if out.status is Status.OPTIMAL and objective is not None and \
                warm.objective < objective and not _close(warm.objective, objective,
                                                          out.objective_tol):
            raise ConsistencyError(f"{name} proved {objective!r} optimal, but its warm "
                                   f"start ({warm.origin}) has {warm.objective!r}")
        if out.status is Status.INFEASIBLE:
            raise ConsistencyError(f"{name} proved the instance infeasible, but its warm "
                                   f"start ({warm.origin}) is a solution")
    if out.status in (Status.OPTIMAL, Status.INFEASIBLE, Status.ERROR, Status.SKIPPED,
                      Status.BOUND_ONLY):
        return out, objective, metrics
    cands: list[tuple[float, str, Any]] = []
    if warm is not None:
        cands.append((warm.objective, "warm start", warm.solution))
    if out.incumbent is not None:
        try:
            dec.problem.check_solution(out.incumbent)
            v, _ = dec.problem.evaluate(instance, out.incumbent)
        except InputError as exc:
            raise ConsistencyError(f"{name} returned an invalid start: {exc}") from None
        cands.append((float(v), "its start", out.incumbent))
    if not cands:
        return out, objective, metrics
    value, what, sol = min(cands, key=lambda c: c[0])
    if objective is not None and (value >= objective or _close(value, objective, 0.0)):
        return out, objective, metrics
    value, metrics = dec.problem.evaluate(instance, sol)
    value = float(value)
    stats = {**out.stats, "returned": what}
    bound = out.bound
    if bound is not None and bound > value and not _close(bound, value, out.objective_tol):
        stats["space_bound"] = bound  # bounds the method's space, which sol is outside
        bound = None
    why = ("the method found no solution" if out.solution is None else
           f"the method ended above it ({objective:.6g})")
    note = f"{why}: {what} reported" + (" with the method's bound" if bound is not None
                                         else "")
    status = out.status if out.solution is not None else Status.TIME_LIMIT
    return (replace(out, status=status, solution=sol, objective=value, bound=bound,
                    stats=stats, message=f"{out.message}; {note}" if out.message else note,
                    model_objective=None), value, metrics)


def _chain_solver(reg: Registry, dec: Decision, seen: tuple[str, ...]) -> Callable[..., Result]:
    """``solve`` for a chain step: any decision, with the chain so far (no cycles)."""

    def run(decision: str, instance: Any, method: str, **kw: Any) -> Result:
        if decision == dec.name and method in seen:
            raise InputError("chain", f"{' → '.join((*seen, method))} is circular")
        return solve(decision, instance, method, registry_=reg, _chain=seen, **kw)

    return run


def _check(dec: Decision, m: Method, instance: Any, out: Any) -> tuple[float | None, dict]:
    """The evaluator's objective and metrics of ``out``, checked against the method's own
    numbers (the consistency check of every run)."""
    name = f"{dec.name}/{m.name}"
    if not isinstance(out, MethodOutput):
        raise ConsistencyError(f"{name} returned {type(out).__name__}, not MethodOutput")
    if out.solution is None:
        return None, {}
    if out.objective is None:
        raise ConsistencyError(f"{name} returned a solution without its own objective "
                               "(a method reports the value its model or tally gives)")
    try:
        dec.problem.check_solution(out.solution)
        objective, metrics = dec.problem.evaluate(instance, out.solution)
    except InputError as exc:  # the method's own solution: a bug, not bad input
        raise ConsistencyError(f"{name} returned an invalid solution: {exc}") from None
    objective = float(objective)
    if not _close(out.objective, objective, out.objective_tol):
        raise ConsistencyError(f"{name} reported objective {out.objective!r} but the "
                               f"evaluator gives {objective!r}")
    if out.model_objective is not None:
        slack = max(float(out.model_tol), OBJECTIVE_RTOL * abs(out.model_objective))
        if objective > out.model_objective + slack:
            raise ConsistencyError(f"{name}: its model values the solution at "
                                   f"{out.model_objective!r}, the evaluator at {objective!r} "
                                   f"(more than the model's rounding, {slack!r})")
    if out.bound is not None and out.bound > objective and \
            not _close(out.bound, objective, out.objective_tol):
        raise ConsistencyError(f"{name}: bound {out.bound!r} above the objective "
                               f"{objective!r} of its own solution")
    return objective, metrics


def _close(a: float, b: float, tol: float) -> bool:
    # no absolute floor: objectives of 1e-18 J²·s are as real as 1e3 hops
    return math.isclose(a, b, rel_tol=OBJECTIVE_RTOL, abs_tol=float(tol))


def compare(decision: str, instance: Any, methods: Sequence[str] | None = None, *,
            seeds: Iterable[int] = (0,), options: SolveOptions | None = None,
            registry_: Registry | None = None,
            exact_time_limit: float | None = DEFAULT_EXACT_TIME_LIMIT,
            on_result: Callable[[Result, int, int], None] | None = None,
            on_start: Callable[[str, int, int, int], None] | None = None,
            **kwargs: Any) -> list[Result]:
    """Run several methods (default: every method of the decision) on one instance.

    Never aborts on a method: one that does not apply is a ``skipped`` result with the
    reason, one that fails (an error, a time-out without a solution, a consistency
    failure) a result with status ``error`` (or its own) and the message. Randomized
    methods run once per seed, the others once. Exact and bound methods without a time
    limit in ``options`` get ``exact_time_limit`` seconds. Method parameters among ``kwargs`` go
    to the methods that take them (one that no method takes is an error); a
    ``warm_start`` naming a method runs it once and warm-starts every method that takes
    warm starts. ``on_start(method, seed, done, total)`` is called before each run and
    ``on_result(result, done, total)`` after it (the CLI's progress line).
    """
    reg = registry_ or registry()
    dec = reg.decision(decision)
    names = list(methods) if methods else list(dec.methods)
    for n in names:
        dec.method(n)  # fail fast on an unknown name
    opt_kw, values = split_options(kwargs)
    base = (options or SolveOptions()).replace(**opt_kw) if opt_kw else (options or
                                                                         SolveOptions())
    accepted = {n: {s.name for s in method_param_specs(decision, n, registry_=reg)}
                for n in names}
    for k in values:
        if not any(k in a for a in accepted.values()):
            raise InputError(f"parameter {k!r}", f"is taken by none of the methods compared "
                             f"({', '.join(names)})")
    for n in names:  # bad values are bad input: refused before anything runs
        check_params(dec, dec.method(n), {a: v for a, v in values.items() if a in accepted[n]})
    seeds = list(seeds)
    runs = [(n, s) for n in names for s in (seeds if dec.method(n).randomized else seeds[:1])]
    warm, shared = _shared_warm_start(dec, instance, base, values, reg, exact_time_limit)
    results: list[Result] = []
    for k, (n, s) in enumerate(runs):
        m = dec.method(n)
        if on_start is not None:
            on_start(n, s, k, len(runs))
        if shared is not None and n == shared.method and s == base.seed:
            res = shared
        else:
            mine = {a: v for a, v in values.items() if a in accepted[n]}
            # the warm start's own method runs cold with its other seeds
            takes = m.warm_start and not (shared is not None and n == shared.method)
            opts = base.replace(seed=s, warm_start=warm if takes else None)
            res = _guarded(dec, instance, n, opts, mine, reg, exact_time_limit)
        results.append(res)
        if on_result is not None:
            on_result(res, k + 1, len(runs))
    return results


def _shared_warm_start(dec: Decision, instance: Any, base: SolveOptions,
                       values: Mapping[str, Any], reg: Registry,
                       exact_time_limit: float | None) -> tuple[Any, Result | None]:
    """``compare``'s warm start, resolved once before any method runs: (the checked
    warm start, the run of the named method that made it, if any). Bad input — an unknown file, a
    method that does not apply or finds nothing — is an :class:`InputError`."""
    warm = base.warm_start
    if warm is None:
        return None, None
    if isinstance(warm, str) and warm in dec.methods:
        mine = {a: v for a, v in values.items()
                if a in {s.name for s in method_param_specs(dec.name, warm, registry_=reg)}}
        shared = _guarded(dec, instance, warm, base.replace(warm_start=None), mine, reg,
                          exact_time_limit)
        if shared.solution is None:
            raise InputError("warm start", f"{warm} gave no solution ({shared.status.value}"
                             + (f": {shared.message}" if shared.message else "") + ")",
                             f"choose a method that applies to "
                             f"{dec.problem.instance_name(instance)}")
        return WarmStart(shared.solution, float(shared.objective),
                         f"{warm} (seed {base.seed})"), shared
    return _warm_solution(dec, instance, warm, base, reg, (), Budget(None)), None


def _guarded(dec: Decision, instance: Any, name: str, opts: SolveOptions,
             params: Mapping[str, Any], reg: Registry, exact_time_limit: float | None
             ) -> Result:
    """``solve`` that turns every failure into a result row (compare and bench)."""
    m = dec.method(name)
    if m.limited_by_default and opts.time_limit is None and exact_time_limit is not None:
        opts = opts.replace(time_limit=exact_time_limit)
    t0 = time.perf_counter()
    seed = opts.seed if m.randomized or m.exact else None
    iname = dec.problem.instance_name(instance)
    try:
        return solve(dec.name, instance, name, options=opts, registry_=reg, **params)
    except NotApplicable as exc:
        return Result(dec.name, name, Status.SKIPPED, seed=seed, instance=iname,
                      message=exc.reason, space=m.space)
    except ChipschedError as exc:
        return Result(dec.name, name, Status.ERROR, wall_s=time.perf_counter() - t0,
                      seed=seed, instance=iname, message=str(exc), space=m.space)
    except Exception as exc:  # noqa: BLE001 - compare records a crashing method and goes on
        return Result(dec.name, name, Status.ERROR, wall_s=time.perf_counter() - t0,
                      seed=seed, instance=iname, message=crash_message(exc), space=m.space)


def crash_message(exc: BaseException) -> str:
    """``TypeName: message (file.py:line)`` of an unexpected exception (a bug)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def best_bound(results: Iterable[Result]) -> float | None:
    """The strongest proven lower bound on the decision among the results (minimization).

    Bounds of methods that search a restricted space (``Result.space``, e.g. tile_groups'
    segmented space or a fixed partition's placements) bound that space only — a
    method of the full space may beat them — so they do not count.
    """
    bounds = [r.bound for r in results if r.bound is not None and not r.space]
    return max(bounds) if bounds else None


def best_found(results: Iterable[Result]) -> float | None:
    """The best objective found among the results (minimization)."""
    objs = [r.objective for r in results if r.objective is not None]
    return min(objs) if objs else None


def any_solution(results: Iterable[Result]) -> bool:
    """True when at least one run produced a solution (``compare``'s exit code 0)."""
    return any(r.solution is not None and r.objective is not None for r in results)
