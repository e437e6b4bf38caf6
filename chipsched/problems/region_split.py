"""region_split: cut a network into contiguous pipeline regions (seeds 000 and 001).

Two platforms, one decision (``docs/region_split.md`` has every formula with its source):

* **chiplet grid** (seed 000, CN115421897A): the items are the pipeline groups of the
  group graph S (``chipsched.graph``; or the layers, ``items="layers"``), in depth
  order. A solution cuts them into contiguous regions, gives region r ``m_r ≥ 1``
  sub-chiplets (Σ m_r ≤ M) and places the regions on the grid (serpentine by default;
  exactly by a core_assignment placement method with the methods' ``placement``
  parameter, :func:`with_placement`, over the slot flows of :func:`placement_flows`).
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
Σ region costs + Σ transfers, i.e. the t1 + t2 + t3 accounting; also the latency of
one frame through an empty pipeline), ``period`` = the slowest stage (1/throughput),
``latency`` = R · period, the latency of a frame in the steady-state pipeline where
the R stages hand frames over through double buffers once per period.

:func:`evaluate` is the only place objective values are computed. It sums region
costs directly (:func:`chiplet_stage`, :func:`soc_stage`); the exact models use the
vectorized tables :func:`chiplet_stage_table` / :func:`soc_tables`, so the face's
consistency check compares two independent code paths.
"""

from __future__ import annotations

import functools
import heapq
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from chipsched.cost import (
    CostModel,
    control_roundtrip_s,
    noc_energy_j,
    processor_time_s,
    xy_link_loads,
)
from chipsched.errors import InputError
from chipsched.graph import GroupGraph, OpGraph, computation_graph, seed000_group_graph
from chipsched.hardware import Hardware
from chipsched.workload import Workload

OBJECTIVES = ("cost", "period", "latency")
ITEMS = ("groups", "layers")

#: Default thresholds of seed 001 (seconds): split when the predicted frame time exceeds
#: a 500 frames/s budget. Our choice; the document gives no number.
DEFAULT_THRESHOLD_S = 2e-3


# ---------------------------------------------------------------------------------------
# Seed 000: the transfer formula C = f(M, d, N) and t3


COLLECTIVES = ("chain", "ring")


@dataclass(frozen=True)
class TransferModel:
    """Seed 000's data-transfer costs, the formula the scraped document lost.

    ``within(M, d)`` — C = f(M, d, N), the cost of moving the internal data volume ``d``
    (bytes; the sum of the region's edge weights in S) of a region on M sub-chiplets of
    N NPUs each. Every operator of a region is split over all its NPUs and the next
    operator needs the whole tensor on every NPU, so each tensor is broadcast to all
    of them. Two collectives (``collective``):

    ``"chain"`` (default) — store-and-forward broadcast along the chain of the region's
    M sub-chiplets (the serpentine order they are placed in), each of the M − 1 hops
    forwarding the whole tensor, then along the N NPUs of a sub-chiplet on the on-die
    interconnect (linear-array broadcast, Grama et al., *Introduction to Parallel
    Computing*, §4.1)::

        C = (M − 1)·(α + d/B) + (N − 1)·d/B_intra

    ``"ring"`` — a ring all-gather, all links busy at once (Thakur, Rabenseifner and
    Gropp 2005)::

        C = (M − 1)·(α + d/(M·B)) + (N − 1)·d/(N·B_intra)

    C grows with M under ``chain`` — the only way the document's rule
    t0 > t1 + t2 + t3 can favour a split (under ``ring`` C hardly depends on M, fewer
    sub-chiplets per region only slow the compute, and seed 000 almost never splits
    the library networks; docs/region_split.md). C = 0 when d = 0.

    ``between(w)`` — t3, sending ``w`` bytes from one region to another over one
    die-to-die hop: ``α + w/B`` (0 when w = 0).

    α = die-to-die hop latency (s), B = die-to-die link bandwidth (B/s), B_intra =
    on-die bandwidth of a sub-chiplet (B/s), N = NPUs per sub-chiplet. Subclass and
    override both methods (vectorized over numpy arrays) to try another formula;
    every method and the evaluator use the instance's model.
    """

    hop_latency_s: float
    link_bytes_per_s: float
    intra_bytes_per_s: float
    npus: int
    collective: str = "chain"

    def __post_init__(self) -> None:
        if self.collective not in COLLECTIVES:
            raise InputError("transfer", f"unknown collective {self.collective!r}",
                             f"use one of {', '.join(COLLECTIVES)}")

    def within(self, m: Any, d: Any) -> Any:
        """C = f(M, d, N) in seconds (vectorized over ``m`` and ``d``)."""
        m = np.asarray(m, dtype=float)
        d = np.asarray(d, dtype=float)
        n = self.npus
        if self.collective == "chain":
            d2d = (m - 1) * (self.hop_latency_s + d / self.link_bytes_per_s)
            intra = (n - 1) * d / self.intra_bytes_per_s if n > 1 else 0.0 * d
        else:
            d2d = (m - 1) * (self.hop_latency_s + d / (m * self.link_bytes_per_s))
            intra = (n - 1) * d / (n * self.intra_bytes_per_s) if n > 1 else 0.0 * d
        out = np.where(d > 0, d2d + intra, 0.0)
        return out if out.ndim else float(out)

    def between(self, w: Any) -> Any:
        """t3 in seconds: one die-to-die hop carrying ``w`` bytes (vectorized)."""
        w = np.asarray(w, dtype=float)
        out = np.where(w > 0, self.hop_latency_s + w / self.link_bytes_per_s, 0.0)
        return out if out.ndim else float(out)

    @classmethod
    def of_chip(cls, hw: Hardware, collective: str = "chain") -> TransferModel:
        """The model's numbers from a chiplet (or tiled) chip's ``noc`` and ``chiplet``."""
        if hw.noc is None or hw.unit is None:
            raise InputError(f"chip {hw.name!r}.noc", "a chiplet grid needs 'unit' and 'noc' "
                             "sections (die-to-die links)")
        npus = hw.chiplet.npus if hw.chiplet else 1
        intra = hw.chiplet.intra_bandwidth_gb_s * 1e9 if hw.chiplet else math.inf
        return cls(hop_latency_s=hw.noc.hop_latency_cycles / hw.unit.frequency_hz,
                   link_bytes_per_s=hw.noc.link_bytes_per_s, intra_bytes_per_s=intra,
                   npus=npus, collective=collective)


