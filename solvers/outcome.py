"""What an exact backend reports, in model units, before the face re-evaluates it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chipsched.result import Status


@dataclass(frozen=True)
class ExactOutcome:
    """``objective`` and ``bound`` are the backend's own numbers (divide by the model's
    scale to get cost-model units); ``has_solution`` tells whether values can be read."""

    backend: str
    status: Status
    objective: float | None
    bound: float | None
    wall_s: float
    has_solution: bool
    stats: dict[str, Any] = field(default_factory=dict)
