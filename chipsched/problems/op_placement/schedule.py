"""Scheduling helpers shared by every method: list scheduling, priorities, bounds."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from chipsched.errors import InputError

from .solution import Solution

if TYPE_CHECKING:
    from .instance import Instance

def bottom_levels(instance: Instance, weights: np.ndarray,
                  edge_weights: np.ndarray | None = None) -> np.ndarray:
    """Longest path from each op to an exit, counting op ``weights`` (and edge weights)."""
    bl = np.array(weights, dtype=float)
    ew = np.zeros(len(instance.edges)) if edge_weights is None else edge_weights
    for i in range(instance.n_ops - 1, -1, -1):
        best = 0.0
        for j, k in instance.succs[i]:
            best = max(best, ew[k] + bl[j])
        bl[i] = weights[i] + best
    return bl


def list_schedule(instance: Instance, proc: Sequence[int], order: Sequence[int],
                  classes: Sequence[Sequence[int]] | None = None) -> Solution:
    """Semi-active decoding: ops in ``order`` (a linear extension of the DAG), each
    appended to the core of ``proc[op]`` that frees up first (lowest core on ties), at
    the earliest time its inputs have arrived.

    With ``classes`` (groups of interchangeable processors, e.g. identical processors
    without transfer cost between them), an op may go to any core of any processor in
    its processor's class. Every exact method decodes its assignment and order with
    this, so the reported schedule is exactly the cost model's: with an order sorted by a
    feasible schedule's start times, no op starts later than in that schedule.
    """
    n = instance.n_ops
    proc = np.array(proc, dtype=np.int64)
    start = np.zeros(n)
    end = np.zeros(n)
    core = np.zeros(n, dtype=np.int64)
    free = [np.zeros(c) for c in instance.cores]
    cls_of = {p: [p] for p in range(instance.n_processors)}
    for group in classes or ():
        for p in group:
            cls_of[p] = list(group)
    done = np.zeros(n, dtype=bool)
    T = instance.transfer
    for i in order:
        i = int(i)
        best = None
        for p in cls_of[int(proc[i])]:
            c = int(np.argmin(free[p]))
            if best is None or free[p][c] < best[0]:
                best = (float(free[p][c]), p, c)
        f, p, c = best
        ready = 0.0
        for k, e in instance.preds[i]:
            if not done[k]:
                raise InputError("order", f"op {instance.ops[i]!r} comes before its input "
                                 f"{instance.ops[k]!r}", "give a topological order")
            ready = max(ready, end[k] + T[e, proc[k], p])
        s = max(ready, f)
        proc[i] = p
        start[i] = s
        end[i] = s + instance.time[i, p]
        core[i] = c
        free[p][c] = end[i]
        done[i] = True
    if not done.all():
        raise InputError("order", "does not list every op once")
    return instance.solution(proc, core, start)


def order_by_start(instance: Instance, start: Sequence[float],
                   proc: Sequence[int] | None = None) -> list[int]:
    """The linear extension that takes the ready op with the earliest start first: the
    order of a schedule, robust to solver tolerances. With ``proc`` (the ops'
    processors), starts equal to 1e-9 relative go shortest first, so that a zero-time op
    sharing its start with a longer op on its core runs first, as the schedule meant
    (ties by index otherwise: the zero-time op could slip behind the longer one)."""
    s = np.asarray(start, dtype=float)
    if proc is None:
        return priority_order(instance, -s)
    n = instance.n_ops
    dur = instance.time[np.arange(n), np.asarray(proc, dtype=np.int64)]
    scale = max(1e-300, float(np.abs(s).max(initial=0.0)))
    key = np.round(s / scale * 1e9)
    rank = np.empty(n)
    rank[np.lexsort((np.arange(n), dur, key))] = np.arange(n)
    return priority_order(instance, -rank)


def single_processor_schedule(instance: Instance, p: int) -> Solution:
    """All ops on processor ``p``, list-scheduled on its cores in decreasing bottom level
    (the longest path to an exit with ``p``'s times; ties by index). On a one-core
    processor this is the serial sum of the times, whatever the order."""
    bl = bottom_levels(instance, instance.time[:, p])
    order = priority_order(instance, bl)
    return list_schedule(instance, [p] * instance.n_ops, order)


def priority_order(instance: Instance, priority: np.ndarray) -> list[int]:
    """A linear extension that takes the ready op of highest priority first (ties: the
    lower index)."""
    n = instance.n_ops
    indeg = np.zeros(n, dtype=np.int64)
    for _, j in instance.edges:
        indeg[j] += 1
    ready = [(-priority[i], i) for i in range(n) if indeg[i] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        _, i = heapq.heappop(ready)
        out.append(i)
        for j, _ in instance.succs[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(ready, (-priority[j], j))
    return out


def lower_bound(instance: Instance) -> float:
    """max(critical path with every op at its fastest, total fastest work / all cores):
    no schedule's makespan is below it (transfers can only add time)."""
    fastest = instance.time.min(axis=1)
    cp = float(bottom_levels(instance, fastest).max())
    return max(cp, float(fastest.sum()) / instance.n_resources)


def identical_processor_groups(instance: Instance) -> list[list[int]]:
    """Processors that are interchangeable: equal time, energy, round-trip columns and
    core counts, and transfers that a swap of the two leaves unchanged. Exact models
    break the symmetry inside a group."""
    P = instance.n_processors
    T = instance.transfer
    groups: list[list[int]] = []

    def same(p: int, q: int) -> bool:
        if instance.cores[p] != instance.cores[q] or \
                instance.native_control_flow[p] != instance.native_control_flow[q]:
            return False
        for a in (instance.time, instance.energy, instance.roundtrip):
            if not np.array_equal(a[:, p], a[:, q]):
                return False
        others = [r for r in range(P) if r not in (p, q)]
        if not (np.array_equal(T[:, p, others], T[:, q, others])
                and np.array_equal(T[:, others, p], T[:, others, q])):
            return False
        return bool(np.array_equal(T[:, p, q], T[:, q, p]))

    for p in range(P):
        for g in groups:
            if same(g[0], p):
                g.append(p)
                break
        else:
            groups.append([p])
    return groups
