"""Op placement (seed 003): ops of a DAG onto heterogeneous processors, with a schedule.

The problem
-----------
An **instance** is a DAG of ops in topological order (every edge goes from a lower to a
higher index), a set of processors (a processor with ``c`` cores is ``c`` identical
resources; cores of one processor share its memory, so moving data between them is
free), per-(op, processor) execution time and energy, and per-edge transfer times
between processors. A **solution** puts every op on one core of one processor and
gives it a start time; the op then runs for ``time[op, processor]``.

A schedule is **feasible** when

* every op runs on a processor that can run it (finite time) and on an existing core;
* precedence with transfers: for every edge ``i → j``,
  ``start[j] ≥ end[i] + transfer[e, proc[i], proc[j]]`` (0 on the same processor);
* exclusivity: ops on the same core do not overlap.

Objectives (all minimized; :func:`parse_objective`): ``makespan`` (default; the last
end time), ``energy`` (the sum of the ops' energies; the interconnect has no energy
figure in the shared cost model, so transfers cost time only), or ``weighted:WT,WE`` =
``WT·makespan + WE·energy``. The evaluator always also reports the **gain over the best
single processor**: the objective of the best all-on-one-processor schedule divided by
the solution's (> 1 means the placement beats every single processor).

Times are in seconds for instances built from a chip, and in the file's own time unit
(``Instance.time_unit``) for task graphs read from STG/CSV files.

:func:`evaluate` is the only place objective values are computed; the per-op times and
energies come from ``chipsched.cost.processor_time_s`` / ``processor_energy_j`` (built
in ``chipsched.instances.op_placement``) and transfers from :func:`transfer_table`,
the vectorized form of ``chipsched.cost.transfer_time_s`` (a test checks they agree).
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from chipsched.errors import InputError

#: Op classes of the shared cost model (``chipsched.cost.op_class``) plus ``task`` for
#: task graphs whose tasks carry no class (STG, HEFT matrices).
OP_CLASSES = ("tensor", "vector", "scalar", "task")


# ---------------------------------------------------------------------------------------
# Objective


@dataclass(frozen=True)
class PlacementObjective:
    """``w_time · makespan + w_energy · energy``; ``name`` is how the user wrote it."""

    name: str
    w_time: float
    w_energy: float

    def __call__(self, makespan: float, energy: float) -> float:
        value = 0.0
        if self.w_time:
            value += self.w_time * makespan
        if self.w_energy:
            value += self.w_energy * energy
        return value


def parse_objective(spec: str | PlacementObjective | None) -> PlacementObjective:
    """``makespan`` (alias ``latency``), ``energy`` or ``weighted:WT,WE`` (default 1,1).

    ``weighted:WT,WE`` is ``WT·makespan + WE·energy`` with makespan in the instance's time
    unit and energy in joules; choose WE to convert joules into time units.
    """
    if isinstance(spec, PlacementObjective):
        return spec
    s = "makespan" if spec is None else str(spec).strip().lower().replace(" ", "")
    if s in ("makespan", "latency"):
        return PlacementObjective("makespan", 1.0, 0.0)
    if s == "energy":
        return PlacementObjective("energy", 0.0, 1.0)
    m = re.fullmatch(r"weighted(?::([0-9.eE+-]+)(?:,([0-9.eE+-]+))?)?", s)
    if m:
        try:
            wt = float(m[1]) if m[1] else 1.0
            we = float(m[2]) if m[2] else (1.0 if not m[1] else None)
        except ValueError:
            we = wt = -1.0
        if we is None:
            raise InputError("objective", f"{spec!r} gives one weight",
                             "write weighted:WT,WE (WT·makespan + WE·energy)")
        if not (wt >= 0 and we >= 0 and wt + we > 0 and math.isfinite(wt + we)):
            raise InputError("objective", f"weights of {spec!r} must be non-negative and "
                             "not both 0", "e.g. weighted:1,0.5")
        return PlacementObjective(f"weighted:{wt:g},{we:g}", wt, we)
    raise InputError("objective", f"unknown objective {spec!r} for op_placement",
                     "use makespan (latency), energy or weighted:WT,WE")


# ---------------------------------------------------------------------------------------
# Transfers


def transfer_table(edge_bytes: np.ndarray, latency: np.ndarray, bandwidth: np.ndarray
                   ) -> np.ndarray:
    """Transfer time of every edge between every processor pair, shape ``(m, P, P)``.

    ``0`` on the diagonal and for edges of 0 bytes, else ``latency[p, q] + bytes /
    bandwidth[p, q]`` — ``chipsched.cost.transfer_time_s`` vectorized (an infinite
    bandwidth means the bytes cost nothing, only the latency).
    """
    b = np.asarray(edge_bytes, dtype=float)[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_byte = np.where(np.isinf(bandwidth), 0.0, 1.0 / bandwidth)
    t = latency[None, :, :] + b * per_byte[None, :, :]
    t = np.where(b > 0, t, 0.0)
    P = latency.shape[0]
    t[:, np.arange(P), np.arange(P)] = 0.0
    return t


# ---------------------------------------------------------------------------------------
# Instance


def _as_matrix(x: Any, P: int, what: str) -> np.ndarray:
    a = np.array(x, dtype=float)
    if a.ndim == 0:
        a = np.full((P, P), float(a))
    if a.shape != (P, P):
        raise InputError(what, f"must be a number or a {P}×{P} matrix, got shape {a.shape}")
    return a


@dataclass(frozen=True, eq=False)
class Instance:
    """An op-placement instance (see the module docstring).

    ``time`` and ``energy`` are ``(ops, processors)`` arrays (``inf`` time: the
    processor cannot run the op); ``roundtrip`` is the part of ``time`` that is seed
    003's control-flow round trip to a host (0 for other ops), kept apart so that the
    seed-003 heuristic can charge it to its transfer cost T. ``edges`` is ``(m, 2)``
    (src, dst) with ``src < dst``; ``latency`` (time units) and ``bandwidth`` (bytes per
    time unit, ``inf`` allowed) are ``(P, P)``; the diagonal is unused.
    """

    name: str
    ops: tuple[str, ...]
    op_class: tuple[str, ...]
    time: np.ndarray
    edges: np.ndarray
    edge_bytes: np.ndarray
    processors: tuple[str, ...]
    cores: tuple[int, ...]
    latency: np.ndarray
    bandwidth: np.ndarray
    energy: np.ndarray | None = None
    control_flow: np.ndarray | None = None
    roundtrip: np.ndarray | None = None
    op_kind: tuple[str, ...] | None = None
    work: np.ndarray | None = None
    native_control_flow: tuple[bool, ...] | None = None
    objective: str = "makespan"
    time_unit: str = "s"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n, P = len(self.ops), len(self.processors)
        src = f"op_placement instance {self.name!r}"
        if n == 0:
            raise InputError(src, "has no ops", "give at least one op")
        if P == 0:
            raise InputError(src, "has no processors", "give at least one processor")
        if len(set(self.ops)) != n:
            dup = next(o for o in self.ops if self.ops.count(o) > 1)
            raise InputError(f"{src}: op {dup!r}", "defined twice", "op names must be unique")
        if len(set(self.processors)) != P:
            raise InputError(f"{src}.processors", "names must be unique")
        object.__setattr__(self, "ops", tuple(self.ops))
        object.__setattr__(self, "processors", tuple(self.processors))
        object.__setattr__(self, "cores", tuple(int(c) for c in self.cores))
        if len(self.cores) != P or min(self.cores) < 1:
            raise InputError(f"{src}.cores", "one positive core count per processor")
        cls = tuple(self.op_class)
        if len(cls) != n or any(c not in OP_CLASSES for c in cls):
            bad = next((c for c in cls if c not in OP_CLASSES), None)
            raise InputError(f"{src}.op_class", f"unknown class {bad!r}" if bad else
                             "needs one class per op", f"use one of {', '.join(OP_CLASSES)}")
        object.__setattr__(self, "op_class", cls)
        kinds = tuple(self.op_kind) if self.op_kind is not None else cls
        if len(kinds) != n:
            raise InputError(f"{src}.op_kind", "needs one kind per op")
        object.__setattr__(self, "op_kind", kinds)
        t = np.array(self.time, dtype=float)
        e = np.array(self.energy, dtype=float) if self.energy is not None else np.zeros((n, P))
        for arr, what in ((t, "time"), (e, "energy")):
            if arr.shape != (n, P):
                raise InputError(f"{src}.{what}", f"must be {n}×{P} (ops × processors), got "
                                 f"shape {arr.shape}")
        _check_values(t, self.ops, self.processors, src, "time", allow_inf=True)
        _check_values(e, self.ops, self.processors, src, "energy", allow_inf=False)
        runnable = np.isfinite(t)
        if not runnable.any(axis=1).all():
            i = int(np.flatnonzero(~runnable.any(axis=1))[0])
            raise InputError(f"{src}: op {self.ops[i]!r}", "no processor can run it "
                             "(infinite time everywhere)",
                             "give it a finite time on at least one processor")
        e = np.where(runnable, e, 0.0)
        rt = np.zeros((n, P)) if self.roundtrip is None else np.array(self.roundtrip, float)
        if rt.shape != (n, P) or (rt < 0).any():
            raise InputError(f"{src}.roundtrip", "must be a non-negative ops × processors array")
        cf = np.zeros(n, bool) if self.control_flow is None else \
            np.array(self.control_flow, dtype=bool)
        if cf.shape != (n,):
            raise InputError(f"{src}.control_flow", "needs one flag per op")
        w = np.zeros(n) if self.work is None else np.array(self.work, dtype=float)
        native = tuple(bool(x) for x in self.native_control_flow) \
            if self.native_control_flow is not None else (False,) * P
        if len(native) != P:
            raise InputError(f"{src}.native_control_flow", "needs one flag per processor")
        edges = np.array(self.edges, dtype=np.int64).reshape(-1, 2)
        eb = np.array(self.edge_bytes, dtype=float).reshape(-1)
        if len(eb) != len(edges):
            raise InputError(f"{src}.edge_bytes", "needs one size per edge")
        if len(edges):
            if edges.min() < 0 or edges.max() >= n:
                raise InputError(f"{src}.edges", "an edge names an op that does not exist")
            if (eb < 0).any() or not np.isfinite(eb).all():
                k = int(np.flatnonzero(~(eb >= 0) | ~np.isfinite(eb))[0])
                raise InputError(f"{src}: edge {self.ops[edges[k, 0]]} -> "
                                 f"{self.ops[edges[k, 1]]}", f"size {eb[k]} is negative or "
                                 "not finite", "give a non-negative number of bytes")
            back = edges[:, 0] >= edges[:, 1]
            if back.any():
                _raise_cycle_or_order(edges, self.ops, src)
            keys = edges[:, 0] * n + edges[:, 1]
            if len(np.unique(keys)) != len(keys):
                k = int(np.flatnonzero(np.bincount(np.unique(keys, return_inverse=True)[1]) > 1
                                       )[0])
                a, b = divmod(int(np.unique(keys)[k]), n)
                raise InputError(f"{src}: edge {self.ops[a]} -> {self.ops[b]}", "given twice")
        lat = _as_matrix(self.latency, P, f"{src}.latency")
        bw = _as_matrix(self.bandwidth, P, f"{src}.bandwidth")
        off = ~np.eye(P, dtype=bool)
        if (lat[off] < 0).any() or not np.isfinite(lat[off]).all():
            raise InputError(f"{src}.latency", "entries must be finite and non-negative")
        if (bw[off] <= 0).any():
            raise InputError(f"{src}.bandwidth", "entries must be positive (inf: free)")
        for name, val in (("time", t), ("energy", e), ("roundtrip", rt), ("control_flow", cf),
                          ("work", w), ("edges", edges), ("edge_bytes", eb), ("latency", lat),
                          ("bandwidth", bw)):
            val.setflags(write=False)
            object.__setattr__(self, name, val)
        object.__setattr__(self, "native_control_flow", native)
        object.__setattr__(self, "meta", dict(self.meta))
        parse_objective(self.objective)  # validate early

    # -- sizes and derived tables ------------------------------------------------------
    @property
    def n_ops(self) -> int:
        return len(self.ops)

    @property
    def n_processors(self) -> int:
        return len(self.processors)

    @property
    def n_resources(self) -> int:
        """Cores over all processors."""
        return int(sum(self.cores))

    @property
    def objective_name(self) -> str:
        return self.parsed_objective.name

    @cached_property
    def parsed_objective(self) -> PlacementObjective:
        return parse_objective(self.objective)

    @cached_property
    def transfer(self) -> np.ndarray:
        """``(m, P, P)`` transfer time of every edge between every processor pair."""
        t = transfer_table(self.edge_bytes, self.latency, self.bandwidth)
        t.setflags(write=False)
        return t

    @cached_property
    def runnable(self) -> np.ndarray:
        return np.isfinite(self.time)

    @cached_property
    def preds(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """``preds[j]`` = ((i, edge index), …) of the edges into j."""
        p: list[list[tuple[int, int]]] = [[] for _ in self.ops]
        for k, (i, j) in enumerate(self.edges):
            p[int(j)].append((int(i), k))
        return tuple(tuple(x) for x in p)

    @cached_property
    def succs(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """``succs[i]`` = ((j, edge index), …) of the edges out of i."""
        s: list[list[tuple[int, int]]] = [[] for _ in self.ops]
        for k, (i, j) in enumerate(self.edges):
            s[int(i)].append((int(j), k))
        return tuple(tuple(x) for x in s)

    @cached_property
    def resources(self) -> tuple[tuple[int, int], ...]:
        """Every (processor, core) pair, processors in order."""
        return tuple((p, c) for p, k in enumerate(self.cores) for c in range(k))

    @cached_property
    def host(self) -> int:
        """The host: the first processor with native control flow, else the last one
        (the general-purpose end of an NPU → GPU → CPU chain)."""
        for p, nat in enumerate(self.native_control_flow):
            if nat:
                return p
        return self.n_processors - 1

    def with_objective(self, objective: str | None) -> Instance:
        """The same instance with another objective."""
        if objective is None:
            return self
        return replace(self, objective=parse_objective(objective).name)

    def op_index(self, name: str) -> int:
        try:
            return self.ops.index(name)
        except ValueError:
            from chipsched.errors import UnknownNameError

            raise UnknownNameError(f"instance {self.name!r} op", name, self.ops) from None

    def solution(self, proc: Sequence[int], core: Sequence[int], start: Sequence[float]
                 ) -> Solution:
        """A :class:`Solution` of this instance (names filled in for display and JSON)."""
        return Solution(np.asarray(proc, dtype=np.int64), np.asarray(core, dtype=np.int64),
                        np.asarray(start, dtype=float), self.ops, self.processors)

    # -- the best single processor (reported by every evaluation) ----------------------
    @cached_property
    def single_processor_schedules(self) -> dict[int, Solution]:
        """For every processor that can run every op: all ops on it, list-scheduled on
        its cores (:func:`single_processor_schedule`)."""
        return {p: single_processor_schedule(self, p) for p in range(self.n_processors)
                if self.runnable[:, p].all()}

    @cached_property
    def best_single(self) -> tuple[int, float] | None:
        """(processor, objective) of the best single-processor schedule, or None when no
        processor can run every op."""
        best: tuple[int, float] | None = None
        for p, sol in self.single_processor_schedules.items():
            v = self.parsed_objective(*_makespan_energy(self, sol))
            if best is None or v < best[1]:
                best = (p, v)
        return best

    # -- files ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The generic JSON form (schema: ``docs/schemas/op_placement.schema.json``)."""
        def num(x: float) -> Any:
            return None if not math.isfinite(x) else float(x)

        def mat(a: np.ndarray) -> list[list[Any]]:
            return [[None if (i == j or not math.isfinite(a[i, j])) else float(a[i, j])
                     for j in range(a.shape[1])] for i in range(a.shape[0])]

        ops = []
        for i, name in enumerate(self.ops):
            d: dict[str, Any] = {"name": name, "class": self.op_class[i]}
            if self.op_kind[i] != self.op_class[i]:
                d["kind"] = self.op_kind[i]
            if self.control_flow[i]:
                d["control_flow"] = True
            d["time"] = {p: num(self.time[i, k]) for k, p in enumerate(self.processors)}
            if self.energy.any():
                d["energy"] = {p: float(self.energy[i, k])
                               for k, p in enumerate(self.processors)}
            if self.roundtrip[i].any():
                d["roundtrip"] = {p: float(self.roundtrip[i, k])
                                  for k, p in enumerate(self.processors)}
            if self.work[i]:
                d["work"] = float(self.work[i])
            ops.append(d)
        return {
            "name": self.name,
            "time_unit": self.time_unit,
            "objective": self.objective,
            "processors": [{"name": p, "cores": c, "control_flow": nat} for p, c, nat in
                           zip(self.processors, self.cores, self.native_control_flow,
                               strict=True)],
            "latency": mat(self.latency),
            "bandwidth": mat(self.bandwidth),
            "ops": ops,
            "edges": [{"src": self.ops[int(i)], "dst": self.ops[int(j)], "bytes": float(b)}
                      for (i, j), b in zip(self.edges, self.edge_bytes, strict=True)],
        }

    def summary(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for c in self.op_class:
            counts[c] = counts.get(c, 0) + 1
        return {"name": self.name, "ops": self.n_ops, "edges": len(self.edges),
                "processors": dict(zip(self.processors, self.cores, strict=True)),
                "classes": counts, "control_flow_ops": int(self.control_flow.sum()),
                "objective": self.objective_name, "time_unit": self.time_unit}


def _check_values(a: np.ndarray, ops: Sequence[str], procs: Sequence[str], src: str,
                  what: str, allow_inf: bool) -> None:
    bad = np.isnan(a) | (a < 0) | (np.isinf(a) if not allow_inf else False)
    if bad.any():
        i, p = (int(x) for x in np.argwhere(bad)[0])
        raise InputError(f"{src}: op {ops[i]!r} on {procs[p]!r}",
                         f"{what} {a[i, p]!r} is negative or not a number",
                         f"give a non-negative {what}" + (" (inf: cannot run)" if allow_inf
                                                         else ""))


def _raise_cycle_or_order(edges: np.ndarray, ops: Sequence[str], src: str) -> None:
    order = topological_order(len(ops), edges)
    if order is None:
        cyc = find_cycle(len(ops), edges)
        raise InputError(src, "the op graph has a cycle: " + " -> ".join(ops[i] for i in cyc),
                         "an op graph must be a DAG")
    k = int(np.flatnonzero(edges[:, 0] >= edges[:, 1])[0])
    raise InputError(f"{src}: edge {ops[edges[k, 0]]} -> {ops[edges[k, 1]]}",
                     "goes backwards", "list ops in topological order (the readers sort)")


def topological_order(n: int, edges: np.ndarray | Sequence[tuple[int, int]]) -> list[int] | None:
    """Kahn's algorithm, smallest index first; None when the graph has a cycle."""
    indeg = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        succ[int(a)].append(int(b))
        indeg[int(b)] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        i = heapq.heappop(ready)
        out.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(ready, j)
    return out if len(out) == n else None


def find_cycle(n: int, edges: np.ndarray | Sequence[tuple[int, int]]) -> list[int]:
    """One directed cycle (first node repeated at the end) of a graph that has one."""
    succ: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        succ[int(a)].append(int(b))
    color = [0] * n  # 0 new, 1 on stack, 2 done
    for root in range(n):
        if color[root]:
            continue
        stack = [(root, iter(succ[root]))]
        path = [root]
        color[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                color[node] = 2
            elif color[nxt] == 1:
                return path[path.index(nxt):] + [nxt]
            elif color[nxt] == 0:
                color[nxt] = 1
                stack.append((nxt, iter(succ[nxt])))
                path.append(nxt)
    return []


# ---------------------------------------------------------------------------------------
# Solution


@dataclass(frozen=True, eq=False)
class Solution:
    """Op → (processor, core) and a start time per op (end = start + time).

    ``op_names`` and ``processor_names`` are for display and JSON only.
    """

    proc: np.ndarray
    core: np.ndarray
    start: np.ndarray
    op_names: tuple[str, ...] = field(default=(), compare=False)
    processor_names: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        for name in ("proc", "core"):
            a = np.array(getattr(self, name), dtype=np.int64)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        s = np.array(self.start, dtype=float)
        s.setflags(write=False)
        object.__setattr__(self, "start", s)
        if not (len(self.proc) == len(self.core) == len(self.start)):
            raise InputError("solution", "proc, core and start need one entry per op")

    def end(self, instance: Instance) -> np.ndarray:
        return self.start + instance.time[np.arange(instance.n_ops), self.proc]

    def order(self) -> dict[tuple[int, int], list[int]]:
        """Ops of every (processor, core) in execution order."""
        out: dict[tuple[int, int], list[int]] = {}
        for i in np.lexsort((np.arange(len(self.start)), self.start)):
            out.setdefault((int(self.proc[i]), int(self.core[i])), []).append(int(i))
        return out

    def to_dict(self) -> dict[str, Any]:
        names = self.op_names or tuple(str(i) for i in range(len(self.proc)))
        pn = self.processor_names or tuple(str(p) for p in range(int(self.proc.max()) + 1))
        return {
            "assignment": {names[i]: pn[int(self.proc[i])] for i in range(len(names))},
            "core": {names[i]: int(self.core[i]) for i in range(len(names))},
            "start": {names[i]: float(self.start[i]) for i in range(len(names))},
            "order": {f"{pn[p]}:{c}": [names[i] for i in ops]
                      for (p, c), ops in sorted(self.order().items())},
        }

    @classmethod
    def from_dict(cls, instance: Instance, data: Mapping[str, Any]) -> Solution:
        """Read the form :meth:`to_dict` writes (op and processor names)."""
        try:
            proc = [instance.processors.index(data["assignment"][o]) for o in instance.ops]
            core = [int(data.get("core", {}).get(o, 0)) for o in instance.ops]
            start = [float(data["start"][o]) for o in instance.ops]
        except (KeyError, ValueError) as exc:
            raise InputError("solution", f"missing or unknown entry {exc}",
                             "give assignment and start for every op") from None
        return instance.solution(proc, core, start)


# ---------------------------------------------------------------------------------------
# Scheduling helpers shared by every method


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


def order_by_start(instance: Instance, start: Sequence[float]) -> list[int]:
    """The linear extension that takes the ready op with the earliest start first (ties by
    index): the order of a schedule, robust to solver tolerances."""
    return priority_order(instance, -np.asarray(start, dtype=float))


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


# ---------------------------------------------------------------------------------------
# Evaluation


def _makespan_energy(instance: Instance, solution: Solution) -> tuple[float, float]:
    idx = np.arange(instance.n_ops)
    end = solution.start + instance.time[idx, solution.proc]
    return float(end.max()), float(instance.energy[idx, solution.proc].sum())


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
    o = np.lexsort((start, res))
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
    makespan, energy = _makespan_energy(instance, solution)
    obj = instance.parsed_objective
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
