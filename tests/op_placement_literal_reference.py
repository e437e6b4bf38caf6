"""Seed 003 as issue 6 implemented it (commit 4e1d760), frozen: ``mode="literal"`` must
reproduce it schedule for schedule (``test_op_placement_seed003.py``). Do not edit."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import numpy as np

from chipsched.errors import InputError
from chipsched.problems.op_placement import Instance, Solution


def _relative_gain(ref: float, x: float) -> float:
    """(ref − x) / max(ref, x) ∈ [−1, 1]; 0 when both are 0."""
    if math.isinf(x):
        return -1.0
    if math.isinf(ref):
        return 1.0
    m = max(ref, x)
    return 0.0 if m <= 0 else (ref - x) / m


def earliest_start(busy: list[tuple[float, float]], ready: float, dur: float,
                   insertion: bool = True) -> float:
    """Earliest start ≥ ``ready`` of a ``dur``-long op on a core whose sorted ``busy``
    intervals are given: the first idle gap long enough (the insertion-based policy of
    Topcuoglu et al. 2002, §4.2), or after the last op when ``insertion`` is False."""
    if not insertion:
        return max(ready, busy[-1][1] if busy else 0.0)
    prev_end = 0.0
    k0 = bisect.bisect_left(busy, (ready, -math.inf))
    if k0 > 0:
        prev_end = busy[k0 - 1][1]
    for s0, e0 in busy[k0:]:
        s = max(ready, prev_end)
        if s + dur <= s0:
            return s
        prev_end = max(prev_end, e0)
    return max(ready, prev_end)


@dataclass(frozen=True)
class Seed003State:
    """What seed 003's assignment knows while it walks the ops: placements so far, when
    every core frees up, and the record ("library") of successes and failures. The
    fields are fixed; their contents (arrays, dicts) fill in as ops are placed."""

    instance: Instance
    proc: np.ndarray
    core: np.ndarray
    start: np.ndarray
    end: np.ndarray
    slots: dict[tuple[int, int], list[tuple[float, float]]]  # busy intervals per core
    insertion: bool = True
    record: dict[int, str] = field(default_factory=dict)
    costs: dict[int, tuple[float, float]] = field(default_factory=dict)  # i -> (C, C_min)

    @classmethod
    def empty(cls, instance: Instance, insertion: bool = True) -> Seed003State:
        n = instance.n_ops
        return cls(instance, -np.ones(n, dtype=np.int64), -np.ones(n, dtype=np.int64),
                   np.zeros(n), np.zeros(n), {rc: [] for rc in instance.resources}, insertion)


def transfer_cost(state: Seed003State, i: int, p: int) -> float:
    """T(i, j): transfers from i's placed producers to processor p, plus the control-flow
    round trip of i on p (seed 003, [0028])."""
    inst = state.instance
    t = float(inst.roundtrip[i, p])
    for k, e in inst.preds[i]:
        t += float(inst.transfer[e, state.proc[k], p])
    return t


def accumulated_cost(state: Seed003State, i: int, p: int, c: int) -> float:
    """A(i, j): core (p, c)'s backlog when i's inputs are ready — how long i would wait
    for the core's accumulated work — plus i's execution time on p without the round
    trip (seed 003, [0024])."""
    inst = state.instance
    ready = max((float(state.end[k]) for k, _ in inst.preds[i]), default=0.0)
    start = earliest_start(state.slots[(p, c)], ready, float(inst.time[i, p]),
                           state.insertion)
    return start - ready + float(inst.time[i, p] - inst.roundtrip[i, p])


def speed_gain(instance: Instance, i: int, p: int) -> float:
    """S(i, j): relative time gain of p over the host (seed 003, [0031])."""
    return _relative_gain(float(instance.time[i, instance.host]), float(instance.time[i, p]))


def complexity_gain(instance: Instance, i: int, p: int) -> float:
    """O(i, j): relative energy-per-op gain of p over the host — the cost model's price of
    the op's complexity on p (seed 003, [0031])."""
    return _relative_gain(float(instance.energy[i, instance.host]),
                          float(instance.energy[i, p]))


def cost_profit(state: Seed003State, i: int, p: int, c: int) -> tuple[float, float]:
    """(C, P) = (T + A, S + O) of op i on core c of processor p (seed 003, eqs. 1–2)."""
    if not state.instance.runnable[i, p]:
        return math.inf, -math.inf
    C = transfer_cost(state, i, p) + accumulated_cost(state, i, p, c)
    P = speed_gain(state.instance, i, p) + complexity_gain(state.instance, i, p)
    return C, P


def fused_profit(instance: Instance, ops: tuple[int, int], p: int) -> float:
    """P of two ops fused on p: S + O of their summed times and energies."""
    th = sum(float(instance.time[k, instance.host]) for k in ops)
    tp = sum(float(instance.time[k, p]) for k in ops)
    eh = sum(float(instance.energy[k, instance.host]) for k in ops)
    ep = sum(float(instance.energy[k, p]) for k in ops)
    return _relative_gain(th, tp) + _relative_gain(eh, ep)


