"""Load traces: processors of seed 001's chain with a time-varying background load."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.errors import InputError


@dataclass(frozen=True, eq=False)
class LoadTrace:
    """Piecewise-constant background load of each processor of the chain.

    ``times[k]`` (s) is when phase k starts (``times[0] == 0``, increasing);
    ``loads[k, p]`` ∈ [0, 1) is the share of processor p taken by other work during
    phase k, so our layers run at (1 − load) of the nominal speed.
    """

    times: np.ndarray
    loads: np.ndarray

    def __post_init__(self) -> None:
        try:  # copies: the caller's stay writable
            t = np.array(self.times, dtype=float).ravel()
        except (TypeError, ValueError):
            raise InputError("trace.times", f"must be numbers, got {self.times!r}",
                             "give phase start times in seconds, e.g. [0, 0.5, 1.0]") from None
        try:
            ld = np.atleast_2d(np.array(self.loads, dtype=float))
        except (TypeError, ValueError):
            raise InputError("trace.loads", "must be rows of numbers, one per phase, all "
                             "of the same length", "e.g. [[0, 0.5], [0.2, 0]]") from None
        if ld.ndim != 2:
            raise InputError("trace.loads", "must be rows of loads, one per phase",
                             "e.g. [[0, 0.5], [0.2, 0]]")
        if t.size == 0 or not np.all(np.isfinite(t)) or t[0] != 0 or np.any(np.diff(t) <= 0):
            raise InputError("trace.times", "must start at 0 and increase strictly",
                             "give phase start times in seconds, e.g. [0, 0.5, 1.0]")
        if ld.shape[0] != t.size:
            raise InputError("trace.loads", f"has {ld.shape[0]} rows for {t.size} phases",
                             "give one row of loads per phase")
        if np.any(~np.isfinite(ld)) or np.any(ld < 0) or np.any(ld >= 1):
            raise InputError("trace.loads", "every load must be in [0, 1)",
                             "a load is the share of the processor taken by other work")
        t.setflags(write=False)
        ld.setflags(write=False)
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "loads", ld)

    @property
    def processors(self) -> int:
        return int(self.loads.shape[1])

    @property
    def final(self) -> tuple[float, ...]:
        return tuple(float(x) for x in self.loads[-1])

    def phase(self, t: float) -> int:
        """Index of the phase in force at time ``t``."""
        return int(np.searchsorted(self.times, t, side="right") - 1)

    def at(self, t: float) -> np.ndarray:
        return self.loads[self.phase(t)]

    def finish_time(self, p: int, start: float, work_s: float) -> float:
        """When ``work_s`` seconds of nominal work on processor p, started at ``start``,
        end: the speed is 1 − load, integrated exactly over the phases."""
        t, left = start, work_s
        k = self.phase(t)
        while True:
            speed = 1.0 - self.loads[k, p]
            end_k = self.times[k + 1] if k + 1 < len(self.times) else math.inf
            can = (end_k - t) * speed
            if can >= left:
                return t + left / speed
            left -= can
            t, k = end_k, k + 1

    def to_dict(self) -> dict[str, Any]:
        return {"times": self.times.tolist(), "loads": self.loads.tolist()}

    @classmethod
    def from_dict(cls, d: Any, where: str = "trace") -> LoadTrace:
        """A trace from ``{times: […], loads: [[…], …]}`` (a file's or ``-O trace=…``)."""
        if not isinstance(d, dict) or set(d) != {"times", "loads"}:
            raise InputError(where, "needs exactly 'times' and 'loads'",
                             "e.g. {times: [0, 1], loads: [[0, 0], [0.5, 0]]}")
        return cls(d["times"], d["loads"])
