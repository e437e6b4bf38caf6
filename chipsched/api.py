"""The Python face: ``solve``, ``compare`` and instance construction by decision name.

Every method's solution is re-evaluated here with its decision's evaluator (the
shared cost model), so ``Result.objective`` is always the evaluator's number; a
method that reports a different value, or an "optimal" run whose bound exceeds its
objective, is a bug and raises :class:`ConsistencyError`.
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from chipsched.errors import ChipschedError, InputError
from chipsched.result import Result, Status
from chipsched.solvers.options import SolveOptions
from chipsched.solvers.registry import REGISTRY, MethodOutput, Registry

#: Modules whose import registers decisions (their DecisionSpec) and methods. Each
#: decision adds its modules here when it lands.
DECISION_MODULES: tuple[str, ...] = (
    "chipsched.instances.op_placement",
    "chipsched.formulations.op_placement",
    "chipsched.heuristics.op_placement",
    "chipsched.instances.tile_groups",
    "chipsched.formulations.tile_groups",
    "chipsched.heuristics.tile_groups",
    "chipsched.instances.region_split",
    "chipsched.formulations.region_split",
    "chipsched.heuristics.region_split",
    "chipsched.instances.core_assignment",
    "chipsched.formulations.core_assignment",
    "chipsched.heuristics.core_assignment",
)

#: Relative tolerance between a method's reported objective and the evaluator's.
OBJECTIVE_RTOL = 1e-6

_OPTION_NAMES = {f.name for f in fields(SolveOptions)}


class ConsistencyError(ChipschedError, AssertionError):
    """A method's numbers disagree with the shared cost model (a bug, not bad input)."""


def registry() -> Registry:
    """The default registry with every landed decision module imported."""
    for mod in DECISION_MODULES:
        importlib.import_module(mod)
    return REGISTRY


