"""The window-decomposition bound of op_placement [ours]: cut ops, windows, a DP.

**Cut ops.** A non-scalar op that is comparable — an ancestor or a descendant — with
every other non-scalar op: a transformer layer's output norm, a residual block's add,
every op of a chain. The cut ops c₀ < c₁ < … < c_L are totally ordered.

**Windows.** Window l (1 ≤ l ≤ L) holds the ops that descend from c_{l−1} and are
ancestors of c_l; the head, the ancestors of c₀; the tail, the descendants of c_L. Every
non-scalar op lies in exactly one of them; a scalar op that lies in none (a shape or
parameter op whose only successor is a data op, say) is left out — dropping ops can
only lower an optimum.

**The relaxation.** In any schedule the ops of window l start after c_{l−1} ends and end
before c_l starts, so end(c_l) − end(c_{l−1}) is at least D_l(p, q), the least time from
the end of c_{l−1} on processor p to the end of c_l on processor q when window l runs
alone with every core free (what runs at the same time in a real schedule — dropped
scalar ops — can only delay it; data from ops before c_{l−1} is taken as there). The
head gives H(p) ≤ end(c₀) with c₀ on p, the tail T(q) ≤ C − end(c_L) with c_L on q. So
for every schedule, with p_l the processor of c_l,

    C ≥ H(p₀) + Σ_l D_l(p_{l−1}, p_l) + T(p_L)    ≥    min over (p₀, …, p_L) of the same,

the minimum a DP over the chain finds in O(L·P²). Each H, D, T is the optimum of a small
scheduling problem, solved by the CP-SAT model of :mod:`chipsched.formulations.
op_placement` (its bound when not proven: still a lower bound; the model's ticks round
times down). Windows with the same data (a transformer's layers) are solved once.

The bound of the whole objective: makespan C*; ``energy`` Σ min energy per op; weighted
``WT·C + WE·E`` → ``WT·C* + WE·Σ min energy`` (two lower bounds, each of its own term).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chipsched.budget import Budget, BudgetExhausted
from chipsched.problems.op_placement import Instance, lower_bound
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions

__all__ = ["Decomposition", "cut_ops", "decomposition_bound", "objective_bound", "windows"]

#: columns of the non-scalar reachability bitsets processed at a time (memory: ops ×
#: this / 8 bytes)
CHUNK_BITS = 8192


def _reach_counts(instance: Instance, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ancestors, descendants) of every op counted among ``targets`` (op indices), by
    bitsets propagated along the edges (edges go from lower to higher index)."""
    n = instance.n_ops
    anc = np.zeros(n, dtype=np.int64)
    desc = np.zeros(n, dtype=np.int64)
    preds, succs = instance.preds, instance.succs
    for lo in range(0, len(targets), CHUNK_BITS):
        chunk = targets[lo:lo + CHUNK_BITS]
        bit = [0] * n
        for k, t in enumerate(chunk):
            bit[int(t)] = 1 << k
        up = [0] * n  # ancestors in the chunk
        for v in range(n):
            acc = 0
            for u, _ in preds[v]:
                acc |= up[u] | bit[u]
            up[v] = acc
            anc[v] += acc.bit_count()
        del up
        down = [0] * n
        for v in range(n - 1, -1, -1):
            acc = 0
            for w, _ in succs[v]:
                acc |= down[w] | bit[w]
            down[v] = acc
            desc[v] += acc.bit_count()
    return anc, desc


def cut_ops(instance: Instance) -> list[int]:
    """The non-scalar ops comparable with every other non-scalar op, in index order (a
    chain: each is an ancestor of the next)."""
    data = np.flatnonzero(np.array([c != "scalar" for c in instance.op_class]))
    if data.size == 0:
        return []
    anc, desc = _reach_counts(instance, data)
    return [int(c) for c in data if anc[c] + desc[c] == data.size - 1]


@dataclass(frozen=True)
class Windows:
    """The L cut ops and the ops of every window: ``members[0]`` the head (before cut 0),
    ``members[l]`` for 1 ≤ l < L the ops between cuts l−1 and l, ``members[L]`` the
    tail (after the last cut); ``dropped`` the scalar ops in none of them."""

    cuts: tuple[int, ...]
    members: tuple[tuple[int, ...], ...]
    dropped: tuple[int, ...]


