"""op_placement's objectives: makespan, energy, or a weighted sum of the two."""

from __future__ import annotations

import functools
import re

from chipsched.errors import InputError
from chipsched.objective import Family, Objective, ObjectiveSet, finite_number


def _weighted(time_unit: str, wt: float, we: float) -> Objective:
    return Objective(f"weighted:{wt:g},{we:g}", time_unit,
                     f"{wt:g}·makespan + {we:g}·energy (the energy weight converts J into "
                     f"{time_unit})", (("makespan", wt), ("energy_j", we)), "sum")


@functools.cache
def objectives_for(time_unit: str = "s") -> ObjectiveSet:
    """The objectives of instances whose times are in ``time_unit`` (seconds for instances
    built from a chip; a task-graph file's own unit otherwise)."""

    def family(match: re.Match[str]) -> Objective:
        spec = match.group(0)
        if match[1] is not None and match[2] is None:
            raise InputError("objective", f"{spec!r} gives one weight",
                             "write weighted:WT,WE (WT·makespan + WE·energy)")
        wt = finite_number(match[1], 1.0, spec)
        we = finite_number(match[2], 1.0, spec)
        if wt + we == 0:
            raise InputError("objective", f"weights of {spec!r} are both 0",
                             "e.g. weighted:1,0.5")
        return _weighted(time_unit, wt, we)

    return ObjectiveSet("op_placement", (
        Objective("makespan", time_unit, "the last end time of the schedule",
                  (("makespan", 1.0), ("energy_j", 0.0)), "sum"),
        Objective("energy", "J", "the sum of the ops' energies (transfers cost time only)",
                  (("makespan", 0.0), ("energy_j", 1.0)), "sum"),
    ), default="makespan", aliases={"latency": "makespan"}, families=(
        Family(r"weighted(?::([^,]*)(?:,(.*))?)?", family, "weighted:WT,WE"),
    ))
