"""SI prefixes for printed quantities: one place that picks µs, mJ or ×10ⁿ for every
table, message and plot axis."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["SI_UNITS", "si_text", "unit_scale"]

#: units that take an SI prefix directly
SI_UNITS = frozenset({"s", "J", "B", "W", "Hz", "MAC", "op"})
_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"),
             (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f"))
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def unit_scale(values: Sequence[float | None], unit: str) -> tuple[float, str]:
    """(factor, unit label) to print ``values`` (in ``unit``) as ``value / factor``:
    an SI prefix for simple units, ``×10ⁿ unit`` for compound ones, chosen from the
    largest magnitude so that it reads 1–999."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    if not finite:
        return 1.0, unit
    top = max(finite)
    if unit in SI_UNITS:
        for f, p in _PREFIXES:
            if top >= f:
                return f, f"{p}{unit}"
        return _PREFIXES[-1][0], f"{_PREFIXES[-1][1]}{unit}"
    exp = 3 * math.floor(math.log10(top) / 3)
    if exp == 0:
        return 1.0, unit
    return 10.0 ** exp, f"×10{str(exp).translate(_SUPERSCRIPT)} {unit}".strip()


def si_text(x: float, unit: str, digits: int = 4) -> str:
    """``x`` (in ``unit``) with the prefix :func:`unit_scale` picks: 2.225 µs, 5.707 µJ."""
    f, label = unit_scale([x], unit)
    return f"{x / f:.{digits}g} {label}"
