"""op_placement's CP-SAT model and the helpers the exact models share (time resolution,
integrality, the serial bound, processor classes, the status of a decoded schedule).
The model is described in the package's docstring."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from chipsched.budget import Budget
from chipsched.problems.op_placement import (
    Instance,
    Solution,
    bottom_levels,
    identical_processor_groups,
    order_by_start,
)
from chipsched.result import Status

BUILD_CPSAT = "building the CP-SAT model"

#: Relative distance between the decoded objective and the proven bound below which an
#: exact run is reported optimal.
OPTIMAL_RTOL = 1e-6


# ---------------------------------------------------------------------------------------
# shared helpers


def processor_classes(instance: Instance) -> tuple[list[list[int]], list[list[int]]]:
    """(classes, symmetric groups): identical processors with free transfers among them
    form one class; groups of identical classes that are not merged (data moves between
    them at a cost) are returned for symmetry breaking."""
    T = instance.transfer
    classes: list[list[int]] = []
    symmetric: list[list[int]] = []
    for g in identical_processor_groups(instance):
        free = len(g) > 1 and all(not T[:, p, q].any() for p in g for q in g if p != q)
        if free:
            classes.append(g)
        else:
            ids = []
            for p in g:
                ids.append(len(classes))
                classes.append([p])
            if len(ids) > 1:
                symmetric.append(ids)
    return classes, symmetric


def serial_upper_bound(instance: Instance) -> float:
    """Length of the serial schedule of any assignment: Σ_i (slowest finite time + the
    largest transfer into i). Every assignment has a schedule ending by then."""
    tmax = np.where(instance.runnable, instance.time, 0.0).max(axis=1)
    into = np.zeros(instance.n_ops)
    if len(instance.edges):
        np.maximum.at(into, instance.edges[:, 1], instance.transfer.max(axis=(1, 2)))
    return float(tmax.sum() + into.sum())


def _integral(*arrays: np.ndarray) -> bool:
    for a in arrays:
        f = a[np.isfinite(a)]
        if f.size and (np.abs(f - np.round(f)) > 1e-9 * np.maximum(1.0, np.abs(f))).any():
            return False
    return True


def _resolution(scale: float, integral: bool, ticks: float) -> float:
    """τ: 1 for integral data, else a power of ten with ``scale / τ ≈ ticks``."""
    if integral and scale <= ticks:
        return 1.0
    if scale <= 0:
        return 1.0
    return 10.0 ** math.floor(math.log10(scale / ticks))


def _energy_scale(instance: Instance) -> float:
    """Σ over ops of the largest energy (the scale energy ticks are chosen for)."""
    return float(np.where(instance.runnable, instance.energy, 0.0).max(axis=1).sum())


def _status(instance: Instance, solver_status: Status, value: float, bound: float | None
            ) -> tuple[Status, str]:
    if solver_status in (Status.TIME_LIMIT, Status.FEASIBLE) and bound is not None and \
            value - bound <= OPTIMAL_RTOL * max(abs(value), 1e-300):
        return Status.OPTIMAL, "proven by the bound"  # a bound that meets the schedule
    if solver_status is Status.OPTIMAL:
        if bound is not None and value - bound <= OPTIMAL_RTOL * max(abs(value), 1e-300):
            return Status.OPTIMAL, ""
        return Status.FEASIBLE, (f"the solver proved its rounded model optimal; rounding "
                                 f"leaves {value - (bound or 0):.3g} to the bound")
    return solver_status, ""




# ---------------------------------------------------------------------------------------
# CP-SAT


def build_cpsat(instance: Instance, tau: float, eps: float, weights: tuple[int, int],
                warm: Solution | None = None, budget: Budget | None = None,
                decomposition: Any = None) -> tuple[Any, dict[str, Any]]:
    """The CP-SAT model (module docstring) with times in ticks of ``tau`` and energies in
    ticks of ``eps``; objective ``weights[0]·C + weights[1]·E``. ``budget`` is polled as
    the model grows (:class:`~chipsched.budget.BudgetExhausted` once it is over).
    ``decomposition`` (a :class:`.windows.Decomposition`) adds its rows: the least time
    between consecutive cut ops for the classes they run on, the head and the tail, and
    the DP's makespan bound — each less two ticks of rounding per row (a real schedule's
    floored image satisfies them)."""
    from ortools.sat.python import cp_model

    bud = budget if budget is not None else Budget(None)
    n = instance.n_ops
    classes, symmetric = processor_classes(instance)
    A = len(classes)
    rep = [c[0] for c in classes]
    cap = [sum(instance.cores[p] for p in c) for c in classes]
    dur = np.floor(np.where(instance.runnable[:, rep], instance.time[:, rep], 0.0) / tau
                   ).astype(np.int64)
    ok = instance.runnable[:, rep]
    T = instance.transfer
    horizon = int(np.floor(serial_upper_bound(instance) / tau)) + 1
    m = cp_model.CpModel()
    s = [m.new_int_var(0, horizon, f"s{i}") for i in range(n)]
    e = [m.new_int_var(0, horizon, f"e{i}") for i in range(n)]
    lit: dict[tuple[int, int], Any] = {}
    intervals: list[list[Any]] = [[] for _ in range(A)]
    for i in range(n):
        bud.tick(BUILD_CPSAT, 64)
        cands = [a for a in range(A) if ok[i, a]]
        for a in cands:
            lv = m.new_bool_var(f"l{i}_{a}")
            if len(cands) == 1:
                m.add(lv == 1)
            lit[(i, a)] = lv
            intervals[a].append(m.new_optional_fixed_size_interval_var(
                s[i], int(dur[i, a]), lv, f"iv{i}_{a}"))
        if len(cands) > 1:
            m.add_exactly_one(lit[(i, a)] for a in cands)
        m.add(e[i] == s[i] + sum(int(dur[i, a]) * lit[(i, a)] for a in cands))
    cumulatives = []  # capacities of the cumulative constraints, for the stats
    for a in range(A):
        if cap[a] == 1:
            m.add_no_overlap(intervals[a])
        else:
            m.add_cumulative(intervals[a], [1] * len(intervals[a]), cap[a])
            cumulatives.append(cap[a])
    for ids in symmetric:
        # redundant: identical processors kept apart (transfers between them cost) are
        # together one resource of their summed capacity — a relaxation the cumulative
        # propagators (edge finding) reason on, where per-processor no-overlaps cannot
        group = [iv for a in ids for iv in intervals[a]]
        m.add_cumulative(group, [1] * len(group), sum(cap[a] for a in ids))
        cumulatives.append(sum(cap[a] for a in ids))
    ctick = np.floor(T[:, rep][:, :, rep] / tau).astype(np.int64) if len(instance.edges) \
        else np.zeros((0, A, A), dtype=np.int64)
    for k, (i, j) in enumerate(instance.edges):
        bud.tick(BUILD_CPSAT, 64)
        i, j = int(i), int(j)
        m.add(s[j] >= e[i])
        for a in range(A):
            for b in range(A):
                c = int(ctick[k, a, b])
                if a != b and c > 0 and (i, a) in lit and (j, b) in lit:
                    m.add(s[j] >= e[i] + c).only_enforce_if(lit[(i, a)], lit[(j, b)])
    for ids in symmetric:
        for pos in range(1, len(ids)):
            a, a0 = ids[pos], ids[pos - 1]
            for i in range(n):
                bud.tick(BUILD_CPSAT, 64)
                if (i, a) not in lit:
                    continue
                earlier = [lit[(k, a0)] for k in range(i) if (k, a0) in lit]
                if earlier:
                    m.add(lit[(i, a)] <= sum(earlier))
                else:
                    m.add(lit[(i, a)] == 0)
    w_time, w_energy = weights
    terms = []
    lb_ticks = 0
    if w_time:
        fastest = np.where(ok, dur, np.iinfo(np.int64).max).min(axis=1).astype(float)
        cp = float(bottom_levels(instance, fastest).max())
        lb_ticks = int(max(cp, math.ceil(fastest.sum() / sum(cap))))
        cmax = m.new_int_var(min(lb_ticks, horizon), horizon, "makespan")
        # C ≥ e[i] + the longest path after i at the fastest times, for every op (not only
        # the sinks): redundant, but it ties every end to the makespan in the LP
        tail = bottom_levels(instance, fastest) - fastest
        for i in range(n):
            m.add(cmax >= e[i] + int(tail[i]))
        if decomposition is not None:
            _window_rows(m, decomposition, classes, lit, e, cmax, tau, horizon)
        terms.append(w_time * cmax)
    if w_energy:
        etick = np.floor(np.where(instance.runnable[:, rep], instance.energy[:, rep], 0.0)
                         / eps).astype(np.int64)
        terms.append(w_energy * sum(int(etick[i, a]) * lv for (i, a), lv in lit.items()
                                    if etick[i, a]))
    m.minimize(sum(terms))
    hints: dict[Any, int] = {}
    if warm is not None:
        cls_of = {p: a for a, c in enumerate(classes) for p in c}
        wa = np.array([cls_of[int(p)] for p in warm.proc])
        wa = _canonical_classes(instance, wa, symmetric)
        for (i, a), lv in lit.items():
            hints[lv] = int(wa[i] == a)
        # the warm start's assignment and per-core order, re-timed in ticks (flooring the
        # real start times could break a precedence by a tick of rounding noise)
        cls_arr = np.array(wa)
        st_t, en_t = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        free: dict[tuple[int, int], int] = {}
        for i in order_by_start(instance, warm.start, warm.proc):
            a = int(cls_arr[i])
            ready = 0
            for k, ek in instance.preds[i]:
                b = int(cls_arr[k])
                ready = max(ready, int(en_t[k]) + (int(ctick[ek, b, a]) if a != b else 0))
            slot = (int(warm.proc[i]), int(warm.core[i]))
            st_t[i] = max(ready, free.get(slot, 0))
            en_t[i] = st_t[i] + int(dur[i, a])
            free[slot] = int(en_t[i])
        for i in range(n):
            hints[s[i]] = int(st_t[i])
            hints[e[i]] = int(en_t[i])
        if w_time:  # a complete hint: CP-SAT takes it as its first solution
            hints[cmax] = int(en_t.max())
    info = {"classes": classes, "lit": lit, "s": s, "lb_ticks": lb_ticks, "horizon": horizon,
            "hints": hints, "cumulatives": cumulatives}
    return m, info


def _window_rows(m: Any, d: Any, classes: list[list[int]], lit: dict[tuple[int, int], Any],
                 e: list[Any], cmax: Any, tau: float, horizon: int) -> None:
    """The decomposition's rows (see :func:`build_cpsat`), per class pair the least over
    its processors."""
    A = len(classes)

    def ticks(x: float) -> int | None:
        return None if not math.isfinite(x) else min(horizon, int(math.floor(x / tau)))

    cuts = d.windows.cuts
    for a in range(A):
        h = ticks(min(d.head[p] for p in classes[a]))
        if h is not None and h > 1 and (cuts[0], a) in lit:
            m.add(e[cuts[0]] >= h - 1).only_enforce_if(lit[(cuts[0], a)])
        t = ticks(min(d.tail[p] for p in classes[a]))
        if t is not None and t > 2 and (cuts[-1], a) in lit:
            m.add(cmax >= e[cuts[-1]] + t - 2).only_enforce_if(lit[(cuts[-1], a)])
    for k, g in enumerate(d.gaps, start=1):
        i, j = cuts[k - 1], cuts[k]
        low = ticks(float(np.min(g)))
        if low is not None and low > 2:
            m.add(e[j] - e[i] >= low - 2)
        for a in range(A):
            for b in range(A):
                v = ticks(min(g[p, q] for p in classes[a] for q in classes[b]))
                if v is not None and v > 2 and (low is None or v > low) and \
                        (i, a) in lit and (j, b) in lit:
                    m.add(e[j] - e[i] >= v - 2).only_enforce_if(lit[(i, a)], lit[(j, b)])
    total = ticks(d.makespan)
    if total is not None:
        m.add(cmax >= total - 2 * (len(cuts) + 1))


def _canonical_classes(instance: Instance, cls: np.ndarray, symmetric: list[list[int]]
                       ) -> np.ndarray:
    """Relabel identical classes by first use so a warm start obeys the symmetry cuts."""
    cls = cls.copy()
    for ids in symmetric:
        firsts = sorted(ids, key=lambda a: (np.flatnonzero(cls == a)[0]
                                            if (cls == a).any() else len(cls), a))
        mapping = dict(zip(firsts, ids, strict=True))
        cls = np.array([mapping.get(int(a), int(a)) for a in cls])
    return cls


def _scaling(instance: Instance, resolution: float | None) -> tuple[float, float, tuple[int, int],
                                                                    float]:
    """(τ, ε, integer weights, real value of one objective tick) of the CP-SAT model.

    Makespan: τ gives ~10¹⁰ ticks over the fastest serial time (1 for integral data).
    Energy: ε likewise over the least total energy. Weighted ``WT·C + WE·E``: ε is set to
    ``WT·τ / WE`` so that both weights become 1 (τ grows when ε would make the energy sum
    exceed ~10¹² ticks) — unless times and energies are integers and WT/WE a fraction
    a/b with b ≤ 1000: then τ = ε = 1 and the weights are (a, b), so that nothing is
    rounded (ε = 2 for WT/WE = 1/2 floored odd energies: CP-SAT could not prove such
    optima). Data are rounded down, so the bound stays valid; the decoded objective is
    the real one.
    """
    obj = instance.objective
    w_time, w_energy = obj.coefficient("makespan"), obj.coefficient("energy_j")
    times = np.concatenate([instance.time[instance.runnable], instance.transfer.ravel()])
    scale = max(float(instance.time.min(axis=1).sum()), serial_upper_bound(instance) / 1e3)
    tau = resolution or _resolution(scale, _integral(times), 1e10)
    e_scale = _energy_scale(instance)
    if w_energy == 0:
        return tau, 1.0, (1, 0), w_time * tau
    if w_time == 0:
        eps = _resolution(e_scale, _integral(instance.energy), 1e10)
        return tau, eps, (0, 1), w_energy * eps
    if resolution is None and _integral(times) and _integral(instance.energy):
        ratio = Fraction(w_time / w_energy).limit_denominator(1000)
        a, b = ratio.numerator, ratio.denominator
        if a > 0 and abs(a / b - w_time / w_energy) <= 1e-12 * (w_time / w_energy):
            return 1.0, 1.0, (a, b), w_energy / b  # WT·C + WE·E = (WE/b)·(a·C + b·E)
    e_max = float(np.where(instance.runnable, instance.energy, 0.0).max(axis=1).sum())
    if e_max > 0 and resolution is None:
        tau = max(tau, w_energy * e_max / 1e12 / w_time)
    return tau, w_time * tau / w_energy, (1, 1), w_time * tau


#: CP-SAT parameters switched on when the model has a cumulative constraint (identical
#: processors or multi-core processors): on the STG sets they turn bounds stuck for
#: minutes into proofs in under a second (docs/benchmarks.md).
CUMULATIVE_REASONING = {"use_timetable_edge_finding_in_cumulative": True,
                        "use_overload_checker_in_cumulative": True}