def passes(C: float, P: float, C_ref: float, th1: float, th2: float) -> bool:
    """Seed 003's test ([0054]): profit ≥ th1 and cost ≤ th2 (relative to C_ref)."""
    return P >= th1 and C <= th2 * C_ref + 1e-15 * abs(C_ref)


def try_fusion(state: Seed003State, i: int, th1: float, th2: float, C_min: float
               ) -> tuple[int, int] | None:
    """Seed 003's fusion ([0054], [0055]): op i with op i−1 on i−1's core, when i−1 → i is
    an edge and the fused values pass. Returns the core or None. (The caller decides when
    to try: after i−1 passed, or when no core passed i.)"""
    prev = i - 1
    inst = state.instance
    if prev < 0 or prev not in state.costs or not any(k == prev for k, _ in inst.preds[i]):
        return None
    p, c = int(state.proc[prev]), int(state.core[prev])
    C_i, _ = cost_profit(state, i, p, c)
    C_prev, Cmin_prev = state.costs[prev]
    if passes(C_prev + C_i, fused_profit(inst, (prev, i), p), Cmin_prev + C_min, th1, th2):
        return p, c
    return None


def scan_cores(state: Seed003State, i: int, th1: float, th2: float
               ) -> tuple[tuple[int, int] | None, dict[tuple[int, int], tuple[float, float]]]:
    """Try every core in order ([0055]): the first whose (C, P) pass takes op i. Returns
    it (or None) and every core's (C, P)."""
    values = {(p, c): cost_profit(state, i, p, c) for p, c in state.instance.resources}
    C_min = min(C for C, _ in values.values())
    for rc, (C, P) in values.items():
        if math.isfinite(C) and passes(C, P, C_min, th1, th2):
            return rc, values
    return None, values


def fallback_core(values: dict[tuple[int, int], tuple[float, float]], rule: str
                  ) -> tuple[int, int]:
    """No core passed ([0056]): least cost and/or largest profit."""
    ok = {rc: v for rc, v in values.items() if math.isfinite(v[0])}
    if rule == "cost":
        return min(ok, key=lambda rc: (ok[rc][0], -ok[rc][1]))
    if rule == "profit":
        return max(ok, key=lambda rc: (ok[rc][1], -ok[rc][0]))
    if rule == "cost-profit":
        return min(ok, key=lambda rc: ok[rc][0] / (1 + ok[rc][1] / 2 + 1e-12))
    raise InputError("fallback", f"unknown rule {rule!r}", "use cost, profit or cost-profit")


def place(state: Seed003State, i: int, p: int, c: int, how: str, C: float, C_min: float
          ) -> None:
    """Put op i on core (p, c) at the earliest time its inputs have arrived and the core is
    idle long enough (in a gap when ``insertion``, else after the core's last op), and
    record the outcome (``pass``/``fused`` successes, ``fallback`` a failure)."""
    inst = state.instance
    ready = 0.0
    for k, e in inst.preds[i]:
        ready = max(ready, float(state.end[k] + inst.transfer[e, state.proc[k], p]))
    s = earliest_start(state.slots[(p, c)], ready, float(inst.time[i, p]), state.insertion)
    state.proc[i], state.core[i], state.start[i] = p, c, s
    state.end[i] = s + float(inst.time[i, p])
    bisect.insort(state.slots[(p, c)], (s, float(state.end[i])))
    state.record[i] = how
    state.costs[i] = (C, C_min)


def seed003_assign(instance: Instance, th1: float = 0.0, th2: float = 1.5,
                   fusion: bool = True, fallback: str = "cost", insertion: bool = True
                   ) -> tuple[Solution, dict]:
    """Seed 003's cost/profit threshold assignment (module docstring, steps 1–4)."""
    if not (math.isfinite(th1) and th2 >= 1.0):
        raise InputError("th2", f"must be >= 1 (relative to the cheapest core), got {th2}")
    state = Seed003State.empty(instance, insertion)
    outcome = {"pass": 0, "fused": 0, "fallback": 0}
    for i in range(instance.n_ops):
        scanned, values = scan_cores(state, i, th1, th2)
        C_min = min(C for C, _ in values.values())
        prev = state.record.get(i - 1)
        rc, how = None, ""
        if fusion and prev in ("pass", "fused"):
            rc, how = try_fusion(state, i, th1, th2, C_min), "fused"
        if rc is None and scanned is not None:
            rc, how = scanned, "pass"
        if rc is None and fusion and prev == "fallback":
            rc, how = try_fusion(state, i, th1, th2, C_min), "fused"
        if rc is None:
            rc, how = fallback_core(values, fallback), "fallback"
        place(state, i, rc[0], rc[1], how, values[rc][0], C_min)
        outcome[how] += 1
    return instance.solution(state.proc, state.core, state.start), outcome
