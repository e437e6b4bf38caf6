"""Op-placement heuristics: seed 003's cost/profit assignment (two modes), its by-class
variants, HEFT, and the best single processor.

Seed 003 (``docs/sources.md``; the patent's [0024]–[0034], [0047], [0050],
[0052]–[0056]) — the document defines its terms in words only; both modes below are
our concrete readings. ``docs/op_placement.md`` has the same text with measurements.

Both modes walk the ops one at a time; for op i and every candidate core j (processor
p) they compute a cost ``C(i, j) = T(i, j) + A(i, j)`` (eq. 1) and a profit ``P(i, j) =
S(i, j) + O(i, j)`` (eq. 2), test ``P ≥ th1`` and ``C ≤ th2 · C_min(i)`` ([0033],
[0054]; C_min = the least C over all cores, so th2 is relative and one number works at
any time scale), try fusion with the previous op ([0054], [0055]), and fall back to
the least cost and/or largest profit when no core passes ([0056]). The schedule (the
document gives none): an op goes to the first idle gap of its core that is long enough
and starts after its inputs have arrived (``insertion=True``), or after the core's
last op (``insertion=False``).

``mode="literal"`` — the reading of issue 6, kept for papers that cite it
--------------------------------------------------------------------------
=========  ======================================================================================
order      the instance's program order (``L.param`` right before ``L``)
T(i, j)    Σ over i's producers k of the transfer time k → i from k's processor to p, plus the
           control-flow round trip when i is a control-flow op and p has none ([0028])
A(i, j)    the wait from ``ready_i`` (the latest end of i's producers, before any transfer)
           to the start of j's first idle slot long enough for i, plus i's time without the
           round trip ([0024])
S, O       relative gains ``(x_h − x_j) / max(x_h, x_j)`` of time (S) and energy (O) against
           the host h (the first processor with native control flow), whatever the objective
thresholds th1 = 0, th2 = 1.5; the **first** core in chip order that passes takes i
fusion     tried **before** the core scan: if i−1 passed and i−1 → i is an edge, i goes to
           i−1's core when the pair's summed C ≤ th2 · (C_min(i−1) + C_min(i)) and the
           pair's P ≥ th1; if no core passes and i−1 failed, fusion is tried again
fallback   least cost (ties: larger profit), or ``fallback="profit"`` / ``"cost-profit"``
=========  ======================================================================================

``mode="refined"`` (default) — the same algorithm without our own handicaps
---------------------------------------------------------------------------
=========  ======================================================================================
order      ``order="compiler"``: the order a compiler emits the ops in — every scalar op
           (shape inference, loop control, kernel parameters) as soon as its inputs are known
           ([0028]: parameters are computed on the host *before* the launch and passed as
           kernel arguments; [0047]: the optimizer pipelines host and device work), tensor ops
           in program order. The previous op of a tensor op is then its data producer rather
           than its own ``L.param``. ``order="program"`` keeps the instance's order.
T(i, j)    data movement of running i on p: the delay of the **latest** input arrival
           (``arrival_i(p) − ready_i``), the control-flow round trip ([0028]), and — with
           ``lookahead`` — the delay p's output transfers add to the rest of the graph's
           critical path: ``OCT(i, p) − min_q OCT(i, q)`` with the optimistic cost table
           ``OCT(i, p) = max_{i→s} min_q (transfer(p→q) + t(s, q) + OCT(s, q))`` (PEFT's,
           Arabnejad & Barbosa, IEEE TPDS 25(3) 2014, with the edge's own transfer time)
A(i, j)    the wait for j's accumulated work **from the input arrival** on p, plus i's time
           without the round trip ([0024]); so T + A = finish time − ready_i + output delay
C          weighted by the instance's objective ``WT·makespan + WE·energy``: ``C = WT·(T + A)
           + WE·energy(i, p)`` (makespan: the time cost; energy: the op's energy)
S, O       relative gains against the **mean** over the processors that can run i (the host
           is no longer a zero point, so th1 = 0 means "at least as good as the average
           processor"), weighted by the objective: ``P = α·S + (1 − α)·O``, ``α = WT·t̄ /
           (WT·t̄ + WE·ē)`` (makespan: P = S; energy: P = O)
thresholds th1 = 0, th2 = 1.0; the passing core of **least cost** takes i (ties: larger
           profit, then chip order)
fusion     part of the scan, never a bypass: if i−1 passed and i−1 → i is an edge, i−1's core
           is judged with the fused pair's profit (S and O of the summed times and energies)
           and i's own cost there — which already has no intermediate transfer, the one
           thing fusion saves in the shared cost model (it charges every op its own launch,
           so a saved launch would be a saving no evaluator scores)
fallback   as in literal mode
=========  ======================================================================================

The simple variants ([0050]): :func:`by_class` (scalar ops → the host CPU, tensor and
vector ops → the accelerator) and :func:`by_complexity` (control-flow scalar ops → the
host, everything else → the accelerator).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chipsched.budget import Budget
from chipsched.errors import InputError
from chipsched.method import MethodOutput, method, param
from chipsched.problems.op_placement import (
    Instance,
    Solution,
    bottom_levels,
    list_schedule,
    makespan_energy,
    priority_order,
)
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions

DECISION = "op_placement"


def _relative_gain(ref: float, x: float) -> float:
    """(ref − x) / max(ref, x) ∈ [−1, 1]; 0 when both are 0."""
    if math.isinf(x):
        return -1.0
    if math.isinf(ref):
        return 1.0
    m = max(ref, x)
    return 0.0 if m <= 0 else (ref - x) / m


def _output(instance: Instance, sol: Solution, **stats: Any) -> MethodOutput:
    """The heuristic's schedule with its objective from the schedule's own end times and
    energies (the face re-checks it, feasibility included, with the evaluator)."""
    return MethodOutput(Status.FEASIBLE, sol, objective=instance.objective(
        *makespan_energy(instance, sol)), stats=stats)


class Timeline:
    """The busy intervals of one core, sorted by (start, end). A gap search scans the
    first intervals in Python and the rest as a vectorized numpy scan (a Python loop
    over every interval made CPOP quadratic: 17 s at 20 K ops), so the intervals are
    kept twice: Python lists and numpy arrays with room to grow."""

    __slots__ = ("S", "E", "_s", "_e")

    #: intervals scanned in Python before the numpy scan takes over
    SCAN = 12

    def __init__(self, intervals: Sequence[tuple[float, float]] = ()) -> None:
        self.S: list[float] = []
        self.E: list[float] = []
        self._s, self._e = np.empty(16), np.empty(16)
        for a, b in sorted(intervals):
            self.add(a, b)

    def earliest_start(self, ready: float, dur: float, insertion: bool = True) -> float:
        """Earliest start ≥ ``ready`` of a ``dur``-long op: the first idle gap long enough
        (the insertion-based policy of Topcuoglu et al. 2002, §4.2), or after the last op
        when ``insertion`` is False."""
        S, E = self.S, self.E
        n = len(S)
        if not insertion:
            return max(ready, E[-1] if n else 0.0)
        k0 = bisect.bisect_left(S, ready)  # the first interval from ready on
        prev_end = E[k0 - 1] if k0 > 0 else 0.0
        stop = min(n, k0 + self.SCAN)
        for k in range(k0, stop):
            s = max(ready, prev_end)
            if s + dur <= S[k]:
                return s
            prev_end = max(prev_end, E[k])
        if stop == n:
            return max(ready, prev_end)
        # the rest at once: the gap before interval k starts where those before it end
        pe = np.maximum(np.maximum.accumulate(self._e[stop - 1:n - 1]), prev_end)
        ok = np.flatnonzero(np.maximum(ready, pe) + dur <= self._s[stop:n])
        if ok.size:
            return float(max(ready, pe[ok[0]]))
        return max(ready, prev_end, float(self._e[stop:n].max()))

    def add(self, start: float, end: float) -> None:
        """Insert the interval [start, end] in (start, end) order."""
        S, E = self.S, self.E
        n = len(S)
        lo, hi = bisect.bisect_left(S, start), bisect.bisect_right(S, start)
        k = bisect.bisect_right(E, end, lo, hi)
        S.insert(k, start)
        E.insert(k, end)
        if n == self._s.shape[0]:
            self._s = np.concatenate([self._s, np.empty(n)])
            self._e = np.concatenate([self._e, np.empty(n)])
        self._s[k + 1:n + 1] = self._s[k:n]
        self._e[k + 1:n + 1] = self._e[k:n]
        self._s[k], self._e[k] = start, end


def earliest_start(busy: Timeline | Sequence[tuple[float, float]], ready: float, dur: float,
                   insertion: bool = True) -> float:
    """:meth:`Timeline.earliest_start` of ``busy`` (a :class:`Timeline`, or sorted
    (start, end) pairs)."""
    tl = busy if isinstance(busy, Timeline) else Timeline(busy)
    return tl.earliest_start(ready, dur, insertion)


# ---------------------------------------------------------------------------------------
# Seed 003


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
    slots: dict[tuple[int, int], Timeline]  # busy intervals per core
    insertion: bool = True
    record: dict[int, str] = field(default_factory=dict)
    costs: dict[int, tuple[float, float]] = field(default_factory=dict)  # i -> (C, C_min)

    @classmethod
    def empty(cls, instance: Instance, insertion: bool = True) -> Seed003State:
        n = instance.n_ops
        return cls(instance, -np.ones(n, dtype=np.int64), -np.ones(n, dtype=np.int64),
                   np.zeros(n), np.zeros(n), {rc: Timeline() for rc in instance.resources},
                   insertion)


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
    state.slots[(p, c)].add(s, float(state.end[i]))
    state.record[i] = how
    state.costs[i] = (C, C_min)


def seed003_assign(instance: Instance, th1: float = 0.0, th2: float = 1.5,
                   fusion: bool = True, fallback: str = "cost", insertion: bool = True,
                   budget: Budget | None = None) -> tuple[Solution, dict]:
    """Seed 003's cost/profit threshold assignment (module docstring, steps 1–4);
    ``budget`` is polled as the ops are placed (a partial schedule is no answer:
    :class:`~chipsched.budget.BudgetExhausted` once it is over)."""
    if not (math.isfinite(th1) and th2 >= 1.0):
        raise InputError("th2", f"must be >= 1 (relative to the cheapest core), got {th2}")
    state = Seed003State.empty(instance, insertion)
    outcome = {"pass": 0, "fused": 0, "fallback": 0}
    for i in range(instance.n_ops):
        if budget is not None:
            budget.tick("placing the ops (seed 003)", 64)
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


# ---------------------------------------------------------------------------------------
# Seed 003, refined mode (module docstring): the same loop, our handicaps removed


#: th2 of each mode when none is given: literal keeps issue 6's 1.5; refined takes the
#: least-cost core, whose measured makespans are the best of the sweep in
#: docs/op_placement.md (th2 > 1 lets the profit test pull ops off it, and costs 1–6 %)
TH2_DEFAULT = {"literal": 1.5, "refined": 1.0}


def emission_order(instance: Instance, order: str = "compiler") -> list[int]:
    """The order seed 003 walks the ops in. ``"program"``: the instance's (topological)
    index order. ``"compiler"``: every scalar op as soon as its inputs are known — the
    host computes shapes, loop bounds and kernel parameters ahead of the kernels that
    need them ([0028], [0047]) — and the other ops in index order (a linear extension;
    on a graph without scalar ops it is the index order)."""
    if order == "program":
        return list(range(instance.n_ops))
    if order != "compiler":
        raise InputError("order", f"unknown order {order!r}", "use compiler or program")
    scalar = np.array([c == "scalar" for c in instance.op_class], dtype=float)
    return priority_order(instance, scalar)


def optimistic_cost_table(instance: Instance) -> np.ndarray:
    """``OCT[i, p]``: the least time from i's end to the end of the graph when i runs on
    p, every later op on its best processor, transfers paid, cores never busy (PEFT's
    table, Arabnejad & Barbosa 2014, with each edge's own transfer times). Its spread
    over p is what i's output transfers add to the critical path."""
    n, P = instance.n_ops, instance.n_processors
    t = np.where(instance.runnable, instance.time, math.inf)
    oct_ = np.zeros((n, P))
    for i in range(n - 1, -1, -1):
        for j, e in instance.succs[i]:
            # rows: i's processor p; columns: j's processor q
            via = instance.transfer[e] + (t[j] + oct_[j])[None, :]
            oct_[i] = np.maximum(oct_[i], via.min(axis=1))
    return oct_


def objective_weights(instance: Instance) -> tuple[float, float]:
    """(WT, WE): the weights of makespan and energy in the instance's objective."""
    obj = instance.objective
    return obj.coefficient("makespan"), obj.coefficient("energy_j")


@dataclass(frozen=True)
class RefinedTables:
    """What refined mode derives from the instance once: the objective's weights, each
    op's mean time and energy over the processors that can run it (the profit's
    reference) and the output-transfer delay ``OCT[i, p] − min_q OCT[i, q]``."""

    weights: tuple[float, float]
    mean_time: np.ndarray
    mean_energy: np.ndarray
    out_delay: np.ndarray

    @classmethod
    def of(cls, instance: Instance, lookahead: bool = True) -> RefinedTables:
        ok = instance.runnable
        k = ok.sum(axis=1)
        tbar = np.where(ok, instance.time, 0.0).sum(axis=1) / k
        ebar = np.where(ok, instance.energy, 0.0).sum(axis=1) / k
        out = np.zeros((instance.n_ops, instance.n_processors))
        if lookahead:
            oct_ = optimistic_cost_table(instance)
            best = np.where(ok, oct_, math.inf).min(axis=1, keepdims=True)
            out = np.where(ok, oct_ - best, 0.0)
        return cls(objective_weights(instance), tbar, ebar, out)

    def profit(self, t_ref: float, e_ref: float, t: float, e: float) -> float:
        """``P = α·S + (1 − α)·O``: S, O the relative time and energy gains against the
        reference, α the makespan's share of the objective at the reference ([0031])."""
        wt, we = self.weights
        scale = wt * t_ref + we * e_ref
        alpha = 1.0 if scale <= 0 else wt * t_ref / scale
        s = _relative_gain(t_ref, t) if alpha > 0 else 0.0
        o = _relative_gain(e_ref, e) if alpha < 1 else 0.0
        return alpha * s + (1.0 - alpha) * o


def arrival(state: Seed003State, i: int, p: int) -> float:
    """When i's last input arrives on processor p (its producers' ends plus transfers)."""
    inst = state.instance
    a = 0.0
    for k, e in inst.preds[i]:
        a = max(a, float(state.end[k] + inst.transfer[e, state.proc[k], p]))
    return a


def refined_cost_profit(state: Seed003State, tables: RefinedTables, i: int, p: int, c: int
                        ) -> tuple[float, float, float]:
    """(C, P, T + A) of op i on core c of processor p in refined mode (module
    docstring): C = WT·(T + A) + WE·energy, P = α·S + (1 − α)·O against the mean."""
    inst = state.instance
    if not inst.runnable[i, p]:
        return math.inf, -math.inf, math.inf
    ready = max((float(state.end[k]) for k, _ in inst.preds[i]), default=0.0)
    arrive = arrival(state, i, p)
    t = float(inst.time[i, p])
    rt = float(inst.roundtrip[i, p])
    T = arrive - ready + rt + float(tables.out_delay[i, p])
    A = earliest_start(state.slots[(p, c)], arrive, t, state.insertion) - arrive + t - rt
    wt, we = tables.weights
    e = float(inst.energy[i, p])
    C = wt * (T + A) + we * e
    P = tables.profit(float(tables.mean_time[i]), float(tables.mean_energy[i]), t, e)
    return C, P, T + A


def seed003_refined(instance: Instance, th1: float = 0.0, th2: float = 1.0,
                    fusion: bool = True, fallback: str = "cost", insertion: bool = True,
                    order: str = "compiler", lookahead: bool = True,
                    budget: Budget | None = None
                    ) -> tuple[Solution, dict[str, Any], tuple[float, float]]:
    """Seed 003 in refined mode (module docstring): returns the schedule, the outcome
    counts and the (makespan, energy) of its own tally; ``budget`` as for
    :func:`seed003_assign`."""
    if not (math.isfinite(th1) and th2 >= 1.0):
        raise InputError("th2", f"must be >= 1 (relative to the cheapest core), got {th2}")
    tables = RefinedTables.of(instance, lookahead)
    state = Seed003State.empty(instance, insertion)
    outcome = {"pass": 0, "fused": 0, "fallback": 0}
    energy = 0.0
    prev = -1
    for i in emission_order(instance, order):
        if budget is not None:
            budget.tick("placing the ops (seed 003)", 64)
        values = {rc: refined_cost_profit(state, tables, i, *rc) for rc in instance.resources}
        partner = None
        if fusion and state.record.get(prev) in ("pass", "fused") and \
                any(k == prev for k, _ in instance.preds[i]):
            partner = (int(state.proc[prev]), int(state.core[prev]))
            C, _, ta = values[partner]
            if math.isfinite(C):
                ops = (prev, i)
                p = partner[0]
                fused = tables.profit(
                    float(sum(tables.mean_time[k] for k in ops)),
                    float(sum(tables.mean_energy[k] for k in ops)),
                    float(sum(instance.time[k, p] for k in ops)),
                    float(sum(instance.energy[k, p] for k in ops)))
                values[partner] = (C, fused, ta)
        finite = {rc: v for rc, v in values.items() if math.isfinite(v[0])}
        C_min = min(v[0] for v in finite.values())
        ok = [rc for rc, (C, P, _) in finite.items() if passes(C, P, C_min, th1, th2)]
        if ok:
            # least cost, then larger profit, then less time, then chip order
            rc = min(ok, key=lambda rc: (finite[rc][0], -finite[rc][1], finite[rc][2]))
            how = "fused" if rc == partner else "pass"
        else:
            rc = fallback_core({k: v[:2] for k, v in finite.items()}, fallback)
            how = "fallback"
        place(state, i, rc[0], rc[1], how, finite[rc][0], C_min)
        energy += float(instance.energy[i, rc[0]])
        outcome[how] += 1
        prev = i
    makespan = float(state.end.max())
    return instance.solution(state.proc, state.core, state.start), outcome, (makespan, energy)


@dataclass(frozen=True)
class Seed003Params:
    mode: str = param("refined", "refined: least-cost passing core, profit against the "
                      "mean, objective-weighted C and P, look-ahead T, compiler order; "
                      "literal: issue 6's reading (first fit, profit against the host)",
                      choices=("refined", "literal"))
    th1: float = param(0.0, "profit threshold: a core passes when its profit P ≥ th1",
                       ge=-2, le=2)
    th2: float | None = param(None, "cost threshold relative to the cheapest core: a core "
                              "passes when C ≤ th2 · C_min", ge=1,
                              none="1.0 in refined mode, 1.5 in literal mode")
    fusion: bool = param(True, "judge an op fused with its predecessor on the "
                         "predecessor's core ([0054])")
    fallback: str = param("cost", "the core taken when none passes: least cost, largest "
                          "profit, or least C/(1 + P/2)",
                          choices=("cost", "profit", "cost-profit"))
    insertion: bool = param(True, "schedule into the first idle gap that fits (else after "
                            "the core's last op)")
    order: str | None = param(None, "the order the ops are walked in: scalar ops as soon "
                              "as their inputs are known (compiler), or the instance's "
                              "(program)", choices=("compiler", "program"),
                              none="compiler in refined mode, program in literal mode")
    lookahead: bool | None = param(None, "T counts the delay an op's output transfers add "
                                   "to the critical path (optimistic cost table)",
                                   none="on in refined mode; literal mode has none")


@method(DECISION, "seed003", "heuristic",
        "seed 003: cost C=T+A / profit P=S+O thresholds with fusion; refined (least-cost "
        "passing core, objective-weighted) or literal", source="seed 003 (CN patent, NN "
        "compilation)", params=Seed003Params)
def seed003(instance: Instance, options: SolveOptions, params: Seed003Params
            ) -> MethodOutput:
    th2 = TH2_DEFAULT[params.mode] if params.th2 is None else params.th2
    if params.mode == "literal":
        if params.order not in (None, "program") or params.lookahead:
            what = "order" if params.order not in (None, "program") else "lookahead"
            raise InputError(f"parameter {what} of op_placement/seed003",
                             "applies to mode=refined only",
                             "literal mode walks the program order without look-ahead")
        sol, outcome = seed003_assign(instance, params.th1, th2, params.fusion,
                                      params.fallback, params.insertion, options.budget)
        return _output(instance, sol, mode="literal", **outcome)
    sol, outcome, (span, energy) = seed003_refined(
        instance, params.th1, th2, params.fusion, params.fallback, params.insertion,
        params.order or "compiler", True if params.lookahead is None else params.lookahead,
        options.budget)
    # the objective of the heuristic's own tally (its end times and energies)
    return MethodOutput(Status.FEASIBLE, sol, objective=instance.objective(span, energy),
                        stats={"mode": "refined", **outcome})


# ---------------------------------------------------------------------------------------
# Seed 003's simple variants


def accelerator(instance: Instance) -> int:
    """The accelerator: the processor with the least total time over the non-scalar ops
    (the NPU on the SoC presets)."""
    m = np.array([c != "scalar" for c in instance.op_class])
    if not m.any():
        m = np.ones(instance.n_ops, dtype=bool)
    t = np.where(instance.runnable, instance.time, 0.0)[m].sum(axis=0)
    # processors that cannot run some of these ops come last
    cannot = (~instance.runnable[m]).sum(axis=0)
    return int(np.lexsort((np.arange(instance.n_processors), t, cannot))[0])


def rule_assignment(instance: Instance, to_host: np.ndarray) -> np.ndarray:
    """Ops in ``to_host`` on the host, the others on the accelerator; an op the chosen
    processor cannot run goes to its fastest processor."""
    acc, host = accelerator(instance), instance.host
    proc = np.where(to_host, host, acc)
    bad = ~instance.runnable[np.arange(instance.n_ops), proc]
    proc[bad] = np.argmin(instance.time[bad], axis=1)
    return proc


def schedule_by_priority(instance: Instance, proc: np.ndarray) -> Solution:
    """List-schedule a fixed assignment, the ready op with the longest remaining path
    (with its assigned times) first."""
    t = instance.time[np.arange(instance.n_ops), proc]
    return list_schedule(instance, proc, priority_order(instance, bottom_levels(instance, t)))


@method(DECISION, "by-class", "heuristic",
        "seed 003 simple variant: scalar ops on the host CPU, tensor ops on the accelerator",
        source="seed 003 [0050]")
def by_class(instance: Instance, options: SolveOptions) -> MethodOutput:
    to_host = np.array([c == "scalar" for c in instance.op_class])
    return _output(instance, schedule_by_priority(instance, rule_assignment(instance, to_host)))


@method(DECISION, "by-complexity", "heuristic",
        "seed 003 variant: control-flow scalar ops on the host, the rest on the accelerator",
        source="seed 003 [0050]")
def by_complexity(instance: Instance, options: SolveOptions) -> MethodOutput:
    to_host = np.asarray(instance.control_flow, dtype=bool)
    return _output(instance, schedule_by_priority(instance, rule_assignment(instance, to_host)))


# ---------------------------------------------------------------------------------------
# HEFT (Topcuoglu, Hariri, Wu: IEEE TPDS 13(3), 2002)


def average_computation_cost(instance: Instance) -> np.ndarray:
    """w̄_i: i's mean time over the resources (cores) that can run it (TPDS 2002, eq. 1;
    a processor with c cores counts c times)."""
    w = np.repeat(instance.time, instance.cores, axis=1)
    finite = np.isfinite(w)
    return np.where(finite, w, 0.0).sum(axis=1) / finite.sum(axis=1)


def average_communication_cost(instance: Instance) -> np.ndarray:
    """c̄_e: the edge's mean transfer time over ordered pairs of distinct resources (TPDS
    2002, eq. 3 averages startup and rate; the mean of the times is the same when the
    rates are uniform, as in the paper's example). Cores of one processor: 0."""
    cores = np.array(instance.cores, dtype=float)
    pairs = np.outer(cores, cores) - np.diag(cores)
    total = pairs.sum()
    if total <= 0 or not len(instance.edges):
        return np.zeros(len(instance.edges))
    return (instance.transfer * pairs[None, :, :]).sum(axis=(1, 2)) / total


def upward_rank(instance: Instance, wbar: np.ndarray, cbar: np.ndarray) -> np.ndarray:
    """rank_u(i) = w̄_i + max over successors j of (c̄_ij + rank_u(j)) (TPDS 2002, eq. 5)."""
    return bottom_levels(instance, wbar, cbar)


def heft_priority_list(rank: np.ndarray) -> list[int]:
    """Ops by decreasing rank_u; ties by index (the paper breaks them randomly)."""
    return sorted(range(len(rank)), key=lambda i: (-rank[i], i))


def earliest_finish_time(instance: Instance, i: int, p: int, c: int, proc: np.ndarray,
                         end: np.ndarray, slots: dict[tuple[int, int], Timeline],
                         insertion: bool = True) -> tuple[float, float]:
    """(EST, EFT) of op i on core (p, c): the earliest idle slot after i's data arrive that
    is long enough (insertion-based policy, TPDS 2002 §4.2), or after the core's last op."""
    ready = 0.0
    for k, e in instance.preds[i]:
        ready = max(ready, float(end[k] + instance.transfer[e, proc[k], p]))
    dur = float(instance.time[i, p])
    s = earliest_start(slots[(p, c)], ready, dur, insertion)
    return s, s + dur


def _earliest_finish_schedule(instance: Instance, picks: Iterable[int],
                              cores_of: Callable[[int], Sequence[tuple[int, int]]],
                              insertion: bool, on_placed: Callable[[int], None] | None = None,
                              budget: Budget | None = None) -> Solution:
    """The list-scheduling core of HEFT and CPOP: each op, in the order ``picks`` yields
    them, goes to the core of ``cores_of(op)`` with the earliest finish time (ties: the
    first in that order); ``on_placed(op)`` lets a dynamic order release successors.
    ``budget`` is polled per op (:class:`~chipsched.budget.BudgetExhausted` once it is
    over: a partial schedule is no answer)."""
    n = instance.n_ops
    proc = -np.ones(n, dtype=np.int64)
    core = -np.ones(n, dtype=np.int64)
    start, end = np.zeros(n), np.zeros(n)
    slots: dict[tuple[int, int], Timeline] = {rc: Timeline() for rc in instance.resources}
    for i in picks:
        if budget is not None:
            budget.tick("list scheduling", 64)
        best = None
        for p, c in cores_of(i):
            est, eft = earliest_finish_time(instance, i, p, c, proc, end, slots, insertion)
            if best is None or eft < best[0]:
                best = (eft, est, p, c)
        eft, est, p, c = best
        proc[i], core[i], start[i], end[i] = p, c, est, eft
        slots[(p, c)].add(est, eft)
        if on_placed is not None:
            on_placed(i)
    return instance.solution(proc, core, start)


def _runnable_cores(instance: Instance, i: int) -> list[tuple[int, int]]:
    return [(p, c) for p, c in instance.resources if instance.runnable[i, p]]


def heft_schedule(instance: Instance, insertion: bool = True, budget: Budget | None = None
                  ) -> Solution:
    """HEFT: rank ops by upward rank, then give each the core with the earliest finish
    time (ties: the first core in the chip's order)."""
    wbar = average_computation_cost(instance)
    cbar = average_communication_cost(instance)
    order = heft_priority_list(upward_rank(instance, wbar, cbar))
    return _earliest_finish_schedule(instance, order,
                                     lambda i: _runnable_cores(instance, i), insertion,
                                     budget=budget)


@dataclass(frozen=True)
class HeftParams:
    insertion: bool = param(True, "insertion-based policy: an op may fill an idle gap (TPDS "
                            "2002 §4.2); false: after the core's last op")


@method(DECISION, "heft", "baseline",
        "HEFT: upward-rank list scheduling, insertion-based earliest finish time",
        source="Topcuoglu, Hariri, Wu, IEEE TPDS 13(3) 2002", params=HeftParams)
def heft(instance: Instance, options: SolveOptions, params: HeftParams) -> MethodOutput:
    return _output(instance, heft_schedule(instance, params.insertion, options.budget))


# ---------------------------------------------------------------------------------------
# CPOP (Topcuoglu, Hariri, Wu: IEEE TPDS 13(3), 2002, §4.3)


def downward_rank(instance: Instance, wbar: np.ndarray, cbar: np.ndarray) -> np.ndarray:
    """rank_d(i) = max over predecessors j of (rank_d(j) + w̄_j + c̄_ji); 0 for entry ops
    (TPDS 2002, eq. 6)."""
    rd = np.zeros(instance.n_ops)
    for i in range(instance.n_ops):
        for j, e in instance.preds[i]:
            rd[i] = max(rd[i], rd[j] + wbar[j] + cbar[e])
    return rd


def critical_path(instance: Instance, priority: np.ndarray) -> list[int]:
    """The ops on the critical path: from the entry op of highest priority (rank_u +
    rank_d), each step to the successor whose priority equals the path's length |CP|
    (ties: the lower index) until an exit op. Several entry ops act as one pseudo-entry
    of zero cost."""
    entries = [i for i in range(instance.n_ops) if not instance.preds[i]]
    first = max(entries, key=lambda i: (priority[i], -i))
    cp_len = priority[first]
    tol = 1e-9 * max(1.0, abs(cp_len))
    path = [first]
    while instance.succs[path[-1]]:
        on = [j for j, _ in instance.succs[path[-1]] if abs(priority[j] - cp_len) <= tol]
        if not on:  # float ties lost: follow the successor of highest priority
            on = [max((j for j, _ in instance.succs[path[-1]]),
                      key=lambda j: (priority[j], -j))]
        path.append(min(on))
    return path


def cpop_schedule(instance: Instance, insertion: bool = True, budget: Budget | None = None
                  ) -> Solution:
    """CPOP: priorities rank_u + rank_d; the critical-path ops all go to the one core
    that runs them fastest in total (ties: chip order; only cores that can run every
    one of them), every other op to the core of earliest finish time; the ready op of
    highest priority is scheduled first (ties: lower index)."""
    wbar = average_computation_cost(instance)
    cbar = average_communication_cost(instance)
    priority = upward_rank(instance, wbar, cbar) + downward_rank(instance, wbar, cbar)
    cp = set(critical_path(instance, priority))
    fits = [(p, c) for p, c in instance.resources
            if all(instance.runnable[i, p] for i in cp)]
    cp_core = min(fits, key=lambda r: sum(float(instance.time[i, r[0]]) for i in cp)) \
        if fits else None
    n = instance.n_ops
    waiting = [len(instance.preds[i]) for i in range(n)]
    ready = [(-priority[i], i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)

    def picks() -> Iterator[int]:
        while ready:
            yield heapq.heappop(ready)[1]

    def release(i: int) -> None:
        for j, _ in instance.succs[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, (-priority[j], j))

    def cores_of(i: int) -> Sequence[tuple[int, int]]:
        return [cp_core] if i in cp and cp_core is not None else _runnable_cores(instance, i)

    return _earliest_finish_schedule(instance, picks(), cores_of, insertion, release, budget)


@method(DECISION, "cpop", "baseline",
        "CPOP: critical-path ops on the one core fastest for them, the rest by earliest "
        "finish time, priority rank_u + rank_d",
        source="Topcuoglu, Hariri, Wu, IEEE TPDS 13(3) 2002", params=HeftParams)
def cpop(instance: Instance, options: SolveOptions, params: HeftParams) -> MethodOutput:
    return _output(instance, cpop_schedule(instance, params.insertion, options.budget))


# ---------------------------------------------------------------------------------------
# Best single processor


def _one_runs_all(instance: Instance, params: Any, warm: bool = False) -> str | None:
    if instance.best_single is None:
        return "no processor can run every op"
    return None


@method(DECISION, "single", "baseline",
        "best single processor: every op on one processor (list-scheduled on its cores)",
        source="baseline", applies=_one_runs_all)
def single(instance: Instance, options: SolveOptions) -> MethodOutput:
    p, value = instance.best_single
    return MethodOutput(Status.FEASIBLE, instance.single_processor_schedules[p],
                        objective=value, stats={"processor": instance.processors[p]})