def windows(instance: Instance, cuts: list[int] | None = None) -> Windows:
    """The windows of the cut ops (:func:`cut_ops` unless given): an op belongs to window
    l when its latest cut-op ancestor is cut l−1 and its earliest cut-op descendant cut l
    (one pass each way along the edges)."""
    cuts = cut_ops(instance) if cuts is None else list(cuts)
    n = instance.n_ops
    L = len(cuts)
    pos = {c: k for k, c in enumerate(cuts)}
    last = np.full(n, -1, dtype=np.int64)  # latest cut ancestor (-1: none)
    for v in range(n):
        for u, _ in instance.preds[v]:
            last[v] = max(last[v], pos[u] if u in pos else last[u])
    first = np.full(n, L, dtype=np.int64)  # earliest cut descendant (L: none)
    for v in range(n - 1, -1, -1):
        for w, _ in instance.succs[v]:
            first[v] = min(first[v], pos[w] if w in pos else first[w])
    members: list[list[int]] = [[] for _ in range(L + 1)]
    dropped = []
    for v in range(n):
        if v in pos:
            continue
        if first[v] == last[v] + 1:  # between two consecutive cuts (or head / tail)
            members[int(last[v]) + 1].append(v)
        else:
            dropped.append(v)
    return Windows(tuple(cuts), tuple(tuple(m) for m in members), tuple(dropped))


@dataclass
class Decomposition:
    """The bound and its parts: ``head[p]``, ``gaps[l][p, q]`` (window l+1, between cuts
    l and l+1), ``tail[q]`` in the instance's time unit (``inf``: the cut op cannot run
    there); ``makespan`` the DP's minimum, ``chain`` the processors of the cut ops that
    reach it, ``proven`` whether every window was solved to optimality."""

    windows: Windows
    head: np.ndarray
    gaps: list[np.ndarray]
    tail: np.ndarray
    makespan: float
    chain: tuple[int, ...]
    proven: bool
    stats: dict[str, Any] = field(default_factory=dict)
    #: the processor of every op in the windows' schedules along ``chain`` (-1: dropped,
    #: or a window not solved) and its start within its window (ticks)
    assignment: np.ndarray | None = None
    window_start: np.ndarray | None = None

    def stitched(self, instance: Instance) -> Any:
        """A schedule of the whole instance from the windows' schedules along ``chain``:
        their processors, the ops of each window in their order there, windows in turn
        (ops left out: on their fastest processor, as early as they are ready), decoded
        by list scheduling. None when a window has no schedule."""
        from chipsched.problems.op_placement import list_schedule, priority_order

        a = self.assignment
        if a is None:
            return None
        proc = a.copy()
        keep = np.zeros(instance.n_ops, dtype=bool)
        for m in self.windows.members:
            keep[list(m)] = True
        keep[list(self.windows.cuts)] = True
        if (proc[keep] < 0).any():
            return None
        free = proc < 0
        proc[free] = np.argmin(instance.time[free], axis=1)
        n = instance.n_ops
        prio = np.full(n, np.nan)
        for k, m in enumerate(self.windows.members):
            ops = [*m] + ([self.windows.cuts[k]] if k < len(self.windows.cuts) else [])
            for r, v in enumerate(sorted(ops, key=lambda v: (self.window_start[v], v))):
                prio[v] = -(k * n + r)
        for v in range(n - 1, -1, -1):  # a left-out op just before its first successor
            if np.isnan(prio[v]):
                succ = [prio[w] for w, _ in instance.succs[v]]
                prio[v] = max(succ) + 0.5 if succ else -np.inf
        return list_schedule(instance, proc, priority_order(instance, prio))