# ---------------------------------------------------------------------------------------
# Seed 000: compute cost of a pipeline group on m sub-chiplets


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


# ---------------------------------------------------------------------------------------
# Load traces (seed 001: processors with a time-varying background load)


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
        t = np.array(self.times, dtype=float).ravel()  # copies: the caller's stay writable
        ld = np.atleast_2d(np.array(self.loads, dtype=float))
        if t.size == 0 or t[0] != 0 or np.any(np.diff(t) <= 0):
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


# ---------------------------------------------------------------------------------------
# Instances


def _check_common(objective: str, batch: int, max_regions: int | None, limit: int,
                  what: str) -> None:
    if objective not in OBJECTIVES:
        raise InputError("objective", f"unknown objective {objective!r} for region_split",
                         f"use one of {', '.join(OBJECTIVES)}")
    if not isinstance(batch, (int, np.integer)) or isinstance(batch, bool) or batch < 1:
        raise InputError("batch", f"must be a positive integer, got {batch!r}")
    if max_regions is not None:
        if not isinstance(max_regions, (int, np.integer)) or max_regions < 1:
            raise InputError("max_regions", f"must be a positive integer, got {max_regions!r}")
        if max_regions > limit:
            raise InputError("max_regions", f"{max_regions} regions asked but the chip has "
                             f"only {limit} {what}", f"ask for at most {limit} (each region "
                             f"needs its own {what.rstrip('s')})")


@dataclass(frozen=True, eq=False)
class ChipletInstance:
    """Region splitting on a chiplet grid (seed 000). Build with :func:`chiplet_instance`.

    ``group_time[p, m − 1]`` is the compute cost D of item p on m sub-chiplets (s);
    ``edge_bytes[p, q]`` the bytes item p sends item q per frame (edges of S).
    """

    name: str
    workload: Workload
    hardware: Hardware
    objective: str
    batch: int
    max_regions: int | None
    items: str
    groups: GroupGraph
    transfer: TransferModel
    group_time: np.ndarray
    edge_bytes: np.ndarray

    platform = "chiplet"

    @property
    def objective_name(self) -> str:
        return self.objective

    @property
    def n_items(self) -> int:
        return len(self.groups)

    @property
    def chiplets(self) -> int:
        """M: sub-chiplets on the grid."""
        return self.hardware.rows * self.hardware.cols

    @property
    def region_limit(self) -> int:
        lim = min(self.n_items, self.chiplets)
        return lim if self.max_regions is None else min(lim, self.max_regions)

    @cached_property
    def _prefix(self) -> dict[str, np.ndarray]:
        """2-D prefix sums of edge bytes for d_int(i, j) and out(i, j)."""
        w = self.edge_bytes
        n = self.n_items
        # S[a, b] = Σ w[p, q] for p ≥ a, q ≤ b - 1 (upper-left-open rectangle sums)
        cs = np.zeros((n + 1, n + 1))
        cs[:n, 1:] = np.cumsum(w[::-1], axis=0)[::-1].cumsum(axis=1)
        row = np.zeros((n + 1, n))  # row[a, q] = Σ_{p ≥ a} w[p, q]
        row[:n] = np.cumsum(w[::-1], axis=0)[::-1]
        return {"cs": cs, "row": row}

    def internal_bytes(self, i: int, j: int) -> float:
        """d of seed 000 for the region of items i..j: Σ of S's edge weights inside it."""
        return float(self.edge_bytes[i:j + 1, i:j + 1].sum())

    def sent_bytes(self, i: int, j: int) -> float:
        """Bytes the region of items i..j sends to later items (edges to q > j)."""
        return float(self.edge_bytes[i:j + 1, j + 1:].sum())


