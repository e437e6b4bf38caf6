"""The op-placement instance: ops, processors, times, energies, transfers."""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from chipsched.errors import InputError, UnknownNameError
from chipsched.objective import Objective

from .objectives import objectives_for
from .schedule import single_processor_schedule
from .solution import Solution, makespan_energy

OP_CLASSES = ("tensor", "vector", "scalar", "task")


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
    objective: Objective | str = "makespan"
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
        object.__setattr__(self, "objective", objectives_for(self.time_unit).parse(
            self.objective))

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

    def with_objective(self, objective: str | Objective | None) -> Instance:
        """The same instance with another objective."""
        if objective is None:
            return self
        return replace(self, objective=objectives_for(self.time_unit).parse(objective))

    def op_index(self, name: str) -> int:
        try:
            return self.ops.index(name)
        except ValueError:
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
            v = self.objective(*makespan_energy(self, sol))
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
            "objective": self.objective.name,
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
                "objective": self.objective.name, "time_unit": self.time_unit}


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
