"""A toy decision in its own registry ("pick the smallest number of a tuple") for the
face's tests: solve, compare, bench, the consistency check, declared parameters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chipsched.errors import InputError
from chipsched.method import MethodOutput, method, methods_of, param
from chipsched.objective import Objective, ObjectiveSet
from chipsched.problem import Problem
from chipsched.registry import Decision, Registry, collect
from chipsched.result import Status

OBJ = ObjectiveSet("toy", (Objective("value", "u", "the picked number", (("value", 1.0),)),),
                   default="value")


class Toy(tuple):
    """An instance: a tuple of numbers with an objective."""

    objective = OBJ.get("value")
    name = "toy"


def make(spec: Any, chip: Any, scale: float = 1) -> Toy:
    if isinstance(spec, Toy):
        return spec
    if spec == "broken":
        raise InputError("instance", "broken on purpose")
    if isinstance(spec, str):
        spec = spec.split(",")
    return Toy(scale * float(x) for x in spec)


def evaluate(inst: Toy, sol: int) -> tuple[float, dict[str, Any]]:
    if not 0 <= sol < len(inst):
        raise InputError("solution", f"index {sol} out of range")
    return float(inst[sol]), {"index": sol}


def from_dict(inst: Toy, data: Mapping[str, Any]) -> int:
    return int(data["index"])


PROBLEM = Problem("toy", "pick the smallest number", "edge-4x4", (Toy,), (int,), make,
                  evaluate, from_dict, lambda inst: OBJ, instance_options=("scale",),
                  instance_size=lambda inst: float(len(inst)), size_unit="numbers")


@method("toy", "exact", "exact", "enumerates")
def exact(inst, options):
    i = min(range(len(inst)), key=inst.__getitem__)
    return MethodOutput(Status.OPTIMAL, i, float(inst[i]), float(inst[i]))


@method("toy", "first", "heuristic", "takes the first (or the warm start)", warm_start=True)
def first(inst, options):
    i = 0 if options.warm is None else options.warm_solution
    return MethodOutput(Status.FEASIBLE, i, float(inst[i]))


@method("toy", "random", "heuristic", "random index", randomized=True)
def rand(inst, options):
    i = options.seed % len(inst)
    return MethodOutput(Status.FEASIBLE, i, float(inst[i]))


@dataclass(frozen=True)
class NthParams:
    n: int = param(0, "which item", ge=0)
    scale: float = param(1.0, "a number that must be positive", gt=0)
    how: str = param("plain", "a choice", choices=("plain", "fancy"))


@method("toy", "nth", "heuristic", "the n-th item", params=NthParams)
def nth(inst, options, params: NthParams):
    i = params.n % len(inst)
    return MethodOutput(Status.FEASIBLE, i, float(inst[i]))


@method("toy", "short", "heuristic", "needs at most 3 numbers",
        applies=lambda inst, params, warm: None if len(inst) <= 3 else "more than 3 numbers")
def short(inst, options):
    return MethodOutput(Status.FEASIBLE, len(inst) - 1, float(inst[-1]))


@method("toy", "liar", "heuristic", "misreports")
def liar(inst, options):
    return MethodOutput(Status.FEASIBLE, 0, float(inst[0]) - 1)


@method("toy", "silent", "heuristic", "reports no objective")
def silent(inst, options):
    return MethodOutput(Status.FEASIBLE, 0)


@method("toy", "overbound", "exact", "bound above its objective")
def overbound(inst, options):
    return MethodOutput(Status.TIME_LIMIT, 0, float(inst[0]), float(inst[0]) + 5)


@method("toy", "crash", "heuristic", "raises")
def crash(inst, options):
    raise RuntimeError("bug in a method")


@method("toy", "nothing", "exact", "times out without a solution")
def nothing(inst, options):
    return MethodOutput(Status.TIME_LIMIT, None, bound=0.0, message="no solution in time")


def registry(*names: str) -> Registry:
    """The toy registry with the named methods (default: all)."""
    import sys

    ms = methods_of(sys.modules[__name__])
    if names:
        ms = [m for m in ms if m.name in names]
    return Registry([Decision(PROBLEM, collect(ms), make)])