@dataclass(frozen=True, eq=False)
class SocInstance:
    """Layer splitting over a processor chain (seed 001). Build with :func:`soc_instance`.

    ``chain`` are indices into ``hardware.processors`` in chain order; ``layer_time[l, p]``
    the nominal time of layer l on chain processor p (no background load);
    ``boundary_bytes[j]`` the bytes live across the cut after layer j (tensors made at
    or before j and used after it); ``loads[p]`` the background load the objective is
    evaluated under; ``trace`` a time-varying load for the dynamic simulation (its
    last phase equals ``loads``); ``thresholds[k]`` seed 001's threshold k+1 (s);
    ``buffers`` the shared frame buffers (default: one per sub-model).
    """

    name: str
    workload: Workload
    hardware: Hardware
    objective: str
    batch: int
    max_regions: int | None
    chain: tuple[int, ...]
    layer_time: np.ndarray
    boundary_bytes: np.ndarray
    loads: tuple[float, ...]
    thresholds: tuple[float, ...]
    buffers: int | None = None
    trace: LoadTrace | None = None

    platform = "soc"

    @property
    def objective_name(self) -> str:
        return self.objective

    @property
    def n_items(self) -> int:
        return len(self.workload)

    @property
    def n_procs(self) -> int:
        return len(self.chain)

    @property
    def region_limit(self) -> int:
        lim = min(self.n_items, self.n_procs)
        return lim if self.max_regions is None else min(lim, self.max_regions)

    def proc_name(self, p: int) -> str:
        return self.hardware.processors[self.chain[p]].name

    @cached_property
    def nominal_prefix(self) -> np.ndarray:
        """``(L+1, P)``: Σ_{l<k} nominal time of layer l on chain processor p."""
        pre = np.zeros((self.n_items + 1, self.n_procs))
        pre[1:] = np.cumsum(self.layer_time, axis=0)
        return pre

    @cached_property
    def handover_table(self) -> np.ndarray:
        """``(L−1, P, P)``: handover after layer j from chain processor p to q (s)."""
        L, P = self.n_items, self.n_procs
        h = np.zeros((max(L - 1, 0), P, P))
        ic = self.hardware.interconnect
        for p in range(P):
            for q in range(P):
                if p == q:
                    continue
                a, b = self.chain[p], self.chain[q]
                lat, bw = ic.latency_us[a][b] * 1e-6, ic.bandwidth_gb_s[a][b] * 1e9
                h[:, p, q] = np.where(self.boundary_bytes > 0,
                                      lat + self.boundary_bytes / bw, 0.0)
        return h

    @cached_property
    def loaded_time(self) -> np.ndarray:
        """``layer_time`` slowed by the background ``loads``: t / (1 − load)."""
        return self.layer_time / (1.0 - np.asarray(self.loads))[None, :]

    def handover_s(self, j: int, p: int, q: int) -> float:
        """Seed 001's handover after layer j from chain processor p to q: the tensors live
        at the boundary go through the shared buffer (``transfer_time_s``)."""
        from chipsched.cost import transfer_time_s

        return transfer_time_s(self.hardware, self.chain[p], self.chain[q],
                               float(self.boundary_bytes[j]))

    def with_loads(self, loads: Sequence[float]) -> SocInstance:
        """The same instance evaluated under other background loads (no trace)."""
        return soc_with_loads(self, loads)


Instance = ChipletInstance | SocInstance


def chiplet_instance(workload: Workload, hardware: Hardware, *, objective: str = "period",
                     batch: int = 1, max_regions: int | None = None, items: str = "groups",
                     transfer: TransferModel | str | None = None, name: str | None = None
                     ) -> ChipletInstance:
    """A seed-000 instance: ``workload`` on a chiplet grid (or a tiled chip, one unit per
    node), items = pipeline groups of S (``items="groups"``) or layers; ``transfer`` is
    a :class:`TransferModel` or the name of its collective ('chain', 'ring')."""
    kind = hardware.kind()
    if kind not in ("chiplet", "tiled"):
        raise InputError("chip", f"{hardware.name!r} is a {kind} chip; region_split on a grid "
                         "needs a chiplet grid", "use e.g. --chip chiplet-4x4, or a "
                         "soc-* chip for the processor-chain split")
    if items not in ITEMS:
        raise InputError("items", f"unknown item kind {items!r}", f"use one of {ITEMS}")
    M = hardware.rows * hardware.cols
    _check_common(objective, batch, max_regions, M, "sub-chiplets")
    if transfer is None or isinstance(transfer, str):
        tm = TransferModel.of_chip(hardware, transfer or "chain")
    elif isinstance(transfer, TransferModel):
        tm = transfer
    else:
        raise InputError("transfer", f"expected a collective name or a TransferModel, got "
                         f"{type(transfer).__name__}", f"use one of {', '.join(COLLECTIVES)}")
    S = seed000_group_graph(workload) if items == "groups" else layer_items(workload)
    npus = hardware.chiplet.npus if hardware.chiplet else 1
    table = CostModel(workload, hardware).layer_table((batch,), max_units=M * npus)
    cyc = table.cycles[:, :, 0]
    gt = group_times(S.graph, S.groups, cyc, hardware.unit.frequency_hz, npus, M)
    n = len(S)
    eb = np.zeros((n, n))
    for p, q, w in S.edges:
        eb[p, q] += w * batch
    gt.setflags(write=False)
    eb.setflags(write=False)
    return ChipletInstance(name or f"{workload.name}@{hardware.name}", workload, hardware,
                           objective, int(batch), max_regions, items, S, tm, gt, eb)


def _check_loads(loads: Sequence[float], n: int, field_: str) -> tuple[float, ...]:
    vals = tuple(float(x) for x in loads)
    if len(vals) != n:
        raise InputError(field_, f"has {len(vals)} values for a chain of {n} processors",
                         "give one load per processor of the chain")
    for v in vals:
        if not (0 <= v < 1):
            raise InputError(field_, f"load {v} outside [0, 1)",
                             "a load is the share of the processor taken by other work")
    return vals


