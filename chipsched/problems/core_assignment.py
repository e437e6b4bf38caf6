"""core_assignment: neurons (vertices of a :class:`~chipsched.neurongraph.NeuronGraph`) onto
a ``rows × cols`` mesh of cores with a capacity (seed 004, ``docs/sources.md``).

Instance: the graph (vertex sizes = neurons, edge weights = synapses), the chip (its
``noc`` gives the energy per bit and hop), the core array (rows, cols, ``capacity``
neurons per core: the chip's own by default, or an array sized to fit the graph with
the chip's capacity) and ``weight_bytes`` — bytes one unit of edge weight carries per
inference (the activation precision for graphs built from a workload).

Solution: ``core[v]`` for every vertex ``v`` (row-major core id ``row·cols + col``);
several vertices may share a core as long as its load (sum of sizes) is at most the
capacity.

Objectives (all minimized; ``Instance.objective`` chooses the one reported as
``Result.objective``, the others are metrics), every number from ``chipsched.cost``:

* ``traffic`` (default; unit ``w·hop``: edge weight — synapses — times hops) —
  hop-weighted traffic ``Σ w·hops(core(u), core(v))`` over the edges, hops = Manhattan
  distance (XY routing, :func:`chipsched.cost.hops`);
* ``cut`` (unit ``w``) — weight of the edges whose ends are on different cores;
* ``energy`` (unit ``J``) — NoC energy of that traffic, :func:`chipsched.cost.noc_energy_j`
  of ``traffic × weight_bytes`` byte-hops at the chip's pJ/bit/hop;
* ``multicast`` (unit ``packet·hop``) — the traffic of a multicast NoC (SNEAP /
  SpiNeMap): a neuron sends one packet per spike to each other core holding any of its
  targets, not one per synapse; Σ packets·hops.

Spike activity: ``Instance.spikes`` (one count per vertex over a profiling window, e.g.
per inference) weights the traffic — the graph's edge {u, v}, u < v, then carries
synapses × spikes[u] (:func:`chipsched.neurongraph.spike_weighted`, applied by
:func:`make_instance` and the JSON reader) and a multicast packet counts spikes[u]
times. Without ``spikes`` every neuron counts as spiking once.

Always reported: the per-link loads under XY routing (:func:`chipsched.cost.xy_link_loads`)
with the most loaded link, the core loads and how many cores are used. Link loads need a
direction per edge: an edge ``{u, v}`` with ``u < v`` carries its weight from u to v (see
:mod:`chipsched.neurongraph`).

:func:`evaluate` is the only place these numbers are computed; an infeasible solution (a
core over capacity, a vertex without a core) raises :class:`InputError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from chipsched.cost import hops, noc_energy_j, xy_link_loads
from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.neurongraph import (
    NeuronGraph,
    directed_flows,
    from_workload,
    multicast_flows,
    multicast_quotient,
    spike_weighted,
)
from chipsched.objective import Objective, ObjectiveSet
from chipsched.problem import Problem
from chipsched.workload import Workload

OBJECTIVES = ObjectiveSet("core_assignment", (
    Objective("traffic", "w·hop", "hop-weighted traffic Σ w·hops (w: edge weight, synapses "
              "for neuron graphs)", (("traffic", 1.0),)),
    Objective("cut", "w", "weight of the edges cut between cores", (("cut_weight", 1.0),)),
    Objective("energy", "J", "NoC energy of the traffic (weight_bytes per unit of weight, "
              "the chip's pJ/bit/hop)", (("noc_energy_j", 1.0),)),
    Objective("multicast", "packet·hop", "multicast traffic: one packet per spike and "
              "destination core, Σ packets·hops", (("multicast_traffic", 1.0),)),
), default="traffic")

#: Headroom of the sized-to-fit arrays (see :func:`fit_mesh`).
FIT_HEADROOM = 2.0


@dataclass(frozen=True, eq=False)
class Instance:
    """A neuron graph, a chip and a core array on it. Validation raises one-line
    :class:`InputError`\\ s: a chip without a NoC, a vertex larger than a core, a total
    size larger than the array."""

    name: str
    graph: NeuronGraph
    hardware: Hardware
    rows: int
    cols: int
    capacity: int
    objective: Objective = OBJECTIVES.get("traffic")
    weight_bytes: float = 1.0
    #: Spikes per vertex over the profiling window (``None``: one each). The graph's
    #: weights are already spike-weighted (:func:`make_instance` does it); this array
    #: weights the multicast packets.
    spikes: np.ndarray | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "objective", OBJECTIVES.parse(self.objective))
        if self.spikes is not None:
            spk = np.asarray(self.spikes)
            if spk.shape != (self.graph.n,) or spk.dtype.kind not in "iu" or (
                    spk.size and spk.min() < 0):
                raise InputError("instance.spikes", "must be one non-negative integer per "
                                 f"vertex ({self.graph.n})",
                                 "build the instance with make_instance(..., spikes=...)")
            object.__setattr__(self, "spikes", np.ascontiguousarray(spk, dtype=np.int64))
        if not isinstance(self.hardware, Hardware):
            raise InputError("instance.hardware", f"a {type(self.hardware).__name__} is not "
                             "a chip", "give a Hardware (chipsched.get_chip)")
        if self.hardware.noc is None:
            raise InputError(f"chip {self.hardware.name!r}.noc", "core_assignment needs the "
                             "chip's NoC (energy per bit and hop)",
                             "use a chip with a noc section, e.g. neuro-8x8")
        for k in ("rows", "cols", "capacity"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"cores.{k}", f"must be a positive integer, got {v!r}")
            object.__setattr__(self, k, int(v))
        if not (self.weight_bytes > 0 and math.isfinite(self.weight_bytes)):
            raise InputError("weight_bytes", f"must be a positive number, got "
                             f"{self.weight_bytes}")
        g = self.graph
        if g.n == 0:
            raise InputError(f"instance {self.name!r}.graph", "has no vertices")
        big = int(np.argmax(g.sizes))
        if g.sizes[big] > self.capacity:
            raise InputError(f"instance {self.name!r}.graph.sizes[{big}]",
                             f"vertex {big} has {int(g.sizes[big])} neurons, more than a "
                             f"core's capacity {self.capacity}",
                             "raise the capacity (chip neuro-RxC-kCAP) or use a finer "
                             "granularity (fewer channels per vertex)")
        total = g.total_size
        if total > self.n_cores * self.capacity:
            raise InputError(f"instance {self.name!r}.cores",
                             f"total size {total:,} exceeds the array's {self.rows}×"
                             f"{self.cols}×{self.capacity} = {self.n_cores * self.capacity:,}",
                             "use a larger array (chip neuro-RxC[-kCAP])")

    @property
    def hop_energy_pj_per_bit(self) -> float:
        return float(self.hardware.noc.hop_energy_pj_per_bit)

    @property
    def n_cores(self) -> int:
        return self.rows * self.cols

    @property
    def n(self) -> int:
        return self.graph.n

    def coords(self, core: Any) -> tuple[np.ndarray, np.ndarray]:
        """(row, col) arrays of row-major core ids."""
        return np.divmod(np.asarray(core, dtype=np.int64), self.cols)

    def with_objective(self, objective: str | Objective) -> Instance:
        return replace(self, objective=OBJECTIVES.parse(objective))

    @property
    def forced_partition(self) -> bool:
        """True when no two vertices fit on one core: every vertex needs its own core and
        the problem is a quadratic assignment (placement) problem."""
        if self.n < 2:
            return True
        two = np.partition(self.graph.sizes, 1)[:2]
        return bool(two.sum() > self.capacity)

    def objective_from_traffic(self, traffic: float, cut: float) -> float:
        """The instance's objective from the two base quantities (used by exact models,
        which optimize traffic or cut in integer units). For ``multicast``, ``traffic`` is
        the multicast traffic (the models place :meth:`quotient`'s packet graph)."""
        if self.objective.name == "cut":
            return float(cut)
        if self.objective.name in ("traffic", "multicast"):
            return float(traffic)
        return float(noc_energy_j(float(traffic) * self.weight_bytes,
                                  self.hop_energy_pj_per_bit))

    @property
    def multicast(self) -> bool:
        return self.objective.name == "multicast"

    def quotient(self, group: Any, n_groups: int) -> NeuronGraph:
        """The graph a placement of ``group`` minimizes Σ weight·hops on: the
        quotient of the synapse (or spike-weighted) graph, or — for the ``multicast``
        objective — the packet graph (:func:`chipsched.neurongraph.multicast_quotient`),
        so that every placement method optimizes the instance's objective exactly for a
        fixed partition."""
        if self.multicast:
            return multicast_quotient(self.graph, group, n_groups, self.spikes)
        return self.graph.contract(group, n_groups)

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "vertices": self.n, "edges": self.graph.m,
                "total_size": self.graph.total_size, "total_weight": self.graph.total_weight,
                "mesh": f"{self.rows}x{self.cols}", "capacity": self.capacity,
                "chip": self.hardware.name, "objective": self.objective.name,
                "spike_weighted": self.spikes is not None}


