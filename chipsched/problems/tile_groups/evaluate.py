"""The tile_groups evaluator: a tree's totals, the S-T schedule of its leaf runs (the
jobs), per-layer records, flows and link loads (:func:`analyze`), and the metrics every
``Result`` carries (:func:`evaluate`, the decision's one evaluator)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chipsched.problems.tile_groups import geometry as geo
from chipsched.problems.tile_groups.analyzer import Analyzer, Totals, _Leaf
from chipsched.problems.tile_groups.instance import Instance, Solution, as_tree
from chipsched.problems.tile_groups.tree import LEAF, SCUT, TCUT, Node, short_text, to_text


@dataclass(frozen=True)
class Job:
    """One leaf run in the S-T graph: layer × samples on stripe ids [lo, lo+used)."""

    layer: int
    samples: tuple[int, int]  # [first, last) sample index
    lo: int
    hi: int
    used: int
    start: float
    end: float
    segment: int


@dataclass(frozen=True)
class Analysis:
    """Everything a tree resolves to (built by :func:`analyze`)."""

    tree: Node
    totals: Totals
    objective: float
    jobs: tuple[Job, ...]
    layers: tuple[dict[str, Any], ...]
    flows: tuple[dict[str, Any], ...]
    link: np.ndarray = field(repr=False)
    tile_busy: np.ndarray = field(repr=False)


def _expand(an: Analyzer, node: Node, path: tuple[int, ...], t0: float, s0: int, batch: int,
            scale: float, det: dict[str, Any], leaf_at: dict[tuple[int, ...], _Leaf],
            seg_index: int, out: list[Job]) -> None:
    """Leaf runs of one run of ``node`` starting at ``t0`` on samples [s0, s0+batch)."""
    if node.kind == LEAF:
        lf = leaf_at[path]
        d = det["durations"][path] * scale
        used = int(det["rec"][lf.layer].units_used)
        out.append(Job(lf.layer, (s0, s0 + batch), lf.lo, lf.hi, used, t0, t0 + d, seg_index))
        return
    cb = batch // node.sb
    if node.kind == TCUT:
        t = t0
        durs = [_run_time(an, c, path + (i,), det) * scale for i, c in enumerate(node.children)]
        for k in range(node.sb):
            for i, c in enumerate(node.children):
                _expand(an, c, path + (i,), t, s0 + k * cb, cb, scale, det, leaf_at, seg_index,
                        out)
                t += durs[i]
        return
    F = det["finish"][path]
    for k in range(node.sb):
        for i, c in enumerate(node.children):
            d = _run_time(an, c, path + (i,), det)
            _expand(an, c, path + (i,), t0 + (F[i, k] - d) * scale, s0 + k * cb, cb, scale, det,
                    leaf_at, seg_index, out)


def _run_time(an: Analyzer, node: Node, path: tuple[int, ...], det: dict[str, Any]) -> float:
    if node.kind == LEAF:
        return det["durations"][path]
    if node.kind == SCUT:
        return float(det["finish"][path][:, -1].max())
    return node.sb * sum(_run_time(an, c, path + (i,), det) for i, c in enumerate(node.children))


def analyze(instance: Instance, solution: Solution | Node | str) -> Analysis:
    """Resolve a tree: tile groups, sub-batches, the S-T schedule (each job stretched by
    its segment's DRAM/NoC bound), data flows, energy and the objective."""
    tree = as_tree(instance, solution)
    an = instance.analyzer
    segs, b, runs = an.segments_of(tree)
    costs, dets = [], []
    for i, s in enumerate(segs):
        c, d = an.segment_detail(s, b, (i,) if tree.kind == TCUT else ())
        costs.append(c)
        dets.append(d)
    tot = an._sum(tuple(costs), runs)
    jobs: list[Job] = []
    t = 0.0
    for r in range(runs):
        for i, (s, c, d) in enumerate(zip(segs, costs, dets, strict=True)):
            scale = c.time / c.compute if c.compute > 0 else 1.0
            leaf_at = {lf.path: lf for lf in d["leaves"]}
            _expand(an, s, (), t, r * b, b, scale, d, leaf_at, i, jobs)
            t += c.time
    names = an.names
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    for j in jobs:
        first[j.layer] = min(first.get(j.layer, math.inf), j.start)
        last[j.layer] = max(last.get(j.layer, 0.0), j.end)
    layers = []
    flows = []
    link = np.zeros(an.n_links)
    for i, d in enumerate(dets):
        link += runs * d["link"]
        for f in d["flows"]:
            flows.append({**f, "segment": i, "bytes": f["bytes"] * runs,
                          **({"byte_hops": f["byte_hops"] * runs} if "byte_hops" in f else {})})
        for lf in d["leaves"]:
            cs, uu, *_ = d["rec"][lf.layer]
            part = an.table.partition[lf.layer, lf.hi - lf.lo - 1, an.bidx[lf.batch]]
            layers.append({
                "layer": names[lf.layer], "segment": i, "tiles": [lf.lo, lf.hi],
                "group_size": lf.hi - lf.lo, "units_used": int(uu),
                "positions": [[int(an.tr[k]), int(an.tc[k])] for k in range(lf.lo, lf.hi)],
                "sub_batch": lf.batch, "runs": lf.runs * runs, "compute_s": cs,
                "partition": [int(x) for x in part], "weights_pinned": lf.runs > 1,
                "spills": bool(d["spills"][lf.layer]),
                "inputs": {("input" if p < 0 else names[p]): ("noc" if dr else "dram")
                           for p, _, dr in d["routes"][lf.layer]},
                "output_to_dram": bool(d["writes"][lf.layer]),
                "start_s": first.get(lf.layer, 0.0), "end_s": last.get(lf.layer, 0.0)})
    busy = np.zeros(an.G)
    for j in jobs:
        busy[j.lo:j.lo + j.used] += j.end - j.start
    obj = instance.objective(tot.energy.total, tot.latency)
    return Analysis(tree, tot, obj, tuple(jobs), tuple(layers), tuple(flows), link, busy)


def metrics(instance: Instance, a: Analysis) -> dict[str, Any]:
    """The JSON metrics of an analysis (the ``metrics`` of ``chipsched solve --json``)."""
    an = instance.analyzer
    hw = instance.hardware
    tot = a.totals
    w = instance.workload
    macs = w.total_macs * instance.batch
    peak = an.G * hw.unit.peak_macs_per_s
    loads = geo.unflatten(a.link, hw.rows, hw.cols)
    (fr, fc), (tr_, tc_), lb = loads.busiest() if a.link.size else ((0, 0), (0, 0), 0.0)
    segs = []
    segs_nodes, _, _ = an.segments_of(a.tree)
    for i, (s, c) in enumerate(zip(segs_nodes, tot.segments, strict=True)):
        segs.append({"index": i, "tree": short_text(s, an.names, 80), "time_s": c.time,
                     "compute_s": c.compute, "dram_s": c.dram_time, "noc_s": c.noc_time,
                     "bound": c.bound_by, "energy_j": c.energy, "dram_bytes": c.dram_bytes})
    return {
        "tree": to_text(a.tree, an.names),
        "objective_name": instance.objective.name,
        "batch": instance.batch,
        "latency_s": tot.latency,
        "energy_j": tot.energy.total,
        "energy": tot.energy.to_dict(),
        "dram_bytes": tot.dram_bytes,
        "noc_byte_hops": tot.byte_hops,
        "utilization": macs / (peak * tot.latency) if tot.latency > 0 else 0.0,
        "root_runs": tot.root_runs,
        "segments": segs,
        "layers": list(a.layers),
        "flows": list(a.flows),
        "busiest_link": {"from": [fr, fc], "to": [tr_, tc_], "bytes": lb},
        "tiles": [{"id": k, "row": int(an.tr[k]), "col": int(an.tc[k]),
                   "busy_s": float(a.tile_busy[k])} for k in range(an.G)],
    }


def evaluate(instance: Instance, solution: Solution | Node | str) -> tuple[float, dict[str, Any]]:
    """(objective, metrics) of a tree — the only place tile_groups objectives are computed."""
    a = analyze(instance, solution)
    return a.objective, metrics(instance, a)