def soc_instance(workload: Workload, hardware: Hardware, *, objective: str = "period",
                 batch: int = 1, max_regions: int | None = None,
                 chain: Sequence[str] | None = None, loads: Sequence[float] | None = None,
                 thresholds: Sequence[float] | float | None = None, buffers: int | None = None,
                 trace: LoadTrace | None = None, name: str | None = None) -> SocInstance:
    """A seed-001 instance: ``workload`` over the processor chain of a SoC chip.

    ``chain`` names processors of the chip in chain order (default: all, in the chip's
    order). ``thresholds``: seed 001's threshold 1, 2, … in seconds (one per extra
    sub-model; a number is used for all). ``loads``: constant background loads; with a
    ``trace`` they default to (and must equal) the trace's last phase.
    """
    if hardware.kind() != "soc":
        raise InputError("chip", f"{hardware.name!r} has no processor chain",
                         "use a soc-* chip (e.g. soc-npu-gpu-cpu) or a chip file with "
                         "'processors'")
    names = [p.name for p in hardware.processors]
    chain_names = list(names if chain is None else chain)
    if not chain_names:
        raise InputError("chain", "a processor chain of length 0",
                         f"name at least one processor of the chip: {', '.join(names)}")
    idx = []
    for c in chain_names:
        idx.append(hardware.processor_index(c))
    if len(set(idx)) != len(idx):
        raise InputError("chain", "names a processor twice", "each processor runs one sub-model")
    P = len(idx)
    _check_common(objective, batch, max_regions, P, "processors")
    if thresholds is None:
        th = (DEFAULT_THRESHOLD_S,) * (P - 1)
    elif isinstance(thresholds, (int, float)):
        th = (float(thresholds),) * (P - 1)
    else:
        th = tuple(float(x) for x in thresholds)
    if len(th) != P - 1:
        raise InputError("thresholds", f"{len(th)} given for a chain of {P} processors",
                         f"give {P - 1} (threshold k splits into k+1 sub-models)")
    for k, t in enumerate(th):
        if not (t >= 0) or not math.isfinite(t):
            raise InputError("thresholds", f"threshold {k + 1} is {t} s",
                             "thresholds are predicted frame times in seconds, ≥ 0")
    if buffers is not None and (not isinstance(buffers, (int, np.integer)) or buffers < 1):
        raise InputError("buffers", f"must be a positive integer, got {buffers!r}",
                         "2 = double buffering, 3 = triple buffering")
    if trace is not None:
        if trace.processors != P:
            raise InputError("trace.loads", f"has {trace.processors} columns for a chain of "
                             f"{P} processors", "give one load per processor of the chain")
        if loads is None:
            loads = trace.final
        elif tuple(float(x) for x in loads) != trace.final:
            raise InputError("loads", "differ from the trace's last phase",
                             "leave loads out with a trace (they are its last phase)")
    ld = _check_loads(loads if loads is not None else (0.0,) * P, P, "loads")
    L = len(workload)
    lt = np.zeros((L, P))
    for p, pi in enumerate(idx):
        proc = hardware.processors[pi]
        rt = control_roundtrip_s(hardware, pi)
        lt[:, p] = [processor_time_s(layer, proc, batch, rt) for layer in workload.layers]
    live = np.zeros(max(L - 1, 0))
    for s, d, e in workload.edges:  # tensor s→d is live across the cuts s..d-1
        live[s:d] += e * workload.precision_bytes * batch
    lt.setflags(write=False)
    live.setflags(write=False)
    return SocInstance(name or f"{workload.name}@{hardware.name}", workload, hardware,
                       objective, int(batch), max_regions, tuple(idx), lt, live, ld, th,
                       buffers, trace)


def soc_with_loads(inst: SocInstance, loads: Sequence[float]) -> SocInstance:
    """``inst`` under constant background ``loads`` (its trace dropped)."""
    ld = _check_loads(loads, inst.n_procs, "loads")
    return replace(inst, loads=ld, trace=None)


# ---------------------------------------------------------------------------------------
# Solutions


@dataclass(frozen=True)
class Solution:
    """Contiguous regions of items, the resources of each, their place on the chip.

    ``regions[r] = (first, last)`` items (inclusive), in order, covering every item once.
    Chiplet grid: ``counts[r]`` sub-chiplets of region r and ``placement[r]`` their node
    ids (row-major). Processor chain: ``processors[r]`` the chain position running
    region r (increasing).
    """

    regions: tuple[tuple[int, int], ...]
    counts: tuple[int, ...] = ()
    processors: tuple[int, ...] = ()
    placement: tuple[tuple[int, ...], ...] = ()

    @property
    def n_regions(self) -> int:
        return len(self.regions)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"regions": [list(r) for r in self.regions]}
        if self.counts:
            d["counts"] = list(self.counts)
        if self.processors:
            d["processors"] = list(self.processors)
        if self.placement:
            d["placement"] = [list(p) for p in self.placement]
        return d


def serpentine_order(rows: int, cols: int) -> list[int]:
    """Node ids of the grid row by row, every other row reversed (a boustrophedon).

    Seed 000, step 6: "deploy the regions in dependency order row by row; when the
    rest of a row cannot hold a region, fold to the next row and continue in the
    opposite direction".
    """
    order = []
    for r in range(rows):
        cs = range(cols) if r % 2 == 0 else range(cols - 1, -1, -1)
        order.extend(r * cols + c for c in cs)
    return order


