"""An op-placement solution: op → (processor, core) and a start time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from chipsched.errors import InputError

if TYPE_CHECKING:
    from .instance import Instance

@dataclass(frozen=True, eq=False)
class Solution:
    """Op → (processor, core) and a start time per op (end = start + time).

    ``op_names`` and ``processor_names`` are for display and JSON only.
    """

    proc: np.ndarray
    core: np.ndarray
    start: np.ndarray
    op_names: tuple[str, ...] = field(default=(), compare=False)
    processor_names: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        for name in ("proc", "core"):
            a = np.array(getattr(self, name), dtype=np.int64)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        s = np.array(self.start, dtype=float)
        s.setflags(write=False)
        object.__setattr__(self, "start", s)
        if not (len(self.proc) == len(self.core) == len(self.start)):
            raise InputError("solution", "proc, core and start need one entry per op")

    def end(self, instance: Instance) -> np.ndarray:
        return self.start + instance.time[np.arange(instance.n_ops), self.proc]

    def order(self) -> dict[tuple[int, int], list[int]]:
        """Ops of every (processor, core) in execution order."""
        out: dict[tuple[int, int], list[int]] = {}
        for i in np.lexsort((np.arange(len(self.start)), self.start)):
            out.setdefault((int(self.proc[i]), int(self.core[i])), []).append(int(i))
        return out

    def to_dict(self) -> dict[str, Any]:
        names = self.op_names or tuple(str(i) for i in range(len(self.proc)))
        pn = self.processor_names or tuple(str(p) for p in range(int(self.proc.max()) + 1))
        return {
            "assignment": {names[i]: pn[int(self.proc[i])] for i in range(len(names))},
            "core": {names[i]: int(self.core[i]) for i in range(len(names))},
            "start": {names[i]: float(self.start[i]) for i in range(len(names))},
            "order": {f"{pn[p]}:{c}": [names[i] for i in ops]
                      for (p, c), ops in sorted(self.order().items())},
        }

    @classmethod
    def from_dict(cls, instance: Instance, data: Mapping[str, Any]) -> Solution:
        """Read the form :meth:`to_dict` writes (op and processor names)."""
        if not isinstance(data, Mapping) or not {"assignment", "start"} <= set(data):
            raise InputError("solution", "an op_placement solution has 'assignment' and "
                             "'start' (op → processor, op → start time)")
        assignment = data["assignment"]
        if isinstance(assignment, Mapping):
            for o in instance.ops:
                p = assignment.get(o)
                if p is not None and p not in instance.processors:
                    raise InputError(f"solution.assignment[{o!r}]", f"unknown processor {p!r}",
                                     f"processors: {', '.join(map(str, instance.processors))}")
        try:
            proc = [instance.processors.index(assignment[o]) for o in instance.ops]
            core = [int(data.get("core", {}).get(o, 0)) for o in instance.ops]
            start = [float(data["start"][o]) for o in instance.ops]
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise InputError("solution", f"missing or unknown entry {exc}",
                             "give assignment and start for every op") from None
        return instance.solution(proc, core, start)


def makespan_energy(instance: Instance, solution: Solution) -> tuple[float, float]:
    idx = np.arange(instance.n_ops)
    end = solution.start + instance.time[idx, solution.proc]
    return float(end.max()), float(instance.energy[idx, solution.proc].sum())