def split_options(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split keyword arguments into SolveOptions fields and method parameters."""
    opts = {k: v for k, v in kwargs.items() if k in _OPTION_NAMES}
    params = {k: v for k, v in kwargs.items() if k not in _OPTION_NAMES}
    return opts, params


def method_params(decision: str, method: str, *, registry_: Registry | None = None
                  ) -> dict[str, Any]:
    """The parameters a method takes beyond (instance, options), with their defaults."""
    import inspect

    m = (registry_ or registry()).get(decision, method)
    sig = inspect.signature(m.func)
    return {name: (None if p.default is inspect.Parameter.empty else p.default)
            for name, p in list(sig.parameters.items())[2:]
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _check_params(decision: str, method: str, params: dict[str, Any], reg: Registry) -> None:
    known = method_params(decision, method, registry_=reg)
    for k in params:
        if k not in known:
            raise InputError(f"parameter {k!r}", f"is not a parameter of {decision}/{method}",
                             f"its parameters: {', '.join(known) or 'none'}")


def make_instance(decision: str, instance: Any, chip: Any = None, *,
                  registry_: Registry | None = None, **options: Any) -> Any:
    """Build a decision's instance from ``instance`` (a network name or file, a
    ``Workload``, or whatever the decision reads: an STG file, a neuron graph …) and a
    chip (name, file, ``Hardware``; default: the decision's natural preset).

    The decision's ``make_instance`` resolves ``instance`` itself (usually with
    ``chipsched.instances.networks.get_network``).
    """
    from chipsched.instances.chips import get_chip

    spec = (registry_ or registry()).decision(decision)
    unknown = set(options) - set(spec.instance_options)
    if unknown:
        raise InputError(f"{decision} option {sorted(unknown)[0]!r}", "does not apply",
                         f"options of {decision}: {', '.join(spec.instance_options) or 'none'}")
    hw = get_chip(chip if chip is not None else spec.default_chip)
    return spec.make_instance(instance, hw, **options)


def solve(decision: str, instance: Any, method: str, *, options: SolveOptions | None = None,
          registry_: Registry | None = None, **kwargs: Any) -> Result:
    """Run ``method`` of ``decision`` on ``instance`` and return a checked :class:`Result`.

    Keyword arguments that are :class:`SolveOptions` fields (``time_limit``, ``seed``,
    ``threads``, ``mip_gap``, ``warm_start``, ``milp_solver``, ``progress``,
    ``verbose``) set the options; the others go to the method. ``warm_start`` may be a
    solution or a :class:`Result`.
    """
    reg = registry_ or registry()
    spec = reg.decision(decision)
    m = reg.get(decision, method)
    opt_kw, params = split_options(kwargs)
    if isinstance(opt_kw.get("warm_start"), Result):
        opt_kw["warm_start"] = opt_kw["warm_start"].solution
    opts = (options or SolveOptions()).replace(**opt_kw) if opt_kw else (options or SolveOptions())
    _check_params(decision, method, params, reg)
    t0 = time.perf_counter()
    out = m.func(instance, opts, **params)
    wall = time.perf_counter() - t0
    if not isinstance(out, MethodOutput):
        raise ConsistencyError(f"{decision}/{method} returned {type(out).__name__}, "
                               "not MethodOutput")
    objective, metrics = None, {}
    if out.solution is not None:
        objective, metrics = spec.evaluate(instance, out.solution)
        objective = float(objective)
        if out.objective is not None and not _close(out.objective, objective):
            raise ConsistencyError(
                f"{decision}/{method} reported objective {out.objective!r} but the evaluator "
                f"gives {objective!r}")
    bound = None if out.bound is None else float(out.bound)
    if bound is not None and objective is not None and bound > objective and \
            not _close(bound, objective):
        raise ConsistencyError(f"{decision}/{method}: bound {bound!r} above the objective "
                               f"{objective!r} of its own solution")
    if out.status is Status.OPTIMAL and objective is not None:
        bound = objective if bound is None else bound
    metrics = {**metrics, **({"solver": out.stats} if out.stats else {})}
    return Result(decision=decision, method=method, status=out.status, objective=objective,
                  bound=bound, wall_s=wall, seed=opts.seed if m.randomized or
                  m.kind == "exact" else None, solution=out.solution, metrics=metrics,
                  objective_name=str(getattr(instance, "objective_name", "")),
                  message=out.message, instance=spec.instance_name(instance),
                  space=m.space)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=OBJECTIVE_RTOL, abs_tol=1e-12)


def compare(decision: str, instance: Any, methods: Sequence[str] | None = None, *,
            seeds: Iterable[int] = (0,), options: SolveOptions | None = None,
            registry_: Registry | None = None, progress: bool = False,
            **kwargs: Any) -> list[Result]:
    """Run several methods (default: all of the decision's) on one instance.

    Randomized methods run once per seed; deterministic ones once. The list is in the
    order run; use :func:`best_bound` and ``Result.versus`` for the headline numbers.
    Method parameters among ``kwargs`` go to the methods that take them; one that no
    method takes is an error.
    """
    reg = registry_ or registry()
    names = list(methods) if methods else list(reg.methods(decision))
    for n in names:
        reg.get(decision, n)  # fail fast on an unknown name
    opt_kw, params = split_options(kwargs)
    accepted = {n: set(method_params(decision, n, registry_=reg)) for n in names}
    for k in params:
        if not any(k in a for a in accepted.values()):
            raise InputError(f"parameter {k!r}", f"is taken by none of the methods compared "
                             f"({', '.join(names)})")
    seeds = list(seeds)
    runs = [(n, s) for n in names for s in (seeds if reg.get(decision, n).randomized
                                             else seeds[:1])]
    results: list[Result] = []
    bar = _progress(progress, len(runs), f"compare {decision}")
    with bar as p:
        task = p.add_task(f"{decision}", total=len(runs)) if p else None
        for n, s in runs:
            if p:
                p.update(task, description=f"{decision}: {n} (seed {s})")
            mine = {k: v for k, v in params.items() if k in accepted[n]}
            results.append(solve(decision, instance, n, options=options, registry_=reg,
                                 **{**opt_kw, "seed": s}, **mine))
            if p:
                p.advance(task)
    return results


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


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _progress(enabled: bool, total: int, what: str) -> Any:
    if not enabled or total < 2:
        return _NoProgress()
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(),
                    TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True)