def serpentine_placement(rows: int, cols: int, counts: Sequence[int]
                         ) -> tuple[tuple[int, ...], ...]:
    """Seed 000, step 6: region r takes the next ``counts[r]`` nodes of the serpentine.

    The default of every method. ``placement=bnb|cpsat|milp`` (:func:`with_placement`)
    replaces it by the core_assignment QAP's placement of the same regions; the
    evaluator accepts every valid placement and reports its traffic.
    """
    order = serpentine_order(rows, cols)
    if sum(counts) > len(order):
        raise InputError("counts", f"{sum(counts)} sub-chiplets asked, the grid has "
                         f"{len(order)}")
    out, k = [], 0
    for m in counts:
        out.append(tuple(order[k:k + m]))
        k += m
    return tuple(out)


def chiplet_solution(inst: ChipletInstance, regions: Sequence[tuple[int, int]],
                     counts: Sequence[int]) -> Solution:
    """A chiplet solution with the serpentine placement."""
    h = inst.hardware
    return Solution(tuple((int(a), int(b)) for a, b in regions), tuple(int(m) for m in counts),
                    (), serpentine_placement(h.rows, h.cols, counts))


def soc_solution(regions: Sequence[tuple[int, int]], processors: Sequence[int]) -> Solution:
    return Solution(tuple((int(a), int(b)) for a, b in regions), (),
                    tuple(int(p) for p in processors))


# ---------------------------------------------------------------------------------------
# Placement: the die-to-die flows between slots, and the methods' ``placement`` parameter


def region_bytes(inst: ChipletInstance, regions: Sequence[tuple[int, int]]) -> np.ndarray:
    """``between[r, s]``: bytes per frame region r sends region s (S's edges); the diagonal
    is each region's internal volume d."""
    region_of = np.zeros(inst.n_items, dtype=np.int64)
    for r, (a, b) in enumerate(regions):
        region_of[a:b + 1] = r
    R = len(regions)
    p, q = np.nonzero(inst.edge_bytes)
    out = np.zeros(R * R)
    np.add.at(out, region_of[p] * R + region_of[q], inst.edge_bytes[p, q])
    return out.reshape(R, R)


