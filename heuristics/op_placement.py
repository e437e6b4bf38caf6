"""Op-placement heuristics: seed 003's cost/profit assignment, its by-class variants,
HEFT, and the best single processor.

Seed 003 (``docs/sources.md``; the patent's [0024]–[0034], [0050],
[0054]–[0056])
--------------------------------------------------------------------------------
Ops are taken in program (topological) order i = 0, 1, …; the candidate cores j are
every core of every processor in the chip's order (NPU → GPU → CPU for the SoC
presets). For op i on core j (processor p):

=========  ======================================================================================
term       our concrete definition (the document defines the terms only in words)
=========  ======================================================================================
T(i, j)    **data-transfer cost**: Σ over i's producers k (already placed) of the transfer time
           of edge k→i from k's processor to p, plus seed 003's control-flow round trip when i
           is a control-flow op and p has no native control flow ([0028]: "a large cost").
A(i, j)    **accumulated cost** of j running work continuously ([0024]): how long i would
           wait for the work j has accumulated — the earliest idle slot on j long enough for
           i, from ``ready_i`` (latest end of i's producers) on, minus ``ready_i`` — plus
           i's own execution time on p (its time without the round trip).
S(i, j)    **speed gain** ([0031]): ``(t_h − t_j) / max(t_h, t_j)`` ∈ [−1, 1], where t_h is
           i's time on the host h (the first processor with native control flow — the CPU
           the compiler runs on — or the last processor) and t_j on p. The host itself has
           S = 0; the CPU's advantage on scalar ops shows as S < 0 on the accelerators.
O(i, j)    **complexity gain** ([0031]: multiply vs add, float vs int): the same relative
           gain computed on the op's **energy** ``(e_h − e_j) / max(e_h, e_j)``; the energy
           per op of a class on a processor is how the cost model prices an operation's
           complexity there (pJ per MAC vs per scalar op). 0 when the instance has no energies.
C, P       ``C = T + A`` (seconds), ``P = S + O`` (∈ [−2, 2]).
th1, th2   op i passes core j when ``P ≥ th1`` and ``C ≤ th2 · C_min(i)``, C_min(i) = the
           least C over all cores: th2 is relative, so that one number works for any time
           scale. Defaults [ours; the document gives none]: th1 = 0 (no worse than the host
           on speed and complexity together), th2 = 1.5 (within 50 % of the cheapest core).
=========  ======================================================================================

Assignment ([0054]–[0056]):

1. **fusion**: if op i−1 passed (it is recorded in the "library", our per-run record)
   and i−1 → i is an edge, i is evaluated fused with i−1 on i−1's core: the pair's
   C is the sum of both ops' C there, its P is S + O of the summed times and energies;
   the pair passes when ``P ≥ th1`` and ``C ≤ th2 · (C_min(i−1) + C_min(i))``; then i
   goes to i−1's core;
2. otherwise the cores are tried in order, the first that passes takes i (recorded as
   a success);
3. if none passes and step 1 did not apply (i−1 failed), i is fused with i−1 when that
   pair passes (the document's "or fuse with op[i−1]");
4. otherwise the fallback: the core of least cost (``fallback="cost"``, ties: larger
   profit), of largest profit (``"profit"``), or of least ``C / (1 + P/2)``
   (``"cost-profit"``); recorded as a failure.

The schedule (the document gives none): every op goes to the first idle gap of its
core that is long enough and starts after its inputs have arrived (``insertion=True``,
the default), or after the core's last op (``insertion=False``). "Fusion" is a
placement decision: the cost model still charges each op its own launch overhead.

The simple variants ([0050]): :func:`by_class` (scalar ops → the host CPU, tensor and
vector ops → the accelerator) and :func:`by_complexity` (control-flow scalar ops → the
host, everything else → the accelerator).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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


@dataclass(frozen=True)
class Seed003Params:
    th1: float = param(0.0, "profit threshold: a core passes when P = S + O ≥ th1",
                       ge=-2, le=2)
    th2: float = param(1.5, "cost threshold relative to the cheapest core: a core passes "
                       "when C ≤ th2 · C_min", ge=1)
    fusion: bool = param(True, "evaluate an op fused with its predecessor first ([0054])")
    fallback: str = param("cost", "the core taken when none passes: least cost, largest "
                          "profit, or least C/(1 + P/2)",
                          choices=("cost", "profit", "cost-profit"))
    insertion: bool = param(True, "schedule into the first idle gap that fits (else after "
                            "the core's last op)")


@method(DECISION, "seed003", "heuristic",
        "seed 003: cost C=T+A / profit P=S+O thresholds, fusion with the previous op, "
        "least-cost fallback", source="seed 003 (CN patent, NN compilation)",
        params=Seed003Params)
def seed003(instance: Instance, options: SolveOptions, params: Seed003Params
            ) -> MethodOutput:
    sol, outcome = seed003_assign(instance, params.th1, params.th2, params.fusion,
                                  params.fallback, params.insertion)
    return _output(instance, sol, **outcome)


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
                         end: np.ndarray, slots: dict[tuple[int, int], list[tuple[float, float]]],
                         insertion: bool = True) -> tuple[float, float]:
    """(EST, EFT) of op i on core (p, c): the earliest idle slot after i's data arrive that
    is long enough (insertion-based policy, TPDS 2002 §4.2), or after the core's last op."""
    ready = 0.0
    for k, e in instance.preds[i]:
        ready = max(ready, float(end[k] + instance.transfer[e, proc[k], p]))
    dur = float(instance.time[i, p])
    s = earliest_start(slots[(p, c)], ready, dur, insertion)
    return s, s + dur


def heft_schedule(instance: Instance, insertion: bool = True) -> Solution:
    """HEFT: rank ops by upward rank, then give each the core with the earliest finish
    time (ties: the first core in the chip's order)."""
    wbar = average_computation_cost(instance)
    cbar = average_communication_cost(instance)
    order = heft_priority_list(upward_rank(instance, wbar, cbar))
    n = instance.n_ops
    proc = -np.ones(n, dtype=np.int64)
    core = -np.ones(n, dtype=np.int64)
    start, end = np.zeros(n), np.zeros(n)
    slots: dict[tuple[int, int], list[tuple[float, float]]] = {rc: [] for rc in
                                                               instance.resources}
    for i in order:
        best = None
        for p, c in instance.resources:
            if not instance.runnable[i, p]:
                continue
            est, eft = earliest_finish_time(instance, i, p, c, proc, end, slots, insertion)
            if best is None or eft < best[0]:
                best = (eft, est, p, c)
        eft, est, p, c = best
        proc[i], core[i], start[i], end[i] = p, c, est, eft
        bisect.insort(slots[(p, c)], (est, eft))
    return instance.solution(proc, core, start)


@dataclass(frozen=True)
class HeftParams:
    insertion: bool = param(True, "insertion-based policy: an op may fill an idle gap (TPDS "
                            "2002 §4.2); false: after the core's last op")


@method(DECISION, "heft", "baseline",
        "HEFT: upward-rank list scheduling, insertion-based earliest finish time",
        source="Topcuoglu, Hariri, Wu, IEEE TPDS 13(3) 2002", params=HeftParams)
def heft(instance: Instance, options: SolveOptions, params: HeftParams) -> MethodOutput:
    return _output(instance, heft_schedule(instance, params.insertion))


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
