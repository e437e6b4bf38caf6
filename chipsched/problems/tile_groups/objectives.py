"""tile_groups' objectives: E^n·D^m of the whole batch (energy in J, delay in s)."""

from __future__ import annotations

import re

from chipsched.objective import Family, Objective, ObjectiveSet, finite_number

_SUPERSCRIPT = {2: "²", 3: "³"}


def _power(symbol: str, e: float) -> str:
    if e == 1:
        return symbol
    if e in _SUPERSCRIPT:
        return symbol + _SUPERSCRIPT[int(e)]
    return f"{symbol}^{e:g}"


def energy_delay(name: str, n: float, m: float, description: str = "") -> Objective:
    """E^n · D^m as an objective: the product ``energy_j^n · delay_s^m``, unit J^n·s^m."""
    unit = "·".join(p for p, e in ((_power("J", n), n), (_power("s", m), m)) if e) or "1"
    return Objective(name, unit, description or f"E^{n:g}·D^{m:g}",
                     (("energy_j", float(n)), ("delay_s", float(m))), "product")


def _family(match: re.Match[str]) -> Objective:
    spec = match.group(0)
    n = finite_number(match[1], 1.0, spec)
    m = finite_number(match[2], 1.0, spec)
    return energy_delay(f"e{n:g}d{m:g}", n, m)


OBJECTIVES = ObjectiveSet("tile_groups", (
    energy_delay("latency", 0, 1, "latency of the whole batch (s)"),
    energy_delay("energy", 1, 0, "energy of the whole batch (J)"),
    energy_delay("edp", 1, 1, "energy-delay product E·D"),
    energy_delay("e2d", 2, 1, "E²·D (SET's edge objective)"),
    energy_delay("ed2", 1, 2, "E·D² (SET's cloud objective)"),
), default="e2d", families=(
    Family(r"e(?:\^?(\d+(?:\.\d+)?))?d(?:\^?(\d+(?:\.\d+)?))?", _family, "E^n·D^m"),
))