@dataclass(frozen=True, eq=False)
class PlacementFlows:
    """Directed byte flows between the *slots* of a solution, per frame.

    Slot ``offsets[r] + k`` is the k-th sub-chiplet of region r (slots numbered
    consecutively, region by region); a placement maps every slot to a grid node. Flow f
    carries ``bytes[f]`` from slot ``src[f]`` to slot ``dst[f]``. Directed, because the
    busiest-link metric needs a direction; the exact placement model only needs the
    undirected :meth:`pairs` (XY routing: a flow's byte·hops are its bytes times the
    Manhattan distance, whatever its direction).
    """

    counts: tuple[int, ...]
    src: np.ndarray
    dst: np.ndarray
    bytes: np.ndarray

    @property
    def n_slots(self) -> int:
        return int(sum(self.counts))

    @property
    def offsets(self) -> np.ndarray:
        """``offsets[r]`` = first slot of region r (length R + 1)."""
        return np.concatenate([[0], np.cumsum(self.counts, dtype=np.int64)])

    def slot_nodes(self, placement: Sequence[Sequence[int]]) -> np.ndarray:
        """The node of every slot under ``placement`` (region r's nodes in slot order)."""
        nodes = [int(v) for p in placement for v in p]
        if [len(p) for p in placement] != list(self.counts):
            raise InputError("placement", f"{[len(p) for p in placement]} nodes per region "
                             f"for counts {list(self.counts)}")
        return np.asarray(nodes, dtype=np.int64)

    def split(self, nodes: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        """The placement (a tuple of nodes per region, in slot order) of a slot → node map."""
        off = self.offsets
        return tuple(tuple(int(v) for v in nodes[off[r]:off[r + 1]])
                     for r in range(len(self.counts)))

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Undirected QAP flows ``(u, v, w)``, u < v, both directions of a slot pair summed:
        Σ w·hops(node(u), node(v)) is the d2d byte·hops of any placement."""
        n = max(self.n_slots, 1)
        a = np.minimum(self.src, self.dst)
        b = np.maximum(self.src, self.dst)
        key, inv = np.unique(a * n + b, return_inverse=True)
        w = np.bincount(inv.ravel(), weights=self.bytes, minlength=key.size)
        return key // n, key % n, w

    def byte_hops(self, nodes: Sequence[int], cols: int) -> float:
        """Σ bytes × Manhattan hops for the slot → node map ``nodes`` (row-major ids)."""
        u, v, w = self.pairs()
        nd = np.asarray(nodes, dtype=np.int64)
        (ur, uc), (vr, vc) = np.divmod(nd[u], cols), np.divmod(nd[v], cols)
        return float((w * (np.abs(ur - vr) + np.abs(uc - vc))).sum())


def placement_flows(inst: ChipletInstance, regions: Sequence[tuple[int, int]],
                    counts: Sequence[int]) -> PlacementFlows:
    """The die-to-die flows of a solution over its slots (slot (r, k) = the k-th
    sub-chiplet of region r) — the single definition behind the ``d2d_*`` metrics and the
    exact placement model.

    * Between regions r ≠ s: the ``between[r, s]`` bytes of S's edges from r to s, spread
      evenly over all (source, destination) slot pairs: ``between[r, s] / (m_r·m_s)``
      each (every sub-chiplet holds a share of every operator of its region).
    * Inside region r (m_r > 1, internal volume d > 0): the ring all-gather of C, slot
      (r, k) forwarding ``d·(m − 1)/m`` bytes to slot (r, (k + 1) mod m) — so the ring
      order is the slot order, i.e. the order of ``placement[r]``.
    """
    counts = tuple(int(m) for m in counts)
    between = region_bytes(inst, regions)
    off = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    src, dst, wt = [], [], []
    for r, mr in enumerate(counts):
        a = np.arange(off[r], off[r + 1])
        for s, ms in enumerate(counts):
            if r != s and between[r, s] > 0:
                b = np.arange(off[s], off[s + 1])
                src.append(np.repeat(a, ms))
                dst.append(np.tile(b, mr))
                wt.append(np.full(mr * ms, between[r, s] / (mr * ms)))
        d = between[r, r]
        if mr > 1 and d > 0:
            k = np.arange(mr)
            src.append(off[r] + k)
            dst.append(off[r] + (k + 1) % mr)
            wt.append(np.full(mr, d * (mr - 1) / mr))

    def cat(xs: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(xs).astype(dtype) if xs else np.zeros(0, dtype)

    return PlacementFlows(counts, cat(src, np.int64), cat(dst, np.int64), cat(wt, float))


#: Values of the chiplet methods' ``placement`` parameter → the core_assignment method
#: that places the slots exactly (None: seed 000's serpentine, no model).
PLACEMENTS: dict[str, str | None] = {"serpentine": None, "bnb": "bnb-place",
                                     "cpsat": "cpsat-place", "milp": "milp-place"}
DEFAULT_PLACEMENT_TIME_LIMIT = 10.0

def placement_method(placement: Any) -> str | None:
    """The core_assignment method of a ``placement`` value; bad value → InputError."""
    if not isinstance(placement, str) or placement not in PLACEMENTS:
        raise InputError("parameter placement", f"unknown placement {placement!r}",
                         f"use one of {', '.join(PLACEMENTS)}")
    return PLACEMENTS[placement]


def with_placement(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a chiplet-capable method the parameters ``placement`` and
    ``placement_time_limit`` without touching its body.

    The method runs as before (its regions and counts do not depend on the placement:
    no objective does); then, for ``placement`` ≠ ``"serpentine"``, its serpentine
    placement is replaced by the exact one of the installed placer (``bnb`` / ``cpsat``
    / ``milp`` → core_assignment's ``bnb-place`` / ``cpsat-place`` / ``milp-place``,
    ``placement_time_limit`` seconds, the options' seed and threads), never worse than
    serpentine; its stats go to ``stats["placement"]``. On a processor chain there is
    nothing to place: any value but ``"serpentine"`` is an error. The wrapper's
    ``__signature__`` lists the two parameters, so ``chipsched list`` and ``-p`` see them.
    """
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    extra = [inspect.Parameter("placement", inspect.Parameter.KEYWORD_ONLY,
                               default="serpentine", annotation=str),
             inspect.Parameter("placement_time_limit", inspect.Parameter.KEYWORD_ONLY,
                               default=DEFAULT_PLACEMENT_TIME_LIMIT, annotation=float)]
    var_kw = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    rest = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]

    @functools.wraps(func)
    def wrapper(instance: Any, options: Any, *args: Any, placement: str = "serpentine",
                placement_time_limit: float = DEFAULT_PLACEMENT_TIME_LIMIT,
                **kwargs: Any) -> Any:
        method = placement_method(placement)
        if isinstance(placement_time_limit, bool) or not isinstance(
                placement_time_limit, (int, float)) or not placement_time_limit > 0:
            raise InputError("parameter placement_time_limit", f"must be a positive number "
                             f"of seconds, got {placement_time_limit!r}")
        if method is not None and not isinstance(instance, ChipletInstance):
            raise InputError("parameter placement", f"{placement!r} places sub-chiplets on a "
                             "chiplet grid; a processor chain has nothing to place",
                             "drop -p placement (or use placement=serpentine)")
        out = func(instance, options, *args, **kwargs)
        if method is None or out.solution is None:
            return out
        # imported here: the exact step is a model (formulations), and heuristics take
        # this parameter too; a module-level import would make the layers circular
        from chipsched.formulations.region_split import exact_placement

        sol, stats = exact_placement(instance, out.solution, method,
                                     float(placement_time_limit), seed=options.seed,
                                     threads=options.threads)
        return replace(out, solution=sol, stats={**out.stats, "placement": stats})

    new_sig = sig.replace(parameters=rest + extra + var_kw)
    wrapper.__signature__ = new_sig  # type: ignore[attr-defined]
    return wrapper


def check_regions(regions: Sequence[tuple[int, int]], n: int, limit: int,
                  max_regions: int | None) -> None:
    """Regions are contiguous, in order, cover items 0..n−1 exactly once, ≤ the limit."""
    if not regions:
        raise InputError("solution.regions", "is empty", "give at least one region")
    expect = 0
    for k, (a, b) in enumerate(regions):
        if a != expect or b < a:
            raise InputError(f"solution.regions[{k}]", f"({a}, {b}) is not contiguous "
                             f"with the previous region (expected to start at {expect})")
        expect = b + 1
    if expect != n:
        raise InputError("solution.regions", f"cover items 0..{expect - 1}, not 0..{n - 1}")
    if max_regions is not None and len(regions) > max_regions:
        raise InputError("solution.regions", f"{len(regions)} regions, max_regions is "
                         f"{max_regions}")
    if len(regions) > limit:
        raise InputError("solution.regions", f"{len(regions)} regions, at most {limit} fit")