@dataclass(frozen=True, eq=False)
class Solution:
    """``core[v]`` = row-major core id of vertex ``v``."""

    core: np.ndarray

    def __post_init__(self) -> None:
        raw = np.asarray(self.core)
        if raw.dtype.kind == "f" and not np.array_equal(raw, np.round(raw)):
            bad = int(np.flatnonzero(raw != np.round(raw))[0])
            raise InputError(f"solution.core[{bad}]", f"{float(raw[bad])!r} is not a core id",
                             "core ids are whole numbers (row-major)")
        object.__setattr__(self, "core", np.ascontiguousarray(raw, dtype=np.int64))

    def groups(self) -> tuple[np.ndarray, np.ndarray]:
        """``(group, cores)``: group ids 0..G-1 in order of first appearance and the core
        of each group (the seed-004 'neuron groups')."""
        cores, first, inv = np.unique(self.core, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.shape[0])
        return rank[inv], cores[order]

    def to_dict(self) -> dict[str, Any]:
        return {"core": self.core.tolist()}

    @classmethod
    def from_dict(cls, instance: Any, data: Mapping[str, Any]) -> Solution:
        """Inverse of :meth:`to_dict` (``{"core": [...]}``)."""
        if not isinstance(data, Mapping) or set(data) != {"core"}:
            raise InputError("solution", "a core_assignment solution is {core: [core of "
                             "every vertex]}")
        core = data["core"]
        if not isinstance(core, (list, tuple, np.ndarray)) or not all(
                isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in core):
            raise InputError("solution.core", "must be a list of integer core ids")
        return cls(np.asarray(core, dtype=np.int64))

    @classmethod
    def from_any(cls, x: Any) -> Solution:
        """A solution from itself, its dict form, or an array of core ids."""
        if isinstance(x, Solution):
            return x
        if isinstance(x, Mapping):
            return cls.from_dict(None, x)
        return cls(np.asarray(x))


