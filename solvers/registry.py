"""The method registry: every method is registered once, by decision and name.

Decision modules register their methods with :func:`register` when imported; the
face (``chipsched.api``, the CLI, the bench runner, ``chipsched list``) finds them
here by name. A method is a callable ``(instance, options: SolveOptions, **params)
-> MethodOutput``; the face times it, evaluates its solution with the decision's
evaluator and wraps everything into a :class:`chipsched.result.Result`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chipsched.errors import UnknownNameError
from chipsched.result import Status

#: The four decisions, the same names in every folder, the CLI and the docs.
DECISIONS = ("region_split", "tile_groups", "op_placement", "core_assignment")

KINDS = ("exact", "heuristic", "baseline", "oracle", "peer")


@dataclass(frozen=True)
class MethodOutput:
    """What a method hands back to the face.

    ``objective`` is the value the method believes its solution has (the face checks
    it against the evaluator); ``bound`` a proven bound (exact methods).
    """

    status: Status
    solution: Any = None
    objective: float | None = None
    bound: float | None = None
    message: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    decision: str
    name: str
    func: Callable[..., MethodOutput]
    kind: str
    summary: str
    source: str = ""  # where it comes from: a seed document, a paper, a library
    randomized: bool = False
    space: str = ""  # the solution space it searches, when that differs between methods


@dataclass(frozen=True)
class DecisionSpec:
    """How the face handles one decision.

    ``make_instance(instance, chip, **options)`` builds an instance from the user's
    ``--instance`` (a network name or file, a ``Workload``, or a file of the decision's
    own formats — the decision resolves it) and a ``Hardware`` (``options`` are the
    CLI's ``--objective``, ``--batch``, ``--processors`` … named in
    ``instance_options``); ``evaluate(instance, solution)`` returns
    ``(objective, metrics)`` from the shared cost model — every reported number comes
    from it; ``render(instance, result)`` gives a rich renderable for the terminal.
    Every objective is minimized.
    """

    name: str
    summary: str
    default_chip: str
    make_instance: Callable[..., Any]
    evaluate: Callable[[Any, Any], tuple[float, dict[str, Any]]]
    render: Callable[[Any, Any], Any] | None = None
    instance_options: tuple[str, ...] = ()
    instance_name: Callable[[Any], str] = lambda inst: str(getattr(inst, "name", ""))
    #: a size for bench plots (layers, ops, vertices …); default ``len(instance)``
    instance_size: Callable[[Any], float] | None = None


class Registry:
    """Name → :class:`Method`, per decision, and the :class:`DecisionSpec` of each."""

    def __init__(self, decisions: tuple[str, ...] = DECISIONS) -> None:
        self._methods: dict[str, dict[str, Method]] = {d: {} for d in decisions}
        self._specs: dict[str, DecisionSpec] = {}

    def add_decision(self, spec: DecisionSpec) -> DecisionSpec:
        if spec.name not in self._methods:
            raise UnknownNameError("decision", spec.name, self._methods)
        self._specs[spec.name] = spec
        return spec

    def decision(self, name: str) -> DecisionSpec:
        if name not in self._methods:
            raise UnknownNameError("decision", name, self._methods)
        if name not in self._specs:
            from chipsched.errors import InputError

            raise InputError(f"decision {name!r}", "is not implemented yet",
                             "see `chipsched list` for what is available")
        return self._specs[name]

    def has_decision(self, name: str) -> bool:
        return name in self._specs

    def add(self, method: Method) -> Method:
        if method.decision not in self._methods:
            raise UnknownNameError("decision", method.decision, self._methods)
        if method.kind not in KINDS:
            raise ValueError(f"method kind {method.kind!r} not in {KINDS}")
        table = self._methods[method.decision]
        if method.name in table and table[method.name].func is not method.func:
            raise ValueError(f"method {method.decision}/{method.name} registered twice")
        table[method.name] = method
        return method

    def get(self, decision: str, name: str) -> Method:
        table = self.methods(decision)
        if name not in table:
            if not table:
                from chipsched.errors import InputError

                raise InputError(f"decision {decision!r}", "has no methods registered yet",
                                 "see `chipsched list`")
            raise UnknownNameError(f"{decision} method", name, table)
        return table[name]

    def methods(self, decision: str) -> dict[str, Method]:
        if decision not in self._methods:
            raise UnknownNameError("decision", decision, self._methods)
        return dict(self._methods[decision])

    def decisions(self) -> tuple[str, ...]:
        return tuple(self._methods)


REGISTRY = Registry()


def register(decision: str, name: str, kind: str, summary: str, *, source: str = "",
             randomized: bool = False, space: str = "", registry: Registry | None = None
             ) -> Callable[[Callable], Callable]:
    """Decorator: register ``func`` as method ``name`` of ``decision``."""

    def deco(func: Callable) -> Callable:
        (registry or REGISTRY).add(
            Method(decision, name, func, kind, summary, source, randomized, space))
        return func

    return deco
