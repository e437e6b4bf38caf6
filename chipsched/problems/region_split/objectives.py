"""region_split's objectives: the stage times of the pipeline combined three ways (s)."""

from __future__ import annotations

from collections.abc import Sequence

from chipsched.objective import Objective, ObjectiveSet

OBJECTIVES = ObjectiveSet("region_split", (
    Objective("cost", "s", "Σ of the stage times: the document's additive cost (t1 + t2 + "
              "t3 accounting), one frame's latency through an empty pipeline",
              (("cost_s", 1.0),)),
    Objective("period", "s", "the slowest stage: the pipeline period, 1 / throughput",
              (("period_s", 1.0),)),
    Objective("latency", "s", "R · period: a frame's latency in the steady-state pipeline "
              "(double buffers between the R stages)", (("latency_s", 1.0),)),
), default="period")


def combine(objective: Objective | str, stages: Sequence[float]) -> float:
    """The objective from stage times: Σ (cost), max (period), R·max (latency)."""
    name = objective.name if isinstance(objective, Objective) else objective
    if name == "cost":
        return float(sum(stages))
    if name == "period":
        return float(max(stages))
    return float(len(stages) * max(stages))
