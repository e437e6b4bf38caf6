"""region_split: cut a network into contiguous pipeline regions (seeds 000 and 001).

Two platforms, one decision (``docs/region_split.md`` has every formula with its source):

* **chiplet grid** (seed 000, CN115421897A): the items are the pipeline groups of the
  group graph S (``chipsched.graph``; or the layers, ``items="layers"``), in depth
  order. A solution cuts them into contiguous regions, gives region r ``m_r ≥ 1``
  sub-chiplets (Σ m_r ≤ M) and places the regions on the grid (serpentine by default;
  exactly by a core_assignment placement method with the methods' ``placement``
  chain step ``placement``, over the slot flows of :func:`placement_flows`).
* **processor chain** (seed 001, CN115114033B): the items are the layers in topological
  order; a solution cuts them into contiguous sub-models run by processors of the
  chain in chain order (NPU → GPU → CPU), each processor at most once.

Stage time of a region (seconds):

chiplet ``stage = D + C + T``
    D = Σ over the region's groups of the group cost (max over its operators of the
    seed-000 systolic time of the operator on its proportional share of the
    region's m·N NPUs); C = f(m, d, N), the transfer inside the region of its
    internal data volume d (our choice for the formula the document lost: a
    store-and-forward broadcast along the chain of the m sub-chiplets and then the N
    NPUs of each, :class:`TransferModel`); T = t3 of the tensors the region sends to
    later regions (one die-to-die hop: latency + bytes / link bandwidth).
SoC ``stage = Σ layer times on its processor / (1 − background load) + handover``
    handover = latency + bytes / bandwidth of the interconnect entry to the next
    sub-model's processor, for every tensor live at the boundary (the shared-memory
    buffer between consecutive sub-models of seed 001).

Objectives (all minimized): ``cost`` = Σ stages (the document's additive cost
Σ region costs + Σ transfers, i.e. the t1 + t2 + t3 accounting), ``period`` = the
slowest stage (1/throughput), ``latency`` = Σ stages too, named for what it is: a
frame passes every stage once, compute and transfers included; ``sync_latency`` =
R · period, a frame's latency in a lock-step pipeline where the R stages hand frames
over through double buffers once per period.

:func:`evaluate` is the only place objective values are computed. It sums region
costs directly (:func:`chiplet_stage`, :func:`soc_stage`); the exact models use the
vectorized tables :func:`chiplet_stage_table` / :func:`soc_tables`, so the face's
consistency check compares two independent code paths.
"""

from __future__ import annotations

from typing import Any

from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.problem import Problem
from chipsched.workload import Workload

from .compute import apportion, group_times, layer_items, lpt_makespan
from .evaluate import (
    chiplet_parts,
    chiplet_set_parts,
    chiplet_stage,
    chiplet_stage_table,
    describe_regions,
    evaluate,
    expected_cost,
    soc_stage,
    soc_tables,
)
from .instance import (
    DEFAULT_THRESHOLD_S,
    ITEMS,
    ChipletInstance,
    Instance,
    LayerPrefix,
    SocInstance,
    chiplet_instance,
    soc_instance,
    soc_with_loads,
)
from .objectives import OBJECTIVES, combine
from .placement import (
    PlacementFlows,
    placement_flows,
    placement_qap,
    region_bytes,
    rounded_flows,
)
from .solution import (
    ChipletSolution,
    SocSolution,
    Solution,
    check_order,
    check_regions,
    chiplet_solution,
    serpentine_order,
    serpentine_placement,
    soc_solution,
    solution_from_dict,
)
from .trace import LoadTrace
from .transfer import COLLECTIVES, TransferModel

__all__ = [
    "COLLECTIVES", "CHIPLET_OPTIONS", "DEFAULT_THRESHOLD_S", "ITEMS", "OBJECTIVES",
    "PROBLEM", "SOC_OPTIONS", "ChipletInstance", "ChipletSolution", "Instance", "LoadTrace",
    "LayerPrefix", "PlacementFlows", "Solution", "SocInstance", "SocSolution",
    "TransferModel", "apportion",
    "check_order", "check_regions", "chiplet_instance", "chiplet_parts",
    "chiplet_set_parts", "chiplet_solution",
    "chiplet_stage", "chiplet_stage_table", "combine", "describe_regions", "evaluate",
    "expected_cost", "group_times", "layer_items", "lpt_makespan", "make_instance",
    "placement_flows", "placement_qap", "region_bytes", "rounded_flows",
    "serpentine_order", "serpentine_placement", "soc_instance", "soc_solution",
    "soc_stage", "soc_tables", "soc_with_loads", "solution_from_dict",
]

#: Instance options of each platform (``make_instance`` keywords).
CHIPLET_OPTIONS = ("objective", "batch", "max_regions", "items", "transfer", "name")
SOC_OPTIONS = ("objective", "batch", "max_regions", "chain", "loads", "thresholds", "buffers",
               "trace", "name")


def make_instance(source: Workload | Instance, hardware: Hardware, **options: Any
                  ) -> Instance:
    """A region_split instance of ``source`` (a ``Workload``; a ready instance is returned
    unchanged when no options are given) on ``hardware``: a chiplet or tiled grid gives
    a seed-000 instance (:func:`chiplet_instance`), a SoC with processors a seed-001
    instance (:func:`soc_instance`). ``options`` are the platform's (``CHIPLET_OPTIONS``
    or ``SOC_OPTIONS``)."""
    if isinstance(source, (ChipletInstance, SocInstance)):
        if options:
            raise InputError("instance", "is already built", "pass a network to set options")
        return source
    if not isinstance(source, Workload):
        raise InputError("instance", f"a {type(source).__name__} is not a network",
                         "give a Workload (chipsched.get_network)")
    soc = hardware.kind() == "soc"
    allowed = SOC_OPTIONS if soc else CHIPLET_OPTIONS
    for k in options:
        if k not in allowed:
            where = "processor chains (soc-* chips)" if k in SOC_OPTIONS else "chiplet grids"
            raise InputError(f"region_split option {k!r}", f"applies to {where} only",
                             f"options for {hardware.name}: {', '.join(allowed)}")
    if soc:
        return soc_instance(source, hardware, **options)
    return chiplet_instance(source, hardware, **options)


PROBLEM = Problem(
    name="region_split",
    summary="contiguous pipeline regions over chiplets (seed 000) or NPU→GPU→CPU layer "
            "splits (seed 001)",
    default_chip="chiplet-4x4",
    instance_types=(ChipletInstance, SocInstance),
    solution_types=(ChipletSolution, SocSolution),
    make_instance=make_instance,
    evaluate=evaluate,
    solution_from_dict=solution_from_dict,
    objectives=lambda instance: OBJECTIVES,
    instance_options=tuple(dict.fromkeys(CHIPLET_OPTIONS + SOC_OPTIONS)),
    platforms={"chiplet": "a chiplet grid (seed 000; chiplet-RxC chips)",
               "soc": "a processor chain (seed 001; soc-* chips)"},
    instance_size=lambda inst: float(inst.n_items),
    size_unit="items (pipeline groups or layers)",
)