# ---------------------------------------------------------------------------------------
# Stage times (the direct path used by evaluate) and tables (used by the exact models)


def chiplet_parts(inst: ChipletInstance, i: int, j: int, m: int) -> tuple[float, float, float]:
    """(D, C, T) of the region of items i..j on m sub-chiplets, in seconds."""
    D = float(inst.group_time[i:j + 1, m - 1].sum())
    C = float(inst.transfer.within(m, inst.internal_bytes(i, j)))
    T = float(inst.transfer.between(inst.sent_bytes(i, j)))
    return D, C, T


def chiplet_stage(inst: ChipletInstance, i: int, j: int, m: int) -> float:
    """Stage time of items i..j on m sub-chiplets: D + C + T (s)."""
    D, C, T = chiplet_parts(inst, i, j, m)
    return D + C + T


def expected_cost(inst: ChipletInstance, i: int, j: int, m: int) -> float:
    """Seed 000, step 5: expected cost of the sub-graph i..j on m sub-chiplets, C + D."""
    D, C, _ = chiplet_parts(inst, i, j, m)
    return C + D


def chiplet_stage_table(inst: ChipletInstance) -> np.ndarray:
    """``table[i, j, m − 1]`` = stage time of items i..j on m sub-chiplets (inf if j < i).

    Vectorized with prefix sums; the exact models are built over it.
    """
    n, M = inst.n_items, inst.chiplets
    pre = np.zeros((n + 1, M))
    pre[1:] = np.cumsum(inst.group_time, axis=0)
    D = pre[None, 1:, :] - pre[:n, None, :]  # D[i, j] = Σ_{p=i..j}
    cs, row = inst._prefix["cs"], inst._prefix["row"]
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    # d_int(i, j) = Σ_{p ≥ i, q ≤ j} w[p, q]  (edges go forward, so p ≥ i and q ≤ j
    # with p < q puts both inside i..j)
    d_int = cs[ii, jj + 1]
    # sent(i, j) = Σ_{i ≤ p ≤ j, q > j} w = Σ_{p ≥ i, q > j} − Σ_{p > j, q > j}
    tot = np.concatenate([np.cumsum(row[:, ::-1], axis=1)[:, ::-1], np.zeros((n + 1, 1))],
                         axis=1)  # tot[a, b] = Σ_{p ≥ a, q ≥ b} w
    sent = tot[ii, jj + 1] - tot[jj + 1, jj + 1]
    m = np.arange(1, M + 1)[None, None, :]
    C = inst.transfer.within(m, d_int[:, :, None])
    T = inst.transfer.between(sent)[:, :, None]
    table = D + C + T
    table[jj < ii] = np.inf
    return table


def soc_stage(inst: SocInstance, i: int, j: int, p: int, q: int | None) -> float:
    """Stage time of layers i..j on chain processor p, handing over to q (None: last)."""
    t = float(inst.loaded_time[i:j + 1, p].sum())
    if q is not None:
        t += inst.handover_s(j, p, q)
    return t


def soc_tables(inst: SocInstance) -> tuple[np.ndarray, np.ndarray]:
    """``(prefix, handover)``: ``prefix[k, p]`` = Σ_{l<k} loaded time of layer l on p, and
    ``handover[j, p, q]`` = handover time after layer j from chain processor p to q (s)."""
    pre = np.zeros((inst.n_items + 1, inst.n_procs))
    pre[1:] = np.cumsum(inst.loaded_time, axis=0)
    return pre, inst.handover_table


def combine(objective: str, stages: Sequence[float]) -> float:
    """The objective from stage times: Σ (cost), max (period), R·max (latency)."""
    if objective == "cost":
        return float(sum(stages))
    if objective == "period":
        return float(max(stages))
    return float(len(stages) * max(stages))


# ---------------------------------------------------------------------------------------
# The evaluator


def evaluate(inst: Instance, sol: Solution) -> tuple[float, dict[str, Any]]:
    """Objective and metrics of ``sol`` from the shared cost model (the only place
    objective values are computed)."""
    if isinstance(inst, ChipletInstance):
        return _evaluate_chiplet(inst, sol)
    if isinstance(inst, SocInstance):
        return _evaluate_soc(inst, sol)
    raise InputError("instance", f"not a region_split instance: {type(inst).__name__}")


