"""The registry: every decision and its methods, found by name.

Adding a decision is one edit: its name in :data:`DECISIONS`. By convention the
decision ``X`` then has

* ``chipsched.problems.X.PROBLEM`` — the :class:`~chipsched.problem.Problem`;
* ``chipsched.instances.X`` — ``load_instance(spec, hardware, **options)`` (library
  names, files of the decision's formats → ``PROBLEM.make_instance``) and
  ``render(instance, result)`` (a rich renderable for ``chipsched solve``), optionally
  ``plot_compare(instance, results, path, best_bound=, best_found=)`` (the picture of
  ``chipsched compare --plot`` and of ``solve --plot`` for a run without a solution;
  without it a generic chart of the objectives), and a ``warm_up_kernels()`` where its
  readers have numba kernels;
* ``chipsched.formulations.X`` and ``chipsched.heuristics.X`` — functions marked with
  :func:`chipsched.method.method`, and, where the layer has numba kernels, a
  ``warm_up_kernels()`` that compiles them (``chipsched.jit``).

The registry is built on first use (:func:`registry`) and assembles each decision the
first time it is asked for, so ``import chipsched`` loads no solver backend and a
command about one decision imports that decision's modules only; what it holds never
changes once loaded (imports do not mutate it).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chipsched.errors import UnknownNameError
from chipsched.method import Method, methods_of
from chipsched.problem import Problem

#: The four decisions, the same names in every folder, the CLI and the docs.
DECISIONS = ("region_split", "tile_groups", "op_placement", "core_assignment")

#: The layers whose modules hold a decision's methods.
METHOD_LAYERS = ("formulations", "heuristics")


@dataclass(frozen=True)
class Decision:
    """A problem, its methods, and how the face loads and shows its instances."""

    problem: Problem
    methods: Mapping[str, Method]
    load_instance: Callable[..., Any]
    #: ``render(instance, result, plot=None)``: what ``solve`` prints; draws ``plot``
    render: Callable[..., Any] | None = None
    #: steps the face chains onto methods of this decision (``chipsched.chains``)
    chains: tuple[Any, ...] = field(default=())
    #: heuristics whose best solution warm-starts this decision's exact methods when no
    #: warm start is given (``SolveOptions.auto_warm_start``)
    warm_start_from: tuple[str, ...] = field(default=())
    #: ``warm_up_kernels`` functions of the decision's method modules: they compile (or
    #: load) its numba kernels before a run's clock starts (``chipsched.jit``)
    warm_ups: tuple[Callable[[], Any], ...] = field(default=())
    #: ``plot_compare(instance, results, path, best_bound=, best_found=)``: the decision's
    #: own picture of several runs (``compare --plot``; ``solve --plot`` of a run without
    #: a solution)
    plot_compare: Callable[..., Any] | None = None

    @property
    def name(self) -> str:
        return self.problem.name

    def method(self, name: str) -> Method:
        if name not in self.methods:
            raise UnknownNameError(f"{self.name} method", name, self.methods)
        return self.methods[name]

    def chains_of(self, m: Method) -> tuple[Any, ...]:
        """The chain steps that apply to method ``m`` (their parameters are its too)."""
        return tuple(c for c in self.chains if c.applies_to(m))


class Registry:
    """Decision name → :class:`Decision`: the ``decisions`` given, and those ``loaders``
    build on first use (a command about one decision imports that decision's modules
    only)."""

    def __init__(self, decisions: Iterable[Decision] = (),
                 loaders: Mapping[str, Callable[[], Decision]] | None = None) -> None:
        self._decisions: dict[str, Decision] = {}
        self._loaders = dict(loaders or {})
        self._names = list(self._loaders)
        for d in decisions:
            if d.name in self._decisions or d.name in self._loaders:
                raise ValueError(f"decision {d.name} registered twice")
            self._add(d)
            self._names.append(d.name)

    def _add(self, d: Decision) -> None:
        for n, m in d.methods.items():
            if m.decision != d.name or m.name != n:
                raise ValueError(f"method {m.decision}/{m.name} filed as {d.name}/{n}")
        self._decisions[d.name] = d

    def decision(self, name: str) -> Decision:
        if name not in self._decisions:
            if name not in self._loaders:
                raise UnknownNameError("decision", name, self._names)
            d = self._loaders[name]()
            if d.name != name:
                raise ValueError(f"the loader of {name} built decision {d.name}")
            self._add(d)
        return self._decisions[name]

    def decisions(self) -> tuple[str, ...]:
        return tuple(self._names)

    def methods(self, decision: str) -> dict[str, Method]:
        return dict(self.decision(decision).methods)

    def get(self, decision: str, name: str) -> Method:
        return self.decision(decision).method(name)


def collect(methods: Iterable[Method]) -> dict[str, Method]:
    """Name → method, refusing a name used twice."""
    out: dict[str, Method] = {}
    for m in methods:
        if m.name in out and out[m.name] is not m:
            raise ValueError(f"method {m.decision}/{m.name} declared twice")
        out[m.name] = m
    return out


def load_decision(name: str) -> Decision:
    """Assemble decision ``name`` from its modules (see the module docstring)."""
    from chipsched.chains import chains_for

    problem = importlib.import_module(f"chipsched.problems.{name}").PROBLEM
    inst = importlib.import_module(f"chipsched.instances.{name}")
    found: list[Method] = []
    warm_ups: list[Callable[[], Any]] = []
    for layer in METHOD_LAYERS:
        mod = importlib.import_module(f"chipsched.{layer}.{name}")
        found += [m for m in methods_of(mod) if m.decision == name]
        if callable(getattr(mod, "warm_up_kernels", None)):
            warm_ups.append(mod.warm_up_kernels)
    if callable(getattr(inst, "warm_up_kernels", None)):  # the file readers' kernels
        warm_ups.append(inst.warm_up_kernels)
    return Decision(problem, collect(found), inst.load_instance,
                    getattr(inst, "render", None), chains_for(name),
                    tuple(getattr(inst, "WARM_START_FROM", ())), tuple(warm_ups),
                    getattr(inst, "plot_compare", None))


@functools.cache
def registry() -> Registry:
    """The registry of :data:`DECISIONS` (each decision assembled on first use)."""
    return Registry(loaders={d: functools.partial(load_decision, d) for d in DECISIONS})
