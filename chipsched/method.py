"""Declared methods: what a method takes, where it applies, what it hands back.

A method is a function ``(instance, options, params) -> MethodOutput`` (``params``
omitted when it takes none) marked with :func:`method`::

    @dataclass(frozen=True)
    class SAParams:
        beta: float = param(100, "rounds per layer (SET's β)", gt=0)
        start: str = param("ls", "first tree", choices=("ls", "dp"))

    @method("tile_groups", "sa", "heuristic", "SET simulated annealing", params=SAParams,
            randomized=True)
    def sa(instance, options: SolveOptions, params: SAParams) -> MethodOutput: ...

The declaration is the one source of the method's parameters (type, default, range,
one-line doc): the face validates ``-p name=value`` against it (:func:`build_params`)
and ``chipsched list DECISION`` prints it. ``applies(instance, params, warm)`` returns why the
method does not apply to an instance (``None`` when it does): ``compare`` and ``bench``
show such a method as skipped, ``solve`` refuses it with a one-line error.

The registry (``chipsched.registry``) collects the marked functions of each decision's
``formulations`` and ``heuristics`` modules; nothing is registered in global state.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType, NoneType, UnionType
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.result import Status

KINDS = ("exact", "heuristic", "baseline", "oracle", "peer", "bound")
#: Kinds that prove what they report (a seed is recorded for them, auto warm starts go
#: to them)
EXACT_KINDS = ("exact", "oracle")
#: Kinds that ``compare`` and ``bench`` give a default time limit: the exact methods and
#: the anytime bounds (a bound's ascent may otherwise run for minutes on a real network)
DEFAULT_LIMIT_KINDS = (*EXACT_KINDS, "bound")

_META = "chipsched"
_MARK = "__chipsched_method__"


# ---------------------------------------------------------------------------------------
# parameters


@dataclass(frozen=True)
class _ParamMeta:
    doc: str
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple[Any, ...] | None = None
    none: str = ""  # what None means, e.g. "β × layers"


def param(default: Any, doc: str, *, ge: float | None = None, gt: float | None = None,
          le: float | None = None, lt: float | None = None,
          choices: tuple[Any, ...] | None = None, none: str = "") -> Any:
    """A declared parameter: a dataclass field with its default, a one-line doc, a range
    (``ge``/``gt``/``le``/``lt``) or ``choices``, and what ``None`` means (``none``)."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("parameter defaults must be immutable")
    return field(default=default, metadata={_META: _ParamMeta(
        doc, ge, gt, le, lt, tuple(choices) if choices is not None else None, none)})


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter, as ``chipsched list`` shows it."""

    name: str
    type: type
    optional: bool
    default: Any
    doc: str
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple[Any, ...] | None = None
    none: str = ""

    @property
    def type_name(self) -> str:
        t = self.type.__name__
        return f"{t} | None" if self.optional else t

    @property
    def range_text(self) -> str:
        """``> 0``, ``[0, 1)``, ``one of ls, dp`` … (empty when unrestricted)."""
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        lo = (f"[{self.ge:g}" if self.ge is not None else
              f"({self.gt:g}" if self.gt is not None else None)
        hi = (f"{self.le:g}]" if self.le is not None else
              f"{self.lt:g})" if self.lt is not None else None)
        if lo and hi:
            return f"{lo}, {hi}"
        if lo:
            return f"≥ {self.ge:g}" if self.ge is not None else f"> {self.gt:g}"
        if hi:
            return f"≤ {self.le:g}" if self.le is not None else f"< {self.lt:g}"
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type_name, "default": self.default,
                "doc": self.doc, "range": self.range_text,
                **({"none": self.none} if self.none else {})}

    def check(self, value: Any, where: str) -> Any:
        """``value`` coerced to the declared type and checked; :class:`InputError` naming
        ``where`` (``parameter beta of tile_groups/sa``) otherwise."""
        words = ("none", "null") if self.type is str else ("none", "null", "auto")
        if value is None or (isinstance(value, str) and self.optional
                             and value.strip().lower() in words):
            if self.optional:
                return None
            raise InputError(where, "must be given (no None)", self._fix())
        v = _coerce(value, self.type, where, self._fix())
        if isinstance(v, float) and not math.isfinite(v):
            raise InputError(where, f"must be a finite number, got {value!r}", self._fix())
        if self.choices is not None and v not in self.choices:
            raise InputError(where, f"{value!r} is not allowed", self._fix())
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            bad = ((self.ge is not None and v < self.ge) or (self.gt is not None and v <= self.gt)
                   or (self.le is not None and v > self.le)
                   or (self.lt is not None and v >= self.lt))
            if bad:
                raise InputError(where, f"{value!r} is out of range", self._fix())
        return v

    def _fix(self) -> str:
        r = self.range_text
        t = self.type.__name__
        what = f"{'an' if t[0] in 'aeiou' else 'a'} {t}" + (f" {r}" if r and self.choices
                                                             is None else "")
        if self.choices is not None:
            what = r
        if self.optional:
            what += " (or none" + (f": {self.none}" if self.none else "") + ")"
        return f"give {what}; {self.doc}"


def _coerce(value: Any, typ: type, where: str, fix: str) -> Any:
    if typ is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise InputError(where, f"must be true or false, got {value!r}", fix)
    if typ is int:
        if isinstance(value, (bool, np.bool_)):
            raise InputError(where, f"must be an integer, got {value!r}", fix)
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                try:  # "1e3" (YAML reads it as a string)
                    value = float(value.strip())
                except (ValueError, OverflowError):
                    pass
        if isinstance(value, (float, np.floating)) and math.isfinite(value) and \
                float(value).is_integer():
            return int(value)
        raise InputError(where, f"must be an integer, got {value!r}", fix)
    if typ is float:
        if isinstance(value, (bool, np.bool_)):
            raise InputError(where, f"must be a number, got {value!r}", fix)
        try:
            if isinstance(value, (int, float, np.integer, np.floating)):
                return float(value)
            if isinstance(value, str):
                return float(value.strip())
        except (ValueError, OverflowError):
            pass
        raise InputError(where, f"must be a number, got {value!r}", fix)
    if typ is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise InputError(where, f"must be a string, got {value!r}", fix)
    if isinstance(value, typ):
        return value
    raise InputError(where, f"must be a {typ.__name__}, got {value!r}", fix)


def param_specs(cls: type | None) -> tuple[ParamSpec, ...]:
    """The declared parameters of a params dataclass (empty for ``None``)."""
    if cls is None:
        return ()
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        meta = f.metadata.get(_META)
        if meta is None:
            raise TypeError(f"{cls.__name__}.{f.name} is not declared with param(...)")
        typ, optional = _unwrap(hints[f.name], f"{cls.__name__}.{f.name}")
        out.append(ParamSpec(f.name, typ, optional, f.default, meta.doc, meta.ge, meta.gt,
                             meta.le, meta.lt, meta.choices, meta.none))
    return tuple(out)


def _unwrap(hint: Any, where: str) -> tuple[type, bool]:
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, UnionType):
        rest = [a for a in args if a is not NoneType]
        if len(rest) != 1:
            raise TypeError(f"{where}: a parameter has one type (or that type | None)")
        return _unwrap(rest[0], where)[0], True
    if hint not in (int, float, bool, str):
        raise TypeError(f"{where}: parameter types are int, float, bool or str, not {hint}")
    return hint, False


def build_params(cls: type | None, values: Mapping[str, Any], where: str) -> Any:
    """An instance of the params dataclass ``cls`` from user ``values`` (names checked,
    values coerced and range-checked); ``None`` for a method without parameters."""
    specs = {s.name: s for s in param_specs(cls)}
    for k in values:
        if k not in specs:
            raise InputError(f"parameter {k!r}", f"is not a parameter of {where}",
                             f"its parameters: {', '.join(specs) or 'none'}")
    if cls is None:
        return None
    checked = {k: specs[k].check(v, f"parameter {k} of {where}") for k, v in values.items()}
    return cls(**checked)


# ---------------------------------------------------------------------------------------
# methods


@dataclass(frozen=True)
class MethodOutput:
    """What a method hands back to the face.

    ``objective`` is the value of ``solution`` by the method's **own** arithmetic (its
    model's data at the solution, its DP value, its heuristic's tally) — the face
    compares it with the evaluator, so a method must not report ``evaluate(...)``
    itself; the face accepts ``|objective − evaluate| ≤ max(objective_tol,
    1e-6·|evaluate|)``. ``model_objective`` is the objective a solver's model gives
    its own solution before it is decoded or rescaled (e.g. CP-SAT's integer ticks times
    the tick): the evaluator's value of the returned solution must not exceed it by more
    than ``max(model_tol, 1e-6·|model_objective|)`` — decoding may only improve it, and
    ``model_tol`` is the most the model's rounding can hide (e.g. one tick per rounded
    term). ``objective_tol`` is the absolute error the method's own arithmetic allows
    (0 for a float tally). ``bound`` is a proven bound (exact and bound methods).
    ``space``: the solution space this run searched when it differs from the method's
    declared one (e.g. region_split's models over one item order, which is the whole
    space only when the item DAG is a chain); ``None``: the declared one.
    ``incumbent``: a solution the method started from by its own means (the MILP's
    big-M incumbent, an upper bound's split) — the face reports it, as it does the warm
    start, when the run ends without a solution or on a worse one: a method never
    applies that rule itself.
    """

    status: Status
    solution: Any = None
    objective: float | None = None
    bound: float | None = None
    message: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    objective_tol: float = 0.0
    model_objective: float | None = None
    model_tol: float = 0.0
    space: str | None = None
    incumbent: Any = None


@dataclass(frozen=True)
class Method:
    """A declared method of a decision.

    ``kind``: ``exact`` (proves optimality or a bound), ``heuristic``, ``baseline``,
    ``oracle`` (brute force), ``peer`` (an outside library), ``bound`` (a proven bound
    and no solution: status ``bound_only``). ``space``: the solution
    space when it is not the decision's full space (its bound then bounds that space
    only). ``platforms``: the platforms it serves (empty: every one). ``warm_start``:
    it uses ``options.warm_start``.
    """

    decision: str
    name: str
    func: Callable[..., MethodOutput]
    kind: str
    summary: str
    source: str = ""
    randomized: bool = False
    space: str = ""
    params: type | None = None
    platforms: tuple[str, ...] = ()
    applies: Callable[[Any, Any, bool], str | None] | None = None
    warm_start: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"method kind {self.kind!r} not in {KINDS}")
        param_specs(self.params)  # a malformed declaration fails at import

    @property
    def param_specs(self) -> tuple[ParamSpec, ...]:
        return param_specs(self.params)

    @property
    def exact(self) -> bool:
        return self.kind in EXACT_KINDS

    @property
    def limited_by_default(self) -> bool:
        """Whether ``compare`` and ``bench`` give it a time limit when none is set."""
        return self.kind in DEFAULT_LIMIT_KINDS

    def not_applicable(self, instance: Any, params: Any, platform: str = "",
                       describe: Callable[[str], str] = str, warm: bool = False
                       ) -> str | None:
        """Why the method does not apply to ``instance`` (None when it does);
        ``describe`` names a platform in words; ``warm``: the run gets a warm start."""
        if self.platforms and platform not in self.platforms:
            need = " or ".join(describe(p) for p in self.platforms)
            return f"needs {need}; this instance is on {describe(platform)}"
        if self.applies is not None:
            return self.applies(instance, params, warm)
        return None

    def run(self, instance: Any, options: Any, params: Any) -> MethodOutput:
        if self.params is None:
            return self.func(instance, options)
        return self.func(instance, options, params)

    def default_params(self) -> Any:
        return None if self.params is None else self.params()


def count_text(n: int) -> str:
    """A candidate count for an applicability message: ``1,234,567`` or ``~1.9e+180``
    (exact integers beyond a float's range stay printable)."""
    n = int(n)
    if n < 10 ** 12:
        return f"{n:,}"
    digits = len(str(n))
    return f"~{int(str(n)[:2]) / 10:.1f}e+{digits - 1}"


def method(decision: str, name: str, kind: str, summary: str, *, source: str = "",
           randomized: bool = False, space: str = "", params: type | None = None,
           platforms: tuple[str, ...] = (),
           applies: Callable[[Any, Any, bool], str | None] | None = None,
           warm_start: bool = False) -> Callable[[Callable], Callable]:
    """Mark ``func`` as method ``name`` of ``decision`` (see :class:`Method`)."""

    def deco(func: Callable) -> Callable:
        setattr(func, _MARK, Method(decision, name, func, kind, summary, source, randomized,
                                    space, params, tuple(platforms), applies, warm_start))
        return func

    return deco


def methods_of(module: ModuleType) -> list[Method]:
    """The methods marked among ``module``'s attributes (defined there or imported into
    it, e.g. a package re-exporting its submodules' methods), in namespace order."""
    seen: dict[int, Method] = {}
    for obj in vars(module).values():
        m = getattr(obj, _MARK, None)
        if isinstance(m, Method):
            seen.setdefault(id(m), m)
    return list(seen.values())