def _evaluate_chiplet(inst: ChipletInstance, sol: Solution) -> tuple[float, dict[str, Any]]:
    n, M = inst.n_items, inst.chiplets
    check_regions(sol.regions, n, min(n, M), inst.max_regions)
    R = len(sol.regions)
    if len(sol.counts) != R:
        raise InputError("solution.counts", f"{len(sol.counts)} counts for {R} regions")
    if any(int(m) < 1 for m in sol.counts):
        raise InputError("solution.counts", "every region needs at least one sub-chiplet")
    if sum(sol.counts) > M:
        raise InputError("solution.counts", f"use {sum(sol.counts)} sub-chiplets, the grid "
                         f"has {M}")
    placement = sol.placement or serpentine_placement(inst.hardware.rows,
                                                       inst.hardware.cols, sol.counts)
    _check_placement(placement, sol.counts, M)
    parts = [chiplet_parts(inst, a, b, m) for (a, b), m in zip(sol.regions, sol.counts,
                                                               strict=True)]
    stages = [sum(x) for x in parts]
    obj = combine(inst.objective, stages)
    traffic = _placement_traffic(inst, sol.regions, placement)
    S = inst.groups
    metrics = {
        "objective": inst.objective,
        "cost_s": combine("cost", stages),
        "period_s": combine("period", stages),
        "latency_s": combine("latency", stages),
        "throughput_fps": 1.0 / max(stages) if max(stages) > 0 else math.inf,
        "regions": R,
        "chiplets_used": int(sum(sol.counts)),
        "stage_s": stages,
        "compute_s": [x[0] for x in parts],
        "transfer_within_s": [x[1] for x in parts],
        "transfer_out_s": [x[2] for x in parts],
        "layers": [sum(len(S.layers[p]) for p in range(a, b + 1)) for a, b in sol.regions],
        **traffic,
    }
    return obj, metrics


def _check_placement(placement: Sequence[Sequence[int]], counts: Sequence[int], M: int) -> None:
    if len(placement) != len(counts):
        raise InputError("solution.placement", f"{len(placement)} entries for "
                         f"{len(counts)} regions")
    seen: set[int] = set()
    for r, (nodes, m) in enumerate(zip(placement, counts, strict=True)):
        if len(nodes) != m:
            raise InputError(f"solution.placement[{r}]", f"{len(nodes)} nodes for {m} "
                             "sub-chiplets")
        for v in nodes:
            if not 0 <= int(v) < M:
                raise InputError(f"solution.placement[{r}]", f"node {v} is off the grid")
            if int(v) in seen:
                raise InputError(f"solution.placement[{r}]", f"node {v} used twice")
            seen.add(int(v))


def _placement_traffic(inst: ChipletInstance, regions: Sequence[tuple[int, int]],
                       placement: Sequence[Sequence[int]]) -> dict[str, float]:
    """Die-to-die traffic of a placement under XY routing (metrics, not the objective).

    The flows are :func:`placement_flows` (one definition for this metric and the exact
    placement model), routed from slot to slot on the nodes ``placement`` gives them.
    """
    h = inst.hardware
    flows = placement_flows(inst, regions, [len(p) for p in placement])
    if not flows.src.size:
        return {"d2d_byte_hops": 0.0, "d2d_max_link_bytes": 0.0, "d2d_energy_j": 0.0}
    nodes = flows.slot_nodes(placement)
    sr, sc = np.divmod(nodes[flows.src], h.cols)
    dr, dc = np.divmod(nodes[flows.dst], h.cols)
    loads = xy_link_loads(h.rows, h.cols, sr, sc, dr, dc, flows.bytes)
    return {"d2d_byte_hops": loads.total, "d2d_max_link_bytes": loads.max,
            "d2d_energy_j": float(noc_energy_j(loads.total, h.noc.hop_energy_pj_per_bit))}


def _evaluate_soc(inst: SocInstance, sol: Solution) -> tuple[float, dict[str, Any]]:
    L, P = inst.n_items, inst.n_procs
    check_regions(sol.regions, L, min(L, P), inst.max_regions)
    R = len(sol.regions)
    procs = [int(p) for p in sol.processors]
    if len(procs) != R:
        raise InputError("solution.processors", f"{len(procs)} processors for {R} regions")
    if any(not 0 <= p < P for p in procs):
        raise InputError("solution.processors", f"chain positions must be in 0..{P - 1}")
    if any(b <= a for a, b in zip(procs, procs[1:], strict=False)):
        raise InputError("solution.processors", "must increase along the chain "
                         "(sub-models run NPU → GPU → CPU, each processor once)")
    stages, compute, handover = [], [], []
    for r, (a, b) in enumerate(sol.regions):
        q = procs[r + 1] if r + 1 < R else None
        s = soc_stage(inst, a, b, procs[r], q)
        c = float(inst.loaded_time[a:b + 1, procs[r]].sum())
        stages.append(s)
        compute.append(c)
        handover.append(s - c)
    if not all(math.isfinite(s) for s in stages):
        raise InputError("solution.processors", "a region holds a layer its processor "
                         "cannot run (throughput 0)")
    obj = combine(inst.objective, stages)
    metrics = {
        "objective": inst.objective,
        "cost_s": combine("cost", stages),
        "period_s": combine("period", stages),
        "latency_s": combine("latency", stages),
        "throughput_fps": 1.0 / max(stages) if max(stages) > 0 else math.inf,
        "regions": R,
        "processors": [inst.proc_name(p) for p in procs],
        "layers": [b - a + 1 for a, b in sol.regions],
        "stage_s": stages,
        "compute_s": compute,
        "handover_s": handover,
        "loads": list(inst.loads),
    }
    return obj, metrics


def describe_regions(inst: Instance, sol: Solution) -> list[dict[str, Any]]:
    """Per region: items, first and last layer names, layer count (for rendering)."""
    out = []
    names = [ly.name for ly in inst.workload.layers]
    for a, b in sol.regions:
        if isinstance(inst, ChipletInstance):
            layers = sorted(x for p in range(a, b + 1) for x in inst.groups.layers[p])
        else:
            layers = list(range(a, b + 1))
        out.append({"items": (a, b), "first": names[layers[0]], "last": names[layers[-1]],
                    "layers": len(layers)})
    return out
