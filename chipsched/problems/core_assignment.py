"""core_assignment: neurons (vertices of a :class:`~chipsched.neurongraph.NeuronGraph`) onto
a ``rows × cols`` mesh of cores with a capacity (seed 004, ``../shared/SEEDS.md`` §004).

Instance: the graph (vertex sizes = neurons, edge weights = synapses), the core array
(rows, cols, ``capacity`` neurons per core), the NoC figures of the chip (pJ/bit/hop,
link bandwidth) and ``weight_bytes`` — bytes one unit of edge weight carries per
inference (the activation precision for graphs built from a workload).

Solution: ``core[v]`` for every vertex ``v`` (row-major core id ``row·cols + col``);
several vertices may share a core as long as its load (sum of sizes) is at most the
capacity.

Objectives (all minimized; ``Instance.objective`` chooses the one reported as
``Result.objective``, the others are metrics), every number from ``chipsched.cost``:

* ``traffic`` (default) — hop-weighted traffic ``Σ w·hops(core(u), core(v))`` over the
  edges, hops = Manhattan distance (XY routing, :func:`chipsched.cost.hops`);
* ``cut`` — weight of the edges whose ends are on different cores;
* ``energy`` — NoC energy of that traffic, :func:`chipsched.cost.noc_energy_j` of
  ``traffic × weight_bytes`` byte-hops.

Always reported: the per-link loads under XY routing (:func:`chipsched.cost.xy_link_loads`)
with the most loaded link, the core loads and how many cores are used. Link loads need a
direction per edge: an edge ``{u, v}`` with ``u < v`` carries its weight from u to v (see
:mod:`chipsched.neurongraph`).

:func:`evaluate` is the only place these numbers are computed; an infeasible solution (a
core over capacity, a vertex without a core) raises :class:`InputError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from chipsched.cost import hops, noc_energy_j, xy_link_loads
from chipsched.errors import InputError
from chipsched.neurongraph import NeuronGraph, directed_flows

OBJECTIVES = ("traffic", "cut", "energy")


@dataclass(frozen=True, eq=False)
class Instance:
    """A neuron graph and a core array. Validation raises one-line :class:`InputError`\\ s:
    a vertex larger than a core, a total size larger than the array."""

    name: str
    graph: NeuronGraph
    rows: int
    cols: int
    capacity: int
    objective: str = "traffic"
    weight_bytes: float = 1.0
    hop_energy_pj_per_bit: float = 0.7
    link_bandwidth_gb_s: float = 8.0
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise InputError("objective", f"unknown objective {self.objective!r} for "
                             "core_assignment", f"use one of {', '.join(OBJECTIVES)}")
        for k in ("rows", "cols", "capacity"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"cores.{k}", f"must be a positive integer, got {v!r}")
            object.__setattr__(self, k, int(v))
        if not self.weight_bytes > 0:
            raise InputError("weight_bytes", f"must be positive, got {self.weight_bytes}")
        if self.hop_energy_pj_per_bit < 0:
            raise InputError("hop_energy_pj_per_bit", "must be >= 0")
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
    def n_cores(self) -> int:
        return self.rows * self.cols

    @property
    def n(self) -> int:
        return self.graph.n

    def coords(self, core: Any) -> tuple[np.ndarray, np.ndarray]:
        """(row, col) arrays of row-major core ids."""
        return np.divmod(np.asarray(core, dtype=np.int64), self.cols)

    def with_objective(self, objective: str) -> Instance:
        return replace(self, objective=objective)

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
        which optimize traffic or cut in integer units)."""
        if self.objective == "cut":
            return float(cut)
        if self.objective == "traffic":
            return float(traffic)
        return float(noc_energy_j(float(traffic) * self.weight_bytes,
                                  self.hop_energy_pj_per_bit))

    @property
    def objective_scale(self) -> float:
        """Objective per unit of integer model objective (cut or traffic)."""
        return self.objective_from_traffic(1.0, 1.0)

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "vertices": self.n, "edges": self.graph.m,
                "total_size": self.graph.total_size, "total_weight": self.graph.total_weight,
                "mesh": f"{self.rows}x{self.cols}", "capacity": self.capacity,
                "objective": self.objective}


@dataclass(frozen=True, eq=False)
class Solution:
    """``core[v]`` = row-major core id of vertex ``v``."""

    core: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "core", np.ascontiguousarray(self.core, dtype=np.int64))

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
    def from_any(cls, x: Any) -> Solution:
        if isinstance(x, Solution):
            return x
        if isinstance(x, Mapping) and "core" in x:
            return cls(np.asarray(x["core"]))
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
    ``cores_used``, ``max_core_load``, ``capacity``, ``mean_hops`` (traffic / cut).
    """
    core, loads = check_solution(instance, solution)
    src, dst, w = directed_flows(instance.graph, core, instance.n_cores)
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
    }
    value = {"cut": float(cut), "traffic": float(traffic), "energy": energy}[instance.objective]
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
