"""The op-placement evaluator: a feasibility check and the objective from the schedule."""

from __future__ import annotations

from typing import Any

import numpy as np

from chipsched.errors import InputError

from .instance import Instance
from .solution import Solution, makespan_energy


def check_schedule(instance: Instance, solution: Solution) -> None:
    """Raise :class:`InputError` naming the first op that breaks feasibility."""
    n = instance.n_ops
    if len(solution.proc) != n:
        raise InputError("solution", f"has {len(solution.proc)} ops, the instance {n}")
    proc, core, start = solution.proc, solution.core, solution.start
    P = instance.n_processors
    if (proc < 0).any() or (proc >= P).any():
        i = int(np.flatnonzero((proc < 0) | (proc >= P))[0])
        raise InputError(f"solution: op {instance.ops[i]!r}", f"processor {proc[i]} does "
                         "not exist")
    cores = np.array(instance.cores)[proc]
    if (core < 0).any() or (core >= cores).any():
        i = int(np.flatnonzero((core < 0) | (core >= cores))[0])
        raise InputError(f"solution: op {instance.ops[i]!r}", f"core {core[i]} of "
                         f"{instance.processors[proc[i]]} does not exist")
    idx = np.arange(n)
    dur = instance.time[idx, proc]
    if not np.isfinite(dur).all():
        i = int(np.flatnonzero(~np.isfinite(dur))[0])
        raise InputError(f"solution: op {instance.ops[i]!r}",
                         f"{instance.processors[proc[i]]} cannot run it")
    if not np.isfinite(start).all():
        i = int(np.flatnonzero(~np.isfinite(start))[0])
        raise InputError(f"solution: op {instance.ops[i]!r}", "start is not a number")
    end = start + dur
    tol = 1e-9 * max(float(np.abs(end).max()), 1e-300)
    if (start < -tol).any():
        i = int(np.flatnonzero(start < -tol)[0])
        raise InputError(f"solution: op {instance.ops[i]!r}", f"starts at {start[i]} < 0")
    if len(instance.edges):
        a, b = instance.edges[:, 0], instance.edges[:, 1]
        arrive = end[a] + instance.transfer[np.arange(len(a)), proc[a], proc[b]]
        late = start[b] < arrive - tol
        if late.any():
            k = int(np.flatnonzero(late)[0])
            raise InputError(f"solution: op {instance.ops[b[k]]!r}",
                             f"starts at {start[b[k]]:.9g}, before its input from "
                             f"{instance.ops[a[k]]!r} arrives at {arrive[k]:.9g}")
    res = proc * (max(instance.cores) + 1) + core
    # equal starts: the shorter first, so that a zero-time op starting where a longer
    # one starts is not mistaken for an overlap
    o = np.lexsort((end, start, res))
    same = res[o][1:] == res[o][:-1]
    overlap = same & (start[o][1:] < end[o][:-1] - tol)
    if overlap.any():
        k = int(np.flatnonzero(overlap)[0])
        i, j = int(o[k]), int(o[k + 1])
        raise InputError(f"solution: op {instance.ops[j]!r}",
                         f"overlaps {instance.ops[i]!r} on {instance.processors[proc[i]]} "
                         f"core {core[i]}")


def evaluate(instance: Instance, solution: Solution) -> tuple[float, dict[str, Any]]:
    """Check the schedule and return ``(objective, metrics)``.

    Metrics: makespan, energy, the objective, the gain over the best single processor
    (its objective / this objective), per-processor ops / busy time / utilization /
    energy, the transfers that cross processors and the control-flow round trips paid.
    """
    check_schedule(instance, solution)
    makespan, energy = makespan_energy(instance, solution)
    obj = instance.objective
    value = obj(makespan, energy)
    n = instance.n_ops
    idx = np.arange(n)
    proc = solution.proc
    dur = instance.time[idx, proc]
    per_proc = {}
    for p, name in enumerate(instance.processors):
        mask = proc == p
        busy = float(dur[mask].sum())
        per_proc[name] = {
            "ops": int(mask.sum()), "busy": busy,
            "utilization": busy / (instance.cores[p] * makespan) if makespan > 0 else 0.0,
            "energy_j": float(instance.energy[idx[mask], p].sum()),
        }
    n_xfer, xfer_time, xfer_bytes = 0, 0.0, 0.0
    if len(instance.edges):
        a, b = instance.edges[:, 0], instance.edges[:, 1]
        t = instance.transfer[np.arange(len(a)), proc[a], proc[b]]
        cross = proc[a] != proc[b]
        n_xfer = int((cross & (instance.edge_bytes > 0)).sum())
        xfer_time = float(t.sum())
        xfer_bytes = float(instance.edge_bytes[cross].sum())
    rt = instance.roundtrip[idx, proc]
    best = instance.best_single
    metrics: dict[str, Any] = {
        "objective": obj.name,
        "makespan": makespan,
        "energy_j": energy,
        "time_unit": instance.time_unit,
        "processors": per_proc,
        "transfers": n_xfer,
        "transfer_time": xfer_time,
        "transfer_bytes": xfer_bytes,
        "control_roundtrips": int((rt > 0).sum()),
        "roundtrip_time": float(rt.sum()),
        "best_single_processor": None if best is None else instance.processors[best[0]],
        "best_single_objective": None if best is None else best[1],
        "gain_vs_best_single": None if best is None or value <= 0 else best[1] / value,
    }
    return value, metrics
