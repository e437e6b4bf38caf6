"""The segmented space of tile_groups: consecutive segments of the network's layer
order, each one cut, and the dynamic program over segment boundaries.

A *segment* is a root child: an LS segment ``T(sb)[ l_i … l_j ]`` (all tiles, layer
after layer; one layer: the leaf or ``T(sb)[l]``) or an S segment ``S(sb)[ … ]`` with
NPT or an explicit allocation. Latency and energy add up over segments and the
objective E^n·D^m grows with both, so a DP that keeps, for every prefix of the layer
order, the (latency, energy) Pareto front of its segmentations finds the optimum of any
set of segment options exactly (:func:`pareto_dp`); the LS/LP baselines thin the fronts,
the exact ``dp-seg`` methods keep them whole. Shared by ``heuristics`` (ls, lp) and
``formulations`` (dp-seg, the column models), so it lives in the problem layer.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from chipsched.budget import Budget
from chipsched.cost import divisors
from chipsched.errors import InputError
from chipsched.problems.tile_groups.analyzer import Infeasible
from chipsched.problems.tile_groups.instance import Instance
from chipsched.problems.tile_groups.tree import SCUT, TCUT, Node, assemble, cut, leaf

__all__ = ["DPStopped", "compositions", "is_ls", "n_segment_options", "pareto_dp",
           "segment_node", "segment_options"]


class DPStopped(Exception):
    """The DP stopped (time limit, or its fronts outgrew the memory it may use);
    ``.prefix`` layers (of ``.layers``) were done; ``.reason`` says why."""

    def __init__(self, prefix: int, layers: int, stats: dict[str, Any],
                 reason: str = "the time limit"):
        super().__init__(f"stopped after {prefix} of {layers} layers at {reason}")
        self.prefix, self.layers, self.stats, self.reason = prefix, layers, stats, reason


#: The most (latency, energy) points the exact DP holds — candidates at one prefix, and
#: (×5) kept over all prefixes — ≈ 1 GiB; past it the DP stops rather than exhaust
#: memory (PNASNet-5 Large / Inception-ResNet on cloud-12x12 grew past 15 GiB).
MAX_DP_POINTS = 3_000_000


def compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every tuple of ``parts`` positive integers summing to ``total``."""
    for cuts_ in itertools.combinations(range(1, total), parts - 1):
        bounds = (0, *cuts_, total)
        yield tuple(bounds[k + 1] - bounds[k] for k in range(parts))


def segment_options(layers: Sequence[int], batch: int, tiles: int,
                    modes: Sequence[str] = ("ls", "s")) -> Iterator[Node]:
    """Every segment node of the segmented space over ``layers``: LS T(sb) cuts and S(sb)
    cuts with every explicit allocation, sb ∈ divisors(batch)."""
    k = len(layers)
    kids = tuple(leaf(x) for x in layers)
    for sb in divisors(batch):
        if "ls" in modes:
            if k == 1:
                yield kids[0] if sb == 1 else cut(TCUT, kids, sb)
            else:
                yield cut(TCUT, kids, sb)
        if "s" in modes and 2 <= k <= tiles:
            for alloc in compositions(tiles, k):
                yield Node(SCUT, -1, kids, sb, alloc)


def n_segment_options(k: int, batch: int, tiles: int) -> int:
    """How many nodes :func:`segment_options` yields for k layers."""
    s = math.comb(tiles - 1, k - 1) if 2 <= k <= tiles else 0
    return len(divisors(batch)) * (1 + s)


def is_ls(node: Node) -> bool:
    """An LS segment (a leaf or a T cut of leaves on all tiles)."""
    return node.kind != SCUT


def segment_node(layers: Sequence[int], sb: int, mode: str) -> Node:
    """The segment of consecutive ``layers`` with ``sb`` sub-batches: LS = a T cut (all
    tiles, layer after layer), LP = an S cut (NPT allocation); one layer = the leaf or
    ``T(sb)[leaf]``."""
    kids = [leaf(i) for i in layers]
    if len(kids) == 1:
        return kids[0] if sb == 1 else cut(TCUT, kids, sb)
    return cut(TCUT if mode == "ls" else SCUT, kids, sb)


def pareto_points(points: list[tuple[float, float, Any]]) -> list[tuple[float, float, Any]]:
    """The (latency, energy)-Pareto-optimal points, by latency (ties: least energy)."""
    points.sort(key=lambda t: (t[0], t[1]))
    kept: list[tuple[float, float, Any]] = []
    for pt in points:
        if not kept or pt[1] < kept[-1][1]:
            kept.append(pt)
    return kept


def thin_front(points: list[tuple[float, float, Any]], n: int
               ) -> list[tuple[float, float, Any]]:
    """At most ``n`` of a front's points (sorted by latency), evenly over their order,
    both extremes kept."""
    if len(points) <= n:
        return points
    idx = sorted({round(x * (len(points) - 1) / (n - 1)) for x in range(n)})
    return [points[x] for x in idx]