def _sub_data(instance: Instance, ops: list[int], first_zero: int | None,
              fixed: dict[int, int]) -> tuple[str, dict[str, Any]]:
    """(a key of, the arrays of) the ops ``ops`` (in index order) as an instance of their
    own: the edges among them, ``first_zero`` (if any) a zero-time op pinned to processor
    ``fixed[it]`` (the cut op the window starts at, ending at time 0), the others of
    ``fixed`` pinned to their processor. O(window): a deep network has many."""
    idx = {v: k for k, v in enumerate(ops)}
    sel = [k for v in ops for u, k in instance.preds[v] if u in idx]
    edges = np.array([[idx[int(instance.edges[k, 0])], idx[int(instance.edges[k, 1])]]
                      for k in sel], dtype=np.int64).reshape(-1, 2)
    time = np.array(instance.time[ops], dtype=float)
    rt = np.array(instance.roundtrip[ops], dtype=float)
    for v, p in fixed.items():
        row = np.full(instance.n_processors, np.inf)
        row[p] = 0.0 if v == first_zero else instance.time[v, p]
        time[idx[v]] = row
        if v == first_zero:
            rt[idx[v]] = 0.0
    data = {"ops": ops, "time": time, "edges": edges, "roundtrip": rt,
            "edge_bytes": np.array(instance.edge_bytes[sel], dtype=float),
            "op_class": tuple(instance.op_class[v] for v in ops)}
    h = hashlib.sha1()
    for k in ("time", "edges", "edge_bytes", "roundtrip"):
        h.update(np.ascontiguousarray(data[k]).tobytes())
    h.update(repr(data["op_class"]).encode())
    return h.hexdigest(), data


def _sub_instance(instance: Instance, data: dict[str, Any]) -> Instance:
    """The window problem of :func:`_sub_data` as an op_placement instance (makespan)."""
    ops = data["ops"]
    return Instance(name="window", ops=tuple(instance.ops[v] for v in ops),
                    op_class=data["op_class"], time=data["time"], edges=data["edges"],
                    edge_bytes=data["edge_bytes"], processors=instance.processors,
                    cores=instance.cores, latency=instance.latency,
                    bandwidth=instance.bandwidth,
                    control_flow=np.array(instance.control_flow[ops]),
                    roundtrip=data["roundtrip"],
                    native_control_flow=instance.native_control_flow,
                    objective="makespan", time_unit=instance.time_unit)


def _solve_window(sub: Instance, options: SolveOptions
                  ) -> tuple[float, bool, np.ndarray | None]:
    """(lower bound on the sub-instance's makespan, proven optimal, the solver's schedule
    as a 2 × ops array — processor, start — or None)."""
    from chipsched.solvers.cpsat import solve_cpsat

    from .models import CUMULATIVE_REASONING, _scaling, build_cpsat

    if sub.n_ops == 1:
        t = float(np.min(sub.time[0]))
        return t, True, np.array([[int(np.argmin(sub.time[0]))], [0.0]])
    tau, eps, weights, unit = _scaling(sub, None)
    model, info = build_cpsat(sub, tau, eps, weights, None, options.budget)
    extra = CUMULATIVE_REASONING if info["cumulatives"] else None
    out, solver = solve_cpsat(model, options, None, extra)
    if out.status is Status.INFEASIBLE:
        return math.inf, True, None
    bound = 0.0 if out.bound is None else max(0.0, float(out.bound) * unit)
    bound = max(bound, lower_bound(sub))
    sched = None
    if out.has_solution:
        classes = info["classes"]
        sched = np.zeros((2, sub.n_ops))
        for (i, a), lv in info["lit"].items():
            if solver.value(lv):
                sched[0, i] = classes[a][0]
        sched[1] = [solver.value(v) for v in info["s"]]
    return bound, out.status is Status.OPTIMAL, sched


