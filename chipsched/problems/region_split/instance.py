"""region_split instances: a network on a chiplet grid (seed 000) or a processor chain
(seed 001)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from chipsched.cost import CostModel, control_roundtrip_s, processor_time_s, transfer_time_s
from chipsched.errors import InputError
from chipsched.graph import GroupGraph, seed000_group_graph
from chipsched.hardware import Hardware
from chipsched.objective import Objective
from chipsched.workload import Workload, check_batch

from .compute import group_times, layer_items
from .objectives import OBJECTIVES
from .trace import LoadTrace
from .transfer import COLLECTIVES, TransferModel

ITEMS = ("groups", "layers")

#: Default thresholds of seed 001 (seconds): split when the predicted frame time exceeds
#: a 500 frames/s budget. Our choice; the document gives no number.
DEFAULT_THRESHOLD_S = 2e-3


def _check_common(objective: str | Objective, batch: int, max_regions: int | None,
                  limit: int, what: str) -> Objective:
    obj = OBJECTIVES.parse(objective)
    check_batch(batch)
    if max_regions is not None:
        if not isinstance(max_regions, (int, np.integer)) or max_regions < 1:
            raise InputError("max_regions", f"must be a positive integer, got {max_regions!r}")
        if max_regions > limit:
            raise InputError("max_regions", f"{max_regions} regions asked but the chip has "
                             f"only {limit} {what}", f"ask for at most {limit} (each region "
                             f"needs its own {what.rstrip('s')})")
    return obj


@dataclass(frozen=True, eq=False)
class ChipletInstance:
    """Region splitting on a chiplet grid (seed 000). Build with :func:`chiplet_instance`.

    ``group_time[p, m − 1]`` is the compute cost D of item p on m sub-chiplets (s);
    ``edge_bytes[p, q]`` the bytes item p sends item q per frame (edges of S).
    """

    name: str
    workload: Workload
    hardware: Hardware
    objective: Objective
    batch: int
    max_regions: int | None
    items: str
    groups: GroupGraph
    transfer: TransferModel
    group_time: np.ndarray
    edge_bytes: np.ndarray

    platform = "chiplet"

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

    @cached_property
    def item_edges(self) -> np.ndarray:
        """``(E, 2)`` precedence edges (p, q) of the item DAG (S's edges, any weight)."""
        e = np.array([(p, q) for p, q, _ in self.groups.edges], dtype=np.int64)
        return e.reshape(-1, 2)

    @cached_property
    def item_order_is_total(self) -> bool:
        """True when the item order 0..n−1 is the DAG's only topological order (the
        items form a chain), i.e. contiguous runs of it are every convex partition."""
        e = {(int(p), int(q)) for p, q in self.item_edges}
        return all((k, k + 1) in e for k in range(self.n_items - 1))

    def internal_bytes(self, i: int, j: int) -> float:
        """d of seed 000 for the region of items i..j: Σ of S's edge weights inside it."""
        return float(self.edge_bytes[i:j + 1, i:j + 1].sum())

    def sent_bytes(self, i: int, j: int) -> float:
        """Bytes the region of items i..j sends to later items (edges to q > j)."""
        return float(self.edge_bytes[i:j + 1, j + 1:].sum())


@dataclass(frozen=True, eq=False)
class LayerPrefix:
    """Prefix sums of per-layer times ``(L, P)`` that stay exact when a processor cannot
    run a layer (time ``inf``): the finite times' sums ``fin`` and how many such layers
    precede ``blocked``, both ``(L+1, P)``. A plain cumulative sum would turn every later
    segment into ``inf − inf = nan``."""

    fin: np.ndarray
    blocked: np.ndarray

    @classmethod
    def of(cls, times: np.ndarray) -> LayerPrefix:
        t = np.asarray(times, dtype=float)
        ok = np.isfinite(t)
        fin = np.zeros((t.shape[0] + 1, t.shape[1]))
        fin[1:] = np.cumsum(np.where(ok, t, 0.0), axis=0)
        blocked = np.zeros(fin.shape, dtype=np.int64)
        blocked[1:] = np.cumsum(~ok, axis=0)
        return cls(fin, blocked)

    def seg(self, a: Any, b: Any, p: Any) -> Any:
        """Time of layers ``a..b`` on processor ``p`` (numpy-broadcast over arrays): the
        finite sum, or ``inf`` when one of them cannot run there."""
        a, b1 = np.asarray(a), np.asarray(b) + 1
        d = self.fin[b1, p] - self.fin[a, p]
        return np.where(self.blocked[b1, p] > self.blocked[a, p], np.inf, d)


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
    objective: Objective
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
    def nominal_prefix(self) -> LayerPrefix:
        """Prefix sums of the nominal layer times on every chain processor."""
        return LayerPrefix.of(self.layer_time)

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
        return transfer_time_s(self.hardware, self.chain[p], self.chain[q],
                               float(self.boundary_bytes[j]))

    def with_loads(self, loads: Sequence[float]) -> SocInstance:
        """The same instance evaluated under other background loads (no trace)."""
        return soc_with_loads(self, loads)


Instance = ChipletInstance | SocInstance


def chiplet_instance(workload: Workload, hardware: Hardware, *,
                     objective: str | Objective = "period",
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
    obj = _check_common(objective, batch, max_regions, M, "sub-chiplets")
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
                           obj, int(batch), max_regions, items, S, tm, gt, eb)


def _numbers(values: Any, field_: str, what: str, example: str) -> tuple[float, ...]:
    """``values`` (a number or a list of numbers) as floats, or a one-line error."""
    try:
        items = [values] if isinstance(values, (int, float)) else list(values)
        if isinstance(values, str):
            raise TypeError
        return tuple(float(x) for x in items)
    except (TypeError, ValueError):
        raise InputError(field_, f"must be {what}, got {values!r}",
                         f"e.g. -O {field_}={example}") from None


def _check_loads(loads: Sequence[float], n: int, field_: str) -> tuple[float, ...]:
    vals = _numbers(loads, field_, "a list of loads in [0, 1)", "[0.2,0,0.5]")
    if len(vals) != n:
        raise InputError(field_, f"has {len(vals)} values for a chain of {n} processors",
                         "give one load per processor of the chain")
    for v in vals:
        if not (0 <= v < 1):
            raise InputError(field_, f"load {v} outside [0, 1)",
                             "a load is the share of the processor taken by other work")
    return vals


def soc_instance(workload: Workload, hardware: Hardware, *,
                 objective: str | Objective = "period",
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
    obj = _check_common(objective, batch, max_regions, P, "processors")
    if thresholds is None:
        th = (DEFAULT_THRESHOLD_S,) * (P - 1)
    elif isinstance(thresholds, (int, float)):
        th = (float(thresholds),) * (P - 1)
    else:
        th = _numbers(thresholds, "thresholds", "a number or a list of numbers (seconds)",
                      "[0.001,0.002]")
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
    if isinstance(trace, dict):  # -O trace={times: […], loads: [[…], …]} or a file's
        trace = LoadTrace.from_dict(trace)
    if trace is not None and not isinstance(trace, LoadTrace):
        raise InputError("trace", f"must be a mapping with times and loads, got {trace!r}",
                         "e.g. -O 'trace={times: [0, 1], loads: [[0, 0], [0.5, 0]]}'")
    if trace is not None:
        if trace.processors != P:
            raise InputError("trace.loads", f"has {trace.processors} columns for a chain of "
                             f"{P} processors", "give one load per processor of the chain")
        if loads is None:
            loads = trace.final
        elif _numbers(loads, "loads", "a list of loads in [0, 1)", "[0.2,0,0.5]") \
                != trace.final:
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
    cannot = np.flatnonzero(~np.isfinite(lt).any(axis=1))
    if cannot.size:
        ly = workload.layers[int(cannot[0])]
        names = ", ".join(hardware.processors[i].name for i in idx)
        raise InputError(f"network layer {ly.name!r}", f"no processor of the chain ({names}) "
                         f"can run this {ly.kind.value} op (throughput 0 for its class)",
                         "give a processor of the chain a throughput for it, or use another "
                         "chip")
    lt.setflags(write=False)
    live.setflags(write=False)
    return SocInstance(name or f"{workload.name}@{hardware.name}", workload, hardware,
                       obj, int(batch), max_regions, tuple(idx), lt, live, ld, th,
                       buffers, trace)


def soc_with_loads(inst: SocInstance, loads: Sequence[float]) -> SocInstance:
    """``inst`` under constant background ``loads`` (its trace dropped)."""
    ld = _check_loads(loads, inst.n_procs, "loads")
    return replace(inst, loads=ld, trace=None)