def check_solution(instance: Instance, solution: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate a solution; return ``(core, loads)``. Raises :class:`InputError` naming
    the first vertex without a valid core or the first core over capacity."""
    sol = Solution.from_any(solution)
    core = sol.core
    if core.shape != (instance.n,):
        raise InputError("solution.core", f"has {core.shape[0] if core.ndim else 0} entries, "
                         f"the graph has {instance.n} vertices")
    bad = np.flatnonzero((core < 0) | (core >= instance.n_cores))
    if bad.size:
        v = int(bad[0])
        raise InputError(f"solution.core[{v}]", f"core {int(core[v])} is not on the "
                         f"{instance.rows}×{instance.cols} array")
    loads = np.bincount(core, weights=instance.graph.sizes,
                        minlength=instance.n_cores).astype(np.int64)
    over = np.flatnonzero(loads > instance.capacity)
    if over.size:
        c = int(over[0])
        r, k = divmod(c, instance.cols)
        raise InputError(f"solution: core {c} ({r}, {k})",
                         f"holds {int(loads[c])} neurons, over its capacity {instance.capacity}")
    return core, loads


def evaluate(instance: Instance, solution: Any) -> tuple[float, dict[str, Any]]:
    """Objective and metrics of a vertex → core mapping, from the shared cost model.

    Metrics: ``cut_weight``, ``traffic`` (Σ w·hops), ``byte_hops``, ``noc_energy_j``,
    ``max_link_bytes`` and ``busiest_link`` (XY routing, direction u < v → u to v),
    ``cores_used``, ``max_core_load``, ``capacity``, ``mean_hops`` (traffic / cut),
    ``multicast_packets`` and ``multicast_traffic`` (the same mapping when a neuron sends
    one packet per spike and destination core, not one per synapse: SNEAP / SpiNeMap's
    model; unicast per destination core over XY routes — a tree sharing links would be
    lower still).
    """
    core, loads = check_solution(instance, solution)
    flows = directed_flows(instance.graph, core, instance.n_cores)
    packets = multicast_flows(instance.graph, core, instance.n_cores, instance.spikes)
    return evaluate_flows(instance, loads, flows, packets)


def evaluate_flows(instance: Instance, loads: np.ndarray,
                   flows: tuple[np.ndarray, np.ndarray, np.ndarray],
                   packets: tuple[np.ndarray, np.ndarray, np.ndarray]
                   ) -> tuple[float, dict[str, Any]]:
    """:func:`evaluate` from the core loads and the core-to-core flows of a mapping
    (``neurongraph.directed_flows`` / ``multicast_flows`` by core: ``(src, dst, w)``).
    The one place the metrics are computed — also for graphs that stay on disk
    (``instance.graph`` is not read here)."""
    src, dst, w = flows
    sr, sc = instance.coords(src)
    dr, dc = instance.coords(dst)
    h = hops(sr, sc, dr, dc)
    cut = int(w.sum())
    traffic = int((w * h).sum())
    byte_hops = traffic * instance.weight_bytes
    energy = float(noc_energy_j(byte_hops, instance.hop_energy_pj_per_bit))
    links = xy_link_loads(instance.rows, instance.cols, sr, sc, dr, dc,
                          w * instance.weight_bytes)
    if w.size:
        (a, b, load) = links.busiest()
        busiest = {"from": list(a), "to": list(b), "bytes": float(load)}
    else:
        busiest = None
    msrc, mdst, pk = packets
    mr, mc = instance.coords(msrc)
    nr, nc = instance.coords(mdst)
    metrics = {
        "cut_weight": cut,
        "traffic": traffic,
        "byte_hops": float(byte_hops),
        "noc_energy_j": energy,
        "max_link_bytes": float(links.max),
        "busiest_link": busiest,
        "cores_used": int((loads > 0).sum()),
        "max_core_load": int(loads.max()),
        "capacity": instance.capacity,
        "mean_hops": traffic / cut if cut else 0.0,
        "multicast_packets": int(pk.sum()),
        "multicast_traffic": int((pk * hops(mr, mc, nr, nc)).sum()),
    }
    value = {"cut": float(cut), "traffic": float(traffic), "energy": energy,
             "multicast": float(metrics["multicast_traffic"])}[instance.objective.name]
    return value, metrics


def link_loads(instance: Instance, solution: Any) -> Any:
    """The :class:`chipsched.cost.LinkLoads` (bytes per directed link) of a mapping."""
    core, _ = check_solution(instance, solution)
    src, dst, w = directed_flows(instance.graph, core, instance.n_cores)
    sr, sc = instance.coords(src)
    dr, dc = instance.coords(dst)
    return xy_link_loads(instance.rows, instance.cols, sr, sc, dr, dc,
                         w * instance.weight_bytes)


def core_loads(instance: Instance, solution: Any) -> np.ndarray:
    """Neurons per core as a ``rows × cols`` array."""
    _, loads = check_solution(instance, solution)
    return loads.reshape(instance.rows, instance.cols)


# ---------------------------------------------------------------------------------------
# building instances


def fit_mesh(total_size: int, capacity: int, headroom: float = FIT_HEADROOM
             ) -> tuple[int, int]:
    """Smallest near-square ``(rows, cols)`` with ``rows·cols ≥ ⌈headroom·total/capacity⌉``.

    The factor 2 of the default headroom: seed 004's recursive bisection halves by
    vertex count and can produce up to twice the minimum number of parts.
    """
    k = max(1, math.ceil(headroom * total_size / capacity))
    rows = max(1, math.isqrt(k))
    cols = -(-k // rows)
    return rows, cols


def chip_capacity(hardware: Hardware) -> int:
    """Neurons per core of a neuromorphic chip; :class:`InputError` for any other chip."""
    if not hardware.core_capacity:
        raise InputError(f"chip {hardware.name!r}", "has no core_capacity (not a neuromorphic "
                         "array)", "use a chip such as neuro-8x8 or neuro-RxC-kCAP")
    return int(hardware.core_capacity)


def make_instance(source: NeuronGraph | Workload | Instance, hardware: Hardware, *,
                  objective: str | Objective | None = None, channels_per_vertex: int = 1,
                  include_input: bool = True, batch: int | None = None,
                  sized_to_fit: bool = False, name: str | None = None,
                  weight_bytes: float | None = None, spikes: Any = None,
                  **meta: Any) -> Instance:
    """A core_assignment instance: ``source`` (a ``NeuronGraph``, or a ``Workload`` whose
    neuron graph is built with ``channels_per_vertex`` and ``include_input``) on
    ``hardware``'s core array — or, with ``sized_to_fit``, on the smallest near-square
    array that fits the graph (:func:`fit_mesh`) with the chip's capacity. Instances on
    the chip's own array are named ``graph@chip`` (the same graph on another chip is
    another instance). ``spikes`` (one count per vertex) weights the edges by spike
    activity (:func:`chipsched.neurongraph.spike_weighted`). A ready instance gets
    ``objective`` applied."""
    if batch not in (None, 1):
        raise InputError("batch", "does not apply to core_assignment",
                         "a neuron graph is per inference")
    if isinstance(source, Instance):
        if spikes is not None:
            raise InputError("spikes", "cannot be applied to a ready instance (its graph "
                             "is built)", "pass the spikes with the graph or network")
        return source.with_objective(objective) if objective else source
    if isinstance(source, Workload):
        graph = from_workload(source, channels_per_vertex, include_input)
        wb = float(source.precision_bytes) if weight_bytes is None else weight_bytes
        meta = {"network": source.name, **meta}
    elif isinstance(source, NeuronGraph):
        graph, wb = source, 1.0 if weight_bytes is None else weight_bytes
    else:
        raise InputError("instance", f"a {type(source).__name__} is neither a neuron graph "
                         "nor a network", "give a NeuronGraph or a Workload")
    spk = None
    if spikes is not None:
        graph = spike_weighted(graph, spikes)
        spk = np.asarray(spikes).astype(np.int64)
    cap = chip_capacity(hardware)
    if sized_to_fit:
        rows, cols = fit_mesh(graph.total_size, cap)
        label = name or graph.name
    else:
        rows, cols = hardware.rows, hardware.cols
        label = name or f"{graph.name}@{hardware.name}"
    return Instance(label, graph, hardware, rows, cols, cap,
                    objective=OBJECTIVES.parse(objective), weight_bytes=wb, spikes=spk,
                    meta={"chip": hardware.name, **({"sized_to_fit": True} if sized_to_fit
                                                    else {}), **meta})


PROBLEM = Problem(
    name="core_assignment",
    summary="neurons of a neuron graph onto a mesh of capacity-limited cores (seed 004)",
    default_chip="neuro-8x8",
    instance_types=(Instance,),
    solution_types=(Solution,),
    make_instance=make_instance,
    evaluate=evaluate,
    solution_from_dict=Solution.from_dict,
    objectives=lambda instance: OBJECTIVES,
    instance_options=("objective", "batch", "channels_per_vertex", "include_input"),
    instance_size=lambda inst: float(inst.n),
    size_unit="vertices",
)
