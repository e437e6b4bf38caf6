"""Seed 000's compute cost of a pipeline group on m sub-chiplets, and layers as items."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from chipsched.graph import GroupGraph, OpGraph, computation_graph
from chipsched.workload import Workload


def apportion(compute: Sequence[float], units: int) -> list[int]:
    """Split ``units`` NPUs among operators in proportion to their compute, ≥ 1 each.

    Seed 000, step 5: "the sub-chiplets available to a group are divided among its
    operators in proportion to their compute". Integer version (ours): quotas
    q = units·c/Σc, start from max(1, ⌊q⌋), then take units from the most
    over-served (largest u − q, u > 1) or give them to the most under-served
    (largest q − u) until the sum is ``units``. Needs ``len(compute) ≤ units``.
    """
    n = len(compute)
    if n > units:
        raise ValueError("more operators than units; use time sharing")
    c = np.asarray(compute, dtype=float)
    q = np.full(n, units / n) if c.sum() <= 0 else units * c / c.sum()
    u = np.maximum(1, np.floor(q)).astype(int)
    while u.sum() > units:
        over = np.where(u > 1, u - q, -np.inf)
        u[int(np.argmax(over))] -= 1
    while u.sum() < units:
        u[int(np.argmax(q - u))] += 1
    return [int(x) for x in u]


def lpt_makespan(times: Sequence[float], units: int) -> float:
    """Longest-processing-time-first makespan of ``times`` on ``units`` identical units.

    Used when a group has more operators than NPUs: the operators then share the
    NPUs, each running on one NPU (our choice; the document assumes enough NPUs).
    """
    loads = [0.0] * units
    heapq.heapify(loads)
    for t in sorted(times, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + t)
    return max(loads)


def group_times(graph: OpGraph, groups: Sequence[Sequence[int]], cycles: np.ndarray,
                frequency_hz: float, npus: int, max_chiplets: int) -> np.ndarray:
    """Seed 000's group cost for every group p and every sub-chiplet count m = 1..M (s).

    ``cycles[l, g − 1]`` is layer l on g NPUs (``CostModel.layer_table``: the best
    output partition, each NPU's m×k×n product costed by the two-branch systolic
    formula ``chipsched.cost.systolic_cycles``). An operator (a node of G', i.e. a
    merged chain of layers run one after another) on u NPUs costs the sum of its
    layers' cycles; a group on m sub-chiplets splits its m·N NPUs among its operators
    in proportion to their compute (:func:`apportion`) and costs its slowest operator
    (step 5: group cost = max dv). Returns an array of shape ``(groups, M)``.
    """
    out = np.zeros((len(groups), max_chiplets))
    for p, ops in enumerate(groups):
        comp = [graph.compute[v] for v in ops]
        op_cyc = [cycles[list(graph.members[v])].sum(axis=0) for v in ops]  # (G,) each
        for m in range(1, max_chiplets + 1):
            units = m * npus
            if len(ops) <= units:
                u = apportion(comp, units)
                t = max(float(op_cyc[k][u[k] - 1]) for k in range(len(ops)))
            else:
                t = lpt_makespan([float(oc[0]) for oc in op_cyc], units)
            out[p, m - 1] = t / frequency_hz
    return out


def layer_items(workload: Workload) -> GroupGraph:
    """The layers as items (``items="layers"``): one group per layer, no chain reduction.

    G of seed 000 (step 1) in topological order, every layer its own pipeline group;
    lets the exact models and heuristics cut between any two layers.
    """
    g = computation_graph(workload)
    groups = tuple((i,) for i in range(len(g)))
    return GroupGraph(g, groups, tuple((i,) for i in range(len(g))), g.compute, g.edges)
