"""The Problem protocol: one shape for the four decisions.

Each decision exports one :class:`Problem` as ``chipsched.problems.<decision>.PROBLEM``
(in the spirit of PyJobShop's ProblemData → Model → Result split): the instance and
solution types, :attr:`Problem.make_instance` building an instance from model objects
(a ``Workload`` or a ``NeuronGraph`` and a ``Hardware``), :attr:`Problem.evaluate` — the
only place objective values are computed —, the objectives with their units, and
:meth:`Problem.solution_from_dict`, so that every solution written with ``--out`` reads
back as a warm start.

Variants of one decision (region_split's chiplet grid of seed 000 and processor chain of
seed 001) are *platforms*: every instance says which one it is (``instance.platform``)
and every method declares the platforms it serves.

Reading instance specs (library names, files in the decision's formats) is the job of
``chipsched.instances.<decision>.load_instance``, which ends in ``make_instance``; this
module, like the rest of the core model, imports none of ``formulations``,
``heuristics``, ``instances`` or ``solvers``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chipsched.errors import InputError
from chipsched.objective import Objective, ObjectiveSet


@dataclass(frozen=True)
class Problem:
    """One decision: what an instance and a solution are, how a solution is scored.

    ``make_instance(source, hardware, **options)`` builds an instance (``options`` are
    the names in ``instance_options``, e.g. ``objective``, ``batch``); ``evaluate(
    instance, solution) -> (objective, metrics)``; ``solution_from_dict(instance, data)``
    inverts ``solution.to_dict()``; ``objectives(instance)`` the set the instance's
    objective comes from. Every instance has ``.name``, ``.objective`` (an
    :class:`~chipsched.objective.Objective`) and, when the decision has several
    ``platforms`` (name → what it is, e.g. ``"soc": "a processor chain (seed 001)"``),
    ``.platform``. ``instance_size`` is a size in ``size_unit`` for plots against size.
    Every objective is minimized.
    """

    name: str
    summary: str
    default_chip: str
    instance_types: tuple[type, ...]
    solution_types: tuple[type, ...]
    make_instance: Callable[..., Any]
    evaluate: Callable[[Any, Any], tuple[float, dict[str, Any]]]
    solution_from_dict: Callable[[Any, Mapping[str, Any]], Any]
    objectives: Callable[[Any], ObjectiveSet]
    instance_options: tuple[str, ...] = ()
    platforms: Mapping[str, str] = field(default_factory=dict)
    instance_size: Callable[[Any], float] = lambda inst: float(len(inst))
    size_unit: str = "items"

    def objective(self, instance: Any) -> Objective:
        """The objective (name, unit) the instance is scored by."""
        return instance.objective

    def platform(self, instance: Any) -> str:
        """The instance's platform (``""`` for a decision with one)."""
        return str(getattr(instance, "platform", "")) if self.platforms else ""

    def describe_platform(self, platform: str) -> str:
        return self.platforms.get(platform, platform or "of another kind")

    def instance_name(self, instance: Any) -> str:
        return str(getattr(instance, "name", ""))

    def check_instance(self, instance: Any) -> None:
        """An :class:`InputError` unless ``instance`` is one of this decision's."""
        if not isinstance(instance, self.instance_types):
            raise InputError("instance", f"a {type(instance).__name__} is not a {self.name} "
                             "instance", f"build one with chipsched.make_instance("
                             f"{self.name!r}, …)")

    def check_solution(self, solution: Any) -> None:
        if not isinstance(solution, self.solution_types):
            kinds = " or ".join(t.__name__ for t in self.solution_types)
            raise InputError("solution", f"a {type(solution).__name__} is not a {self.name} "
                             "solution", f"expected {kinds}")

    def read_solution(self, instance: Any, data: Any, field: str = "warm start") -> Any:
        """A solution of ``instance`` from ``data``: a solution (returned as is), its
        ``to_dict()`` form, or a ``--json``/``--out`` result holding one under
        ``solution``. The solution is checked by evaluating it; errors name ``field``."""
        if isinstance(data, self.solution_types):
            return data
        if not isinstance(data, Mapping):
            raise InputError(field, f"a {type(data).__name__} is not a {self.name} "
                             "solution", "give a result file written with --out")
        if "solution" in data and data["solution"] is None:
            raise InputError(field, f"the result has no solution (its run ended "
                             f"{data.get('status', 'without one')})", "give a run that found one")
        if "solution" in data and isinstance(data["solution"], Mapping):
            if data.get("decision") not in (None, self.name):
                raise InputError(field, f"is a {data['decision']} result, not "
                                 f"{self.name}", "give a result of the same decision")
            data = data["solution"]
        sol = self.solution_from_dict(instance, data)
        self.evaluate(instance, sol)
        return sol
