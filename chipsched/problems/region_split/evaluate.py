"""Stage times, the vectorized tables of the exact models, and the evaluator."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsched.cost import noc_energy_j, xy_link_loads
from chipsched.errors import InputError

from .instance import ChipletInstance, Instance, LayerPrefix, SocInstance
from .objectives import combine
from .placement import placement_flows
from .solution import (
    ChipletSolution,
    SocSolution,
    Solution,
    check_order,
    check_regions,
    serpentine_placement,
)


def chiplet_parts(inst: ChipletInstance, i: int, j: int, m: int) -> tuple[float, float, float]:
    """(D, C, T) of the region of items i..j on m sub-chiplets, in seconds."""
    D = float(inst.group_time[i:j + 1, m - 1].sum())
    C = float(inst.transfer.within(m, inst.internal_bytes(i, j)))
    T = float(inst.transfer.between(inst.sent_bytes(i, j)))
    return D, C, T


def chiplet_set_parts(inst: ChipletInstance, items: Sequence[int], m: int
                      ) -> tuple[float, float, float]:
    """(D, C, T) of a region given as a convex set of items on m sub-chiplets (s): C
    moves the bytes of the edges inside the set, T those leaving it (convexity puts
    every consumer outside the set in a later stage)."""
    x = np.asarray(items, dtype=np.int64)
    D = float(inst.group_time[x, m - 1].sum())
    inside = float(inst.edge_bytes[np.ix_(x, x)].sum())
    sent = float(inst.edge_bytes[x].sum()) - inside
    C = float(inst.transfer.within(m, inside))
    T = float(inst.transfer.between(sent))
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


def soc_tables(inst: SocInstance) -> tuple[LayerPrefix, np.ndarray]:
    """``(prefix, handover)``: ``prefix.seg(a, b, p)`` = loaded time of layers a..b on
    chain processor p (``inf`` if p cannot run one), and ``handover[j, p, q]`` = handover
    time after layer j from chain processor p to q (s)."""
    return LayerPrefix.of(inst.loaded_time), inst.handover_table


# ---------------------------------------------------------------------------------------
# The evaluator


def evaluate(inst: Instance, sol: Solution) -> tuple[float, dict[str, Any]]:
    """Objective and metrics of ``sol`` from the shared cost model (the only place
    objective values are computed)."""
    if isinstance(inst, ChipletInstance):
        if not isinstance(sol, ChipletSolution):
            raise InputError("solution", f"a {type(sol).__name__} on a chiplet grid",
                             "give regions with counts (a ChipletSolution)")
        return _evaluate_chiplet(inst, sol)
    if isinstance(inst, SocInstance):
        if not isinstance(sol, SocSolution):
            raise InputError("solution", f"a {type(sol).__name__} on a processor chain",
                             "give regions with processors (a SocSolution)")
        return _evaluate_soc(inst, sol)
    raise InputError("instance", f"not a region_split instance: {type(inst).__name__}")


def _evaluate_chiplet(inst: ChipletInstance, sol: ChipletSolution
                      ) -> tuple[float, dict[str, Any]]:
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
    if sol.order:
        check_order(inst, sol.order)
        parts = [chiplet_set_parts(inst, x, m) for x, m in zip(sol.items(n), sol.counts,
                                                               strict=True)]
    else:
        parts = [chiplet_parts(inst, a, b, m) for (a, b), m in zip(sol.regions, sol.counts,
                                                                   strict=True)]
    stages = [sum(x) for x in parts]
    obj = combine(inst.objective, stages)
    traffic = _placement_traffic(inst, sol.regions, placement, sol.order)
    S = inst.groups
    metrics = {
        "objective": inst.objective.name,
        "cost_s": combine("cost", stages),
        "period_s": combine("period", stages),
        "latency_s": combine("latency", stages),
        "sync_latency_s": combine("sync_latency", stages),
        "throughput_fps": 1.0 / max(stages) if max(stages) > 0 else math.inf,
        "regions": R,
        "chiplets_used": int(sum(sol.counts)),
        "stage_s": stages,
        "compute_s": [x[0] for x in parts],
        "transfer_within_s": [x[1] for x in parts],
        "transfer_out_s": [x[2] for x in parts],
        "layers": [sum(len(S.layers[p]) for p in x) for x in sol.items(n)],
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
                       placement: Sequence[Sequence[int]], order: Sequence[int] = ()
                       ) -> dict[str, float]:
    """Die-to-die traffic of a placement under XY routing (metrics, not the objective).

    The flows are :func:`placement_flows` (one definition for this metric and the exact
    placement model), routed from slot to slot on the nodes ``placement`` gives them.
    """
    h = inst.hardware
    flows = placement_flows(inst, regions, [len(p) for p in placement], order)
    if not flows.src.size:
        return {"d2d_byte_hops": 0.0, "d2d_max_link_bytes": 0.0, "d2d_energy_j": 0.0}
    nodes = flows.slot_nodes(placement)
    sr, sc = np.divmod(nodes[flows.src], h.cols)
    dr, dc = np.divmod(nodes[flows.dst], h.cols)
    loads = xy_link_loads(h.rows, h.cols, sr, sc, dr, dc, flows.bytes)
    return {"d2d_byte_hops": loads.total, "d2d_max_link_bytes": loads.max,
            "d2d_energy_j": float(noc_energy_j(loads.total, h.noc.hop_energy_pj_per_bit))}


def _evaluate_soc(inst: SocInstance, sol: SocSolution) -> tuple[float, dict[str, Any]]:
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
        "objective": inst.objective.name,
        "cost_s": combine("cost", stages),
        "period_s": combine("period", stages),
        "latency_s": combine("latency", stages),
        "sync_latency_s": combine("sync_latency", stages),
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
    order = getattr(sol, "order", ()) or tuple(range(inst.n_items))
    for a, b in sol.regions:
        if isinstance(inst, ChipletInstance):
            layers = sorted(x for p in order[a:b + 1] for x in inst.groups.layers[p])
        else:
            layers = list(range(a, b + 1))
        out.append({"items": (a, b), "first": names[layers[0]], "last": names[layers[-1]],
                    "layers": len(layers)})
    return out
