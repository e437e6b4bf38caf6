"""Objectives: what a decision minimizes, with a name and a unit — one shape for all four.

An :class:`Objective` is a product or a weighted sum of named quantities of a solution
(``E^n·D^m`` of tile_groups is the product ``energy_j^n · delay_s^m``; op_placement's
``weighted:WT,WE`` the sum ``WT·makespan + WE·energy_j``; region_split's ``period`` the
single quantity ``period_s``). Every decision lists its objectives in an
:class:`ObjectiveSet` (named objectives, aliases, parametric families such as
``E^n·D^m``), and :func:`parse_objective` reads the user's ``--objective`` against it —
the one parser of the package.

Every objective is minimized and carries the unit its values are reported in, so a
number printed by ``chipsched`` always says what it is (``1.96e-6 J²·s``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chipsched.errors import InputError

FORMS = ("product", "sum")


@dataclass(frozen=True)
class Objective:
    """A named, unit-carrying function of a solution's quantities.

    ``terms`` are ``(quantity, coefficient)`` pairs in a fixed order (calls may pass the
    quantities positionally in that order); ``form`` is ``"product"`` (Π q^c, a
    coefficient is an exponent) or ``"sum"`` (Σ c·q, a term with coefficient 0 is
    skipped, so an infinite quantity it would multiply does not make the sum NaN).
    """

    name: str
    unit: str
    description: str = field(default="", compare=False)
    terms: tuple[tuple[str, float], ...] = ()
    form: str = "product"

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"objective form {self.form!r} not in {FORMS}")

    def __call__(self, *values: float, **named: float) -> float:
        """The objective's value from its quantities (positional in ``terms`` order, or
        by name)."""
        if values and named:
            raise TypeError("pass the quantities positionally or by name, not both")
        if values:
            if len(values) != len(self.terms):
                raise TypeError(f"objective {self.name} takes {len(self.terms)} quantities")
            named = {q: v for (q, _), v in zip(self.terms, values, strict=True)}
        if self.form == "product":
            out = 1.0
            for q, c in self.terms:
                out *= float(named[q]) ** c
            return out
        out = 0.0
        for q, c in self.terms:
            if c:
                out += c * float(named[q])
        return out

    def coefficient(self, quantity: str) -> float:
        """The exponent (product) or weight (sum) of ``quantity``; 0 when absent."""
        return float(dict(self.terms).get(quantity, 0.0))

    @property
    def quantities(self) -> tuple[str, ...]:
        return tuple(q for q, _ in self.terms)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "unit": self.unit, "description": self.description,
                "sense": "min"}

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Family:
    """A parametric family of objectives, e.g. ``E^n·D^m``: ``pattern`` is matched against
    the normalized spelling (:func:`normalize`); ``build`` turns the match into an
    objective (raising :class:`InputError` on bad parameters)."""

    pattern: str
    build: Callable[[re.Match[str]], Objective]
    spelling: str  # how the user writes it, for error messages: "E^n·D^m"


@dataclass(frozen=True)
class ObjectiveSet:
    """The objectives of one decision: named ones (the first is not the default unless
    ``default`` says so), aliases and parametric families."""

    decision: str
    named: tuple[Objective, ...]
    default: str
    aliases: Mapping[str, str] = field(default_factory=dict)
    families: tuple[Family, ...] = ()

    def __post_init__(self) -> None:
        names = {o.name for o in self.named}
        if self.default not in names:
            raise ValueError(f"default objective {self.default!r} not among {sorted(names)}")

    @property
    def names(self) -> tuple[str, ...]:
        """Named objectives and the spellings of the families (for help and errors)."""
        return tuple(o.name for o in self.named) + tuple(f.spelling for f in self.families)

    def get(self, name: str) -> Objective:
        for o in self.named:
            if o.name == name:
                return o
        raise KeyError(name)

    def parse(self, spec: str | Objective | None) -> Objective:
        return parse_objective(spec, self)


def normalize(spec: str) -> str:
    """Lower case without blanks, ``·`` or ``*`` (``E^2·D`` → ``e^2d``)."""
    return str(spec).strip().lower().replace("·", "").replace("*", "").replace(" ", "")


def parse_objective(spec: str | Objective | None, objectives: ObjectiveSet) -> Objective:
    """The objective ``spec`` names among ``objectives`` (None: the default).

    An :class:`Objective` of the set is returned as is; a name, an alias or a member of
    a family is looked up; anything else is an :class:`InputError` naming the field
    ``objective`` and the choices.
    """
    if isinstance(spec, Objective):
        return spec
    if spec is None:
        return objectives.get(objectives.default)
    s = normalize(spec)
    s = objectives.aliases.get(s, s)
    for o in objectives.named:
        if normalize(o.name) == s:
            return o
    for fam in objectives.families:
        m = re.fullmatch(fam.pattern, s)
        if m:
            o = fam.build(m)
            if o.terms and all(c == 0 for _, c in o.terms):
                raise InputError("objective", f"{spec!r} is a constant (every exponent or "
                                 "weight is 0): nothing to minimize",
                                 "give a positive exponent or weight, e.g. E^1·D^1")
            for known in objectives.named:  # e^2d^1 is the named e2d
                if known.terms == o.terms and known.form == o.form:
                    return known
            return o
    raise InputError("objective", f"unknown objective {spec!r} for {objectives.decision}",
                     f"use one of {', '.join(objectives.names)}")


def finite_number(text: str | None, default: float, spec: str) -> float:
    """A non-negative finite number from a family parameter (``None``: the default)."""
    if text is None or text == "":
        return default
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise InputError("objective", f"{spec!r}: {text!r} is not a non-negative number")
    return v