def pareto_dp(instance: Instance, options_of: Callable[[int, int], Sequence[Node]],
              max_segment: int | None, max_front: int | None = 64,
              monotone: Callable[[Node], bool] | None = None, budget: Budget | None = None,
              max_points: int = MAX_DP_POINTS) -> tuple[Node, float, dict[str, Any]]:
    """Best segmentation of the network's layer order into consecutive segments, each
    one of ``options_of(i, j)`` (layers i..j-1, at most ``max_segment`` of them; None:
    any), under the instance objective.

    Latency and energy add up over segments and E^n·D^m grows with both, so keeping,
    for every prefix, the (latency, energy) Pareto front of partial segmentations is
    exact. ``max_front`` thins the fronts to that many points (evenly over latency,
    extremes kept; ``stats['fronts_thinned']`` counts it); ``None`` keeps them whole.
    ``monotone(node)`` marks options whose infeasibility carries over to longer
    segments (LS segments: a longer T cut never frees a tile's buffer, see
    :func:`is_ls`): once every marked option of a segment ending at j fails, longer
    segments ending at j get none; the scan stops when no option is left. With
    more than ``max_points`` candidate points at one prefix (5 × that over all kept
    fronts) it raises :class:`DPStopped`; once ``budget`` is over,
    :class:`~chipsched.budget.BudgetExhausted`."""
    an = instance.analyzer
    obj = instance.objective
    L = len(instance.workload)
    B = instance.batch
    M = L if max_segment is None else max(1, int(max_segment))
    # front[j]: (latency, energy, (i, k, node)) — k indexes front[i]
    front: list[list[tuple[float, float, Any]]] = [[] for _ in range(L + 1)]
    front[0] = [(0.0, 0.0, (-1, -1, None))]
    evals = thinned = largest = held = 0
    scalar = obj.coefficient("energy_j") == 0 or obj.coefficient("delay_s") == 0
    t0 = time.perf_counter()
    for j in range(1, L + 1):
        cands: list[tuple[float, float, Any]] = []
        dead = False  # every monotone option failed at a shorter segment ending at j
        for i in range(j - 1, max(0, j - M) - 1, -1):
            if budget is not None:
                budget.checkpoint(f"running the segment DP (layer {j} of {L})")
            nodes = list(options_of(i, j))
            if monotone is not None:
                marked = [monotone(n) for n in nodes]
                if dead:
                    nodes = [n for n, m in zip(nodes, marked, strict=True) if not m]
                    marked = [False] * len(nodes)
                if not nodes:
                    break  # no option here, none for longer segments
            if not front[i]:
                continue
            seg: list[tuple[float, float, Any]] = []
            marked_ok = False
            for x, node in enumerate(nodes):
                if budget is not None:  # one (i, j) can hold thousands of allocations
                    budget.tick(f"running the segment DP (layer {j} of {L})", 32)
                evals += 1
                try:
                    c = an.segment(node, B, (0,), cache=False)  # each option once
                except Infeasible:
                    continue
                seg.append((c.time, c.energy, node))
                if monotone is not None and marked[x]:
                    marked_ok = True
            if monotone is not None and any(marked) and not marked_ok and j - i > 1:
                dead = True
            if not seg:
                continue
            # a dominated option of one segment never ends a Pareto-optimal prefix
            for ts, es, node in pareto_points(seg):
                for k, (d, e, _) in enumerate(front[i]):
                    cands.append((d + ts, e + es, (i, k, node)))
            if len(cands) > max_points:  # before the list itself exhausts memory
                break
        if len(cands) > max_points or held > 5 * max_points:
            raise DPStopped(j - 1, L, {"segment_evaluations": evals, "largest_front": largest,
                                       "dp_s": time.perf_counter() - t0},
                            f"{max(len(cands), held):,} Pareto points, more than the "
                            f"{max_points:,} it holds (memory)")
        kept = pareto_points(cands)
        if scalar and kept:
            kept = [min(kept, key=lambda t: obj(t[1], t[0]))]
        elif max_front is not None and len(kept) > max_front:
            thinned += 1
            kept = thin_front(kept, max_front)
        largest = max(largest, len(kept))
        held += len(kept)
        front[j] = kept
    if not front[L]:
        raise InputError(f"network {instance.workload.name!r}", "no segmentation fits the "
                         "buffers", "raise max_segment or use a larger chip")
    best = min(range(len(front[L])), key=lambda k: obj(front[L][k][1], front[L][k][0]))
    segs: list[Node] = []
    j, k = L, best
    while j > 0:
        i, kk, node = front[j][k][2]
        segs.append(node)
        j, k = i, kk
    tree = assemble(segs[::-1])
    d, e = front[L][best][0], front[L][best][1]  # the DP's own sums over its segments
    return tree, obj(e, d), {"segment_evaluations": evals, "segments": len(segs),
                             "final_front": len(front[L]), "largest_front": largest,
                             "fronts_thinned": thinned, "dp_s": time.perf_counter() - t0}
