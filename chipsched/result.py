"""The result every method returns (in the spirit of ``scipy.optimize.OptimizeResult``).

``Result.to_dict()`` is the public ``--json`` contract of ``chipsched solve``: the keys
``status, objective, bound, gap, wall_s, method, seed, metrics, solution`` are always
present (README, "Command line"); scripts and papers depend on them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import numpy as np


class Status(str, Enum):
    """How a run ended.

    ``optimal``: proven optimal (exact methods only). ``feasible``: a solution without
    a proof (every heuristic). ``time_limit``: an exact method stopped by its time limit
    — it may still carry a solution and a bound. ``infeasible``: proven to have no
    solution. ``error``: the method failed (see ``message``). ``skipped``: the method
    does not apply to the instance (``message`` says why; ``compare`` and ``bench``
    only — ``solve`` refuses such a method). ``bound_only``: a proven bound and no
    solution (methods of kind ``bound``).
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"
    ERROR = "error"
    SKIPPED = "skipped"
    BOUND_ONLY = "bound_only"

    def __str__(self) -> str:
        return self.value


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|objective − bound| / |objective| (Gurobi's MIPGap convention); 0 when both are 0."""
    if objective is None or bound is None:
        return None
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    diff = abs(objective - bound)
    if diff == 0:
        return 0.0
    if objective == 0:
        return math.inf
    return diff / abs(objective)


def to_jsonable(x: Any) -> Any:
    """Plain JSON types from dataclasses with ``to_dict``, numpy values, enums, tuples."""
    if hasattr(x, "to_dict") and callable(x.to_dict):
        return to_jsonable(x.to_dict())
    if isinstance(x, Enum):
        return x.value
    if isinstance(x, Mapping):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, (float, np.floating)):
        f = float(x)
        return f if math.isfinite(f) else None
    return x


@dataclass(frozen=True)
class Result:
    """Outcome of one method on one instance.

    ``objective`` is the evaluator's value of ``solution`` (the shared cost model's
    number, never the solver's own arithmetic); ``bound`` is the best proven bound
    (exact methods; ``None`` for heuristics); ``gap`` is derived from the two.
    """

    decision: str
    method: str
    status: Status
    objective: float | None = None
    bound: float | None = None
    wall_s: float = 0.0
    seed: int | None = None
    solution: Any = None
    metrics: Mapping[str, Any] = field(default_factory=dict)
    objective_name: str = ""
    message: str = ""
    instance: str = ""
    #: the unit of ``objective`` and ``bound`` (the decision's objective's, e.g. "s")
    objective_unit: str = ""
    #: the solution space the method searches when it is not the decision's full space
    #: (e.g. "segmented"); its bound then bounds that space only, not the decision
    space: str = ""

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)

    @property
    def success(self) -> bool:
        return self.solution is not None and self.objective is not None

    def replace(self, **changes: Any) -> Result:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` form (public contract)."""
        return to_jsonable({
            "status": self.status.value,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "wall_s": self.wall_s,
            "method": self.method,
            "seed": self.seed,
            "metrics": dict(self.metrics),
            "solution": self.solution,
            "decision": self.decision,
            "instance": self.instance,
            "objective_name": self.objective_name,
            "objective_unit": self.objective_unit,
            "message": self.message,
            "space": self.space,
        })

    def versus(self, reference: Result) -> str:
        """'within x % of optimal' / 'of the proven lower bound' — the headline sentence."""
        if self.objective is None:
            return f"{self.method}: no solution"
        if reference.status is Status.OPTIMAL and reference.objective is not None:
            ref, what = reference.objective, "of optimal"
        elif reference.bound is not None:
            ref, what = reference.bound, "of the proven lower bound"
        else:
            return f"{self.method}: no optimum or bound to compare with"
        if ref == 0:
            return f"{self.method}: objective {self.objective:.6g} (reference is 0)"
        pct = 100.0 * (self.objective - ref) / abs(ref)
        return f"{self.method} is within {pct:.2f} % {what} ({reference.method})"

    def __str__(self) -> str:
        parts = [f"{self.decision}/{self.method}: {self.status.value}"]
        if self.objective is not None:
            parts.append(f"objective={self.objective:.6g}")
        if self.bound is not None:
            parts.append(f"bound={self.bound:.6g}")
        if self.gap is not None:
            parts.append(f"gap={100 * self.gap:.3g}%")
        parts.append(f"wall={self.wall_s:.3g}s")
        return " ".join(parts)
