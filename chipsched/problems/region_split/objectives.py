"""region_split's objectives: the stage times of the pipeline combined three ways (s)."""

from __future__ import annotations

from collections.abc import Sequence

from chipsched.objective import Objective, ObjectiveSet

OBJECTIVES = ObjectiveSet("region_split", (
    Objective("cost", "s", "Σ of the stage times: the document's additive cost (t1 + t2 + "
              "t3 accounting)", (("cost_s", 1.0),)),
    Objective("period", "s", "the slowest stage: the pipeline period, 1 / throughput",
              (("period_s", 1.0),)),
    Objective("latency", "s", "a frame's latency: the sum of its stage times and "
              "transfers — each frame passes every stage once (the same sum as cost)",
              (("latency_s", 1.0),)),
    Objective("sync_latency", "s", "R · period: a frame's latency in a lock-step pipeline "
              "where every one of the R stages takes a whole period (double buffers "
              "between stages)", (("sync_latency_s", 1.0),)),
), default="period")

#: how each objective combines the stage times: Σ, max, or R · max. The exact models
#: and the pruning step switch on this, not on the objective's name.
AGGREGATE = {"cost": "sum", "latency": "sum", "period": "max", "sync_latency": "count_max"}


def aggregate(objective: Objective | str) -> str:
    """'sum', 'max' or 'count_max' for ``objective`` (:data:`AGGREGATE`)."""
    name = objective.name if isinstance(objective, Objective) else objective
    return AGGREGATE[name]


def combine(objective: Objective | str, stages: Sequence[float]) -> float:
    """The objective from stage times: Σ (cost, latency), max (period), R·max
    (sync_latency)."""
    kind = aggregate(objective)
    if kind == "sum":
        return float(sum(stages))
    if kind == "max":
        return float(max(stages))
    return float(len(stages) * max(stages))