def decomposition_bound(instance: Instance, options: SolveOptions,
                        win: Windows | None = None) -> Decomposition | None:
    """The window-decomposition lower bound on the makespan (module docstring), or None
    when the instance has no cut op. Every window problem runs on what is left of
    ``options.budget``; one the budget stops falls back to the critical-path bound of
    its ops (still valid; ``proven`` is then False)."""
    win = windows(instance) if win is None else win
    if not win.cuts:
        return None
    P = instance.n_processors
    cuts, L = win.cuts, len(win.cuts)
    pos_cut = {c: k for k, c in enumerate(cuts)}
    cache: dict[str, tuple[float, bool, np.ndarray | None]] = {}
    solved = reused = stopped = 0
    proven = True
    procs: dict[tuple[int, int, int], tuple[list[int], np.ndarray] | None] = {}

    def value(kind: int, ops: list[int], first_zero: int | None, fixed: dict[int, int],
              tag: tuple[int, int, int]) -> float:
        nonlocal solved, reused, stopped, proven
        key, data = _sub_data(instance, ops, first_zero, fixed)
        if key in cache:
            reused += 1
        else:
            sub = _sub_instance(instance, data)
            try:
                if options.budget.exhausted():
                    raise BudgetExhausted("the window bound")
                cache[key] = _solve_window(sub, options)
                solved += 1
            except BudgetExhausted:
                cache[key] = (lower_bound(sub), False, None)
                stopped += 1
        v, ok, sched = cache[key]
        proven &= ok
        procs[tag] = None if sched is None else (ops, sched)
        return v

    run = instance.runnable
    head = np.full(P, np.inf)
    for p in range(P):
        if run[cuts[0], p]:
            head[p] = value(0, sorted([*win.members[0], cuts[0]]), None, {cuts[0]: p},
                            (0, -1, p))
    gaps = []
    for k in range(1, L):
        a, b = cuts[k - 1], cuts[k]
        g = np.full((P, P), np.inf)
        ops = sorted([a, *win.members[k], b])
        for p in range(P):
            if not run[a, p]:
                continue
            for q in range(P):
                if run[b, q]:
                    g[p, q] = value(k, ops, a, {a: p, b: q}, (k, p, q))
        gaps.append(g)
    tail = np.full(P, np.inf)
    for q in range(P):
        if run[cuts[-1], q]:
            ops = sorted([cuts[-1], *win.members[L]])
            tail[q] = value(L, ops, cuts[-1], {cuts[-1]: q}, (L, q, -1)) \
                if len(ops) > 1 else 0.0
    # the DP over the chain of cut ops: best[p] = least time to the end of the cut op on p
    best = head.copy()
    back: list[np.ndarray] = []
    for g in gaps:
        tot = best[:, None] + g
        back.append(np.argmin(tot, axis=0))
        best = tot.min(axis=0)
    total = best + tail
    q = int(np.argmin(total))
    makespan = float(total[q])
    chain = [q]
    for bk in reversed(back):
        chain.append(int(bk[chain[-1]]))
    chain.reverse()
    assignment = np.full(instance.n_ops, -1, dtype=np.int64)
    start = np.zeros(instance.n_ops)
    if math.isfinite(makespan):
        for k, c in enumerate(cuts):
            assignment[c] = chain[k]
        tags = [(0, -1, chain[0])] + [(k, chain[k - 1], chain[k]) for k in range(1, L)] + \
            [(L, chain[-1], -1)]
        pinned = {cuts[0]} | {cuts[k] for k in range(1, L)}  # each in the window it ends
        for tag in tags:
            got = procs.get(tag)
            if got is None:
                continue
            ops, sched = got
            for v, p, t in zip(ops, sched[0], sched[1], strict=True):
                if v not in pos_cut:
                    assignment[v], start[v] = int(p), float(t)
                elif v in pinned and tag[0] == pos_cut[v] and tag[2] >= 0:
                    start[v] = float(t)
    return Decomposition(win, head, gaps, tail, makespan, tuple(chain), proven and not stopped,
                         {"cut_ops": L, "windows": L + 1, "largest_window":
                          max((len(m) for m in win.members), default=0),
                          "dropped_ops": len(win.dropped), "window_problems": solved,
                          "window_problems_reused": reused, "window_problems_stopped": stopped,
                          "decomposition_makespan": makespan},
                         assignment, start)


#: relative margin taken off the bounds computed in floating point: a schedule's own sums,
#: in another order, can come out one unit in the last place below them
FLOAT_MARGIN = 1e-12


def objective_bound(instance: Instance, makespan_lb: float) -> float:
    """A lower bound on the instance's objective from one on its makespan (module
    docstring): the energy term's least total alongside; less :data:`FLOAT_MARGIN`."""
    obj = instance.objective
    wt, we = obj.coefficient("makespan"), obj.coefficient("energy_j")
    e_min = float(np.where(instance.runnable, instance.energy, np.inf).min(axis=1).sum())
    return (wt * makespan_lb + we * e_min) * (1 - FLOAT_MARGIN)


def useful(win: Windows, instance: Instance) -> bool:
    """Whether the decomposition splits the instance: at least two windows with ops and
    none holding more than half of the non-scalar ops (else a window problem is about as
    hard as the whole)."""
    data = sum(c != "scalar" for c in instance.op_class)
    sizes = [sum(instance.op_class[v] != "scalar" for v in m) for m in win.members]
    return bool(win.cuts) and max(sizes, default=0) <= data / 2 and len(win.cuts) >= 2


def budget_share(options: SolveOptions, fraction: float) -> SolveOptions:
    """``options`` on a share of its budget (the window problems of a method's run)."""
    b: Budget = options.budget.share(fraction)
    return options.replace(budget=b)
