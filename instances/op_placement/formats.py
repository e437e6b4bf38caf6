"""File formats of op placement: the generic JSON form and the DAG-scheduling standards.

=====================  ======================================================================
format                 what
=====================  ======================================================================
``.json`` (ours)       ops with per-processor time (and energy), edges with bytes,
                       processors with cores, latency/bandwidth matrices; JSON Schema
                       :data:`SCHEMA` (``docs/schemas/op_placement.schema.json``)
``.stg``               Standard Task Graph Set (Kasahara lab): ``n``, then ``id time n_pred
                       preds…`` per task (tasks 0 and n+1 are dummies), ``#`` comments. No
                       processors: ``processors=N`` gives N identical ones without transfer
                       costs; ``ccr=c`` adds a transfer of ``c ×`` the producer's time to
                       every edge whose ends run on different processors
``.tgc``               task graph with communication costs, successor lists: ``n``, then
                       ``id time n_succ (succ cost)…`` per task; ``cost`` is paid when the
                       ends run on different processors; ``processors=N`` identical ones
HEFT CSV matrices      as in Topcuoglu et al. (2002) and the ``heft`` package: computation
                       costs (tasks × processors, ``inf`` = cannot run), task connectivity
                       (tasks × tasks data volume, 0 = no edge) and optionally the
                       processors' bandwidth (processors × processors, an optional
                       ``Startup`` row = each source processor's latency); without it,
                       bandwidth 1 and latency 0 (a transfer costs its data volume)
=====================  ======================================================================

Readers raise one-line :class:`~chipsched.errors.InputError` s naming the file and
line. Ops are sorted topologically (a cycle is reported by its ops).
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.problems.op_placement import (
    OP_CLASSES,
    Instance,
    find_cycle,
    topological_order,
)
from chipsched.schemas import validate

_NUM_OR_NULL = {"type": ["number", "null"], "minimum": 0}
_MATRIX = {"oneOf": [
    {"type": "number", "minimum": 0},
    {"type": "array", "items": {"type": "array", "items": _NUM_OR_NULL}},
]}

#: JSON Schema of the generic op-placement instance file.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://chipsched.dev/schemas/op_placement.schema.json",
    "title": "chipsched op_placement instance",
    "description": "A DAG of ops with per-processor execution times, edges with bytes, "
                   "processors with cores, and the interconnect between processors.",
    "type": "object",
    "additionalProperties": False,
    "required": ["processors", "ops"],
    "properties": {
        "name": {"type": "string"},
        "time_unit": {"type": "string", "description": "unit of every time (default s)"},
        "objective": {"type": "string",
                      "description": "makespan (default), energy or weighted:WT,WE"},
        "processors": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "cores": {"type": "integer", "minimum": 1, "maximum": 1024,
                          "description": "identical cores sharing the processor's memory "
                                         "(default 1)"},
                "control_flow": {"type": "boolean",
                                 "description": "runs control-flow ops natively (a host)"},
            }}},
        "latency": {**_MATRIX, "description": "time units per transfer between processors: "
                    "one number, or a matrix (diagonal ignored); default 0"},
        "bandwidth": {**_MATRIX, "description": "bytes per time unit between processors: "
                      "one number, or a matrix (null or omitted: unlimited)"},
        "ops": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["name", "time"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "class": {"enum": list(OP_CLASSES)},
                "kind": {"type": "string"},
                "control_flow": {"type": "boolean"},
                "time": {"type": "object", "additionalProperties": {
                    "type": ["number", "null"]},
                    "description": "processor name -> time (null: cannot run); every "
                                   "processor must be listed"},
                "energy": {"type": "object", "additionalProperties": {"type": "number"}},
                "roundtrip": {"type": "object", "additionalProperties": {"type": "number"},
                              "description": "part of time that is a control-flow round "
                                             "trip to a host"},
                "work": {"type": "number", "minimum": 0},
            }}},
        "edges": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["src", "dst"],
            "properties": {
                "src": {"type": "string"}, "dst": {"type": "string"},
                "bytes": {"type": "number", "description": "data moved (default 0)"},
            }}},
    },
}


# ---------------------------------------------------------------------------------------
# helpers


def _sorted_instance(name: str, ops: list[str], time: np.ndarray, edges: list[tuple[int, int]],
                     ebytes: list[float], where: str, **kw: Any) -> Instance:
    """Sort ops topologically (stable) and build the Instance; cycles name their ops."""
    n = len(ops)
    order = topological_order(n, edges)
    if order is None:
        cyc = find_cycle(n, edges)
        raise InputError(where, "the task graph has a cycle: " + " -> ".join(ops[i] for i in cyc),
                         "a task graph must be a DAG")
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    perm = np.array(order, dtype=np.int64)
    new_edges = [(int(pos[a]), int(pos[b])) for a, b in edges]
    for key in ("energy", "roundtrip"):
        if kw.get(key) is not None:
            kw[key] = np.asarray(kw[key])[perm]
    for key in ("op_class", "op_kind"):
        if kw.get(key) is not None:
            kw[key] = tuple(kw[key][i] for i in order)
    for key in ("control_flow", "work"):
        if kw.get(key) is not None:
            kw[key] = np.asarray(kw[key])[perm]
    return Instance(name=name, ops=tuple(ops[i] for i in order), time=np.asarray(time)[perm],
                    edges=np.array(new_edges, dtype=np.int64).reshape(-1, 2),
                    edge_bytes=np.array(ebytes, dtype=float), **kw)


#: Most identical processors ``--processors`` gives a task graph (the models' arrays grow
#: with tasks × processors²).
MAX_PROCESSORS = 1024
#: Largest integer a task-graph file may hold (times, counts, ids): exact in a float.
MAX_FILE_INT = 2**53


def identical_processors(n: int) -> dict[str, Any]:
    """Keyword arguments for ``n`` identical one-core processors p0..p{n-1}."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or not \
            1 <= n <= MAX_PROCESSORS:
        raise InputError("--processors", f"must be an integer in 1..{MAX_PROCESSORS}, got "
                         f"{n!r}", "give the number of identical processors, e.g. 4")
    return {"processors": tuple(f"p{k}" for k in range(n)), "cores": (1,) * n}


def _read_text(path: str | os.PathLike[str]) -> tuple[Path, str]:
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "file not found", "check the path")
    try:
        return p, p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(p), f"cannot read: {exc.__class__.__name__}") from None


def _int_lines(p: Path, text: str) -> list[tuple[int, list[int]]]:
    """(line number, integers) of every non-empty line, comments after '#' dropped."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        vals = []
        for tok in body.split():
            try:
                v = int(tok)
            except ValueError:
                raise InputError(f"{p}:{n}", f"expected integers, got {tok[:20]!r}",
                                 "fix or remove the line") from None
            if abs(v) > MAX_FILE_INT:
                raise InputError(f"{p}:{n}", f"implausibly large integer ({len(tok)} "
                                 "digits)", "values must stay below 2^53") from None
            vals.append(v)
        out.append((n, vals))
    return out


# ---------------------------------------------------------------------------------------
# STG


def read_stg(path: str | os.PathLike[str], processors: int | None, ccr: float = 0.0,
             objective: str | None = None, max_tasks: int | None = None) -> Instance:
    """A Standard Task Graph Set file on ``processors`` identical processors.

    The entry and exit dummies (tasks 0 and n+1) are dropped when their time is 0.
    ``ccr`` > 0 adds transfer costs: ``ccr ×`` the producer's time per edge between
    different processors. ``max_tasks`` keeps tasks 1..max_tasks only (the induced
    sub-graph; STG numbers tasks topologically), for size sweeps.
    """
    p, text = _read_text(path)
    if processors is None:
        raise InputError(f"{p}", "an STG file names no processors",
                         "give --processors N (N identical processors)")
    kw = identical_processors(processors)
    if not (ccr >= 0 and math.isfinite(ccr)):
        raise InputError("ccr", f"must be a non-negative number, got {ccr!r}")
    lines = _int_lines(p, text)
    if not lines or len(lines[0][1]) != 1 or lines[0][1][0] < 1:
        ln = lines[0][0] if lines else 1
        raise InputError(f"{p}:{ln}", "the first line must be the task count n",
                         "this does not look like an STG file")
    n = lines[0][1][0]
    tasks = lines[1:]
    if len(tasks) < n + 2:
        raise InputError(f"{p}:{tasks[-1][0] if tasks else lines[0][0]}",
                         f"the file ends after {len(tasks)} of {n + 2} task lines")
    times: dict[int, int] = {}
    preds: dict[int, list[int]] = {}
    for k, (ln, vals) in enumerate(tasks[: n + 2]):
        if len(vals) < 3:
            raise InputError(f"{p}:{ln}", "expected 'id time n_pred preds…'")
        tid, t, npred, pl = vals[0], vals[1], vals[2], vals[3:]
        if tid != k:
            raise InputError(f"{p}:{ln}", f"task id {tid}, expected {k}",
                             "tasks must be numbered 0..n+1 in order")
        if t < 0:
            raise InputError(f"{p}:{ln}", f"task {tid} has negative time {t}")
        if npred < 0 or len(pl) != npred:
            raise InputError(f"{p}:{ln}", f"task {tid} announces {npred} predecessors but "
                             f"lists {len(pl)}")
        for q in pl:
            if not 0 <= q <= n + 1:
                raise InputError(f"{p}:{ln}", f"task {tid}: predecessor {q} does not exist")
        times[tid] = t
        preds[tid] = pl
    drop = {k for k in (0, n + 1) if times[k] == 0}
    keep = [k for k in range(n + 2) if k not in drop]
    if max_tasks is not None:
        keep = [k for k in keep if k <= max_tasks]
    pos = {k: i for i, k in enumerate(keep)}
    names = [f"T{k}" for k in keep]
    edges, ebytes = [], []
    for k in keep:
        for q in dict.fromkeys(preds[k]):
            if q in pos:
                edges.append((pos[q], pos[k]))
                ebytes.append(ccr * times[q])
    w = np.array([times[k] for k in keep], dtype=float)
    P = len(kw["processors"])
    return _sorted_instance(
        p.stem if max_tasks is None else f"{p.stem}[:{max_tasks}]", names,
        np.repeat(w[:, None], P, axis=1), edges, ebytes, str(p),
        op_class=("task",) * len(keep), latency=0.0, bandwidth=1.0 if ccr else math.inf,
        time_unit="u.t.", objective=objective or "makespan",
        meta={"source": str(p), "format": "stg", "ccr": ccr}, **kw)


# ---------------------------------------------------------------------------------------
# task graph with communication costs (successor lists)


def read_tgc(path: str | os.PathLike[str], processors: int | None,
             objective: str | None = None) -> Instance:
    """A task graph with communication costs: ``n``, then per task ``id time n_succ``
    followed by ``succ cost`` pairs, on ``processors`` identical processors."""
    p, text = _read_text(path)
    if processors is None:
        raise InputError(f"{p}", "a .tgc task graph names no processors",
                         "give --processors N (N identical processors)")
    kw = identical_processors(processors)
    # costs may be fractional: parse numbers, not integers
    lines: list[tuple[int, list[str]]] = []
    for n_, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].split()
        if body:
            lines.append((n_, body))
    first = lines[0][1][0] if lines and len(lines[0][1]) == 1 else ""
    if not (first.isascii() and first.isdigit()) or int(first) > MAX_FILE_INT:
        raise InputError(f"{p}:{lines[0][0] if lines else 1}",
                         "the first line must be the task count n",
                         "put the number of tasks alone on the first line")
    n = int(first)
    if len(lines) - 1 != n:
        raise InputError(f"{p}:{lines[-1][0]}", f"expected {n} task lines, found "
                         f"{len(lines) - 1}")
    ids: dict[int, int] = {}
    rows = []
    for ln, toks in lines[1:]:
        try:
            tid, t, ns = int(toks[0]), float(toks[1]), int(toks[2])
            if not (math.isfinite(t) and max(abs(tid), abs(ns), t) <= MAX_FILE_INT):
                raise ValueError
        except (ValueError, IndexError, OverflowError):
            raise InputError(f"{p}:{ln}", "expected 'id time n_succ (succ cost)…' with "
                             "finite values below 2^53", "fix the line") from None
        if tid in ids:
            raise InputError(f"{p}:{ln}", f"task {tid} defined twice")
        if not (t >= 0 and math.isfinite(t)):
            raise InputError(f"{p}:{ln}", f"task {tid} has negative or invalid time {toks[1]}")
        if ns < 0 or len(toks) != 3 + 2 * ns:
            raise InputError(f"{p}:{ln}", f"task {tid} announces {ns} successors but gives "
                             f"{(len(toks) - 3) / 2:g} (succ cost) pairs")
        ids[tid] = len(rows)
        rows.append((ln, tid, t, toks[3:]))
    edges, ebytes = [], []
    for ln, tid, _, rest in rows:
        for k in range(0, len(rest), 2):
            try:
                s, c = int(rest[k]), float(rest[k + 1])
            except ValueError:
                raise InputError(f"{p}:{ln}", f"task {tid}: bad successor pair "
                                 f"{rest[k]} {rest[k + 1]}") from None
            if s not in ids:
                raise InputError(f"{p}:{ln}", f"task {tid}: successor {s} does not exist")
            if not (c >= 0 and math.isfinite(c)):
                raise InputError(f"{p}:{ln}", f"task {tid}: negative communication cost {c}")
            edges.append((ids[tid], ids[s]))
            ebytes.append(c)
    if len(set(edges)) != len(edges):
        raise InputError(str(p), "an edge is listed twice")
    w = np.array([r[2] for r in rows], dtype=float)
    P = len(kw["processors"])
    return _sorted_instance(
        p.stem, [f"T{r[1]}" for r in rows], np.repeat(w[:, None], P, axis=1), edges, ebytes,
        str(p), op_class=("task",) * len(rows), latency=0.0, bandwidth=1.0, time_unit="u.t.",
        objective=objective or "makespan", meta={"source": str(p), "format": "tgc"}, **kw)


def write_tgc(instance: Instance, path: str | os.PathLike[str]) -> Path:
    """Write a task graph in the ``.tgc`` form (processor 0's times; the transfer cost of
    an edge is its time between processors 0 and 1, or its bytes on one processor)."""
    from chipsched.files import atomic_write

    P = instance.n_processors

    def cost(k: int) -> float:
        return float(instance.transfer[k, 0, 1]) if P > 1 else float(instance.edge_bytes[k])

    def write(fh: Any) -> None:
        fh.write(f"# {instance.name}: id time n_succ (succ cost)...\n{instance.n_ops}\n")
        for i in range(instance.n_ops):
            s = instance.succs[i]
            pairs = " ".join(f"{j} {cost(k):.12g}" for j, k in s)
            fh.write(f"{i} {instance.time[i, 0]:.12g} {len(s)} {pairs}".rstrip() + "\n")

    return atomic_write(path, write)


# ---------------------------------------------------------------------------------------
# HEFT CSV matrices


def _read_csv(path: Path) -> list[tuple[int, list[str]]]:
    if not path.is_file():
        raise InputError(str(path), "file not found", "check the path")
    with path.open(newline="", encoding="utf-8") as fh:
        return [(n, [c.strip() for c in row]) for n, row in enumerate(csv.reader(fh), 1)
                if row and "".join(row).strip()]


def _num(path: Path, ln: int, x: str, what: str, allow_inf: bool = False) -> float:
    try:
        v = float(x)
    except ValueError:
        raise InputError(f"{path}:{ln}", f"{what} {x!r} is not a number") from None
    if math.isnan(v) or v < 0 or (math.isinf(v) and not allow_inf):
        raise InputError(f"{path}:{ln}", f"{what} {x!r} must be non-negative" +
                         (" (inf: cannot run)" if allow_inf else ""))
    return v


def heft_csv_paths(spec: str) -> tuple[Path, Path, Path | None]:
    """The computation, connectivity and (optional) bandwidth files of a spec:
    ``comp.csv,conn.csv[,bw.csv]`` or ``X_task_exe_time.csv`` (siblings
    ``X_task_connectivity.csv`` and ``X_resource_BW.csv`` / ``X_resource_BW_startup.csv``)."""
    if "," in spec:
        parts = [Path(s.strip()) for s in spec.split(",")]
        if len(parts) not in (2, 3):
            raise InputError(spec, "give 2 or 3 CSV files", "comp.csv,conn.csv[,bw.csv]")
        return parts[0], parts[1], parts[2] if len(parts) == 3 else None
    p = Path(spec)
    suffix = "_task_exe_time.csv"
    if not p.name.endswith(suffix):
        raise InputError(spec, "a single CSV file must be a HEFT computation matrix "
                         "named *_task_exe_time.csv",
                         "or give comp.csv,conn.csv[,bw.csv]; a function library CSV goes to "
                         "library=")
    base = p.name[: -len(suffix)]
    conn = p.with_name(base + "_task_connectivity.csv")
    bw = None
    for cand in (base + "_resource_BW_startup.csv", base + "_resource_BW.csv"):
        if p.with_name(cand).is_file():
            bw = p.with_name(cand)
            break
    return p, conn, bw


def read_heft_csv(comp: str | os.PathLike[str], conn: str | os.PathLike[str],
                  bw: str | os.PathLike[str] | None = None, objective: str | None = None
                  ) -> Instance:
    """HEFT-style matrices (see the module docstring). A transfer of data ``d`` from
    processor m to n costs ``startup[m] + d / bandwidth[m][n]`` (Topcuoglu et al. 2002)."""
    comp, conn = Path(comp), Path(conn)
    rows = _read_csv(comp)
    if len(rows) < 2:
        raise InputError(str(comp), "needs a header row of processors and one row per task")
    procs = rows[0][1][1:]
    if not procs or any(not x for x in procs) or len(set(procs)) != len(procs):
        raise InputError(f"{comp}:{rows[0][0]}", "the header must name distinct processors "
                         "after the first cell")
    tasks, times = [], []
    for ln, r in rows[1:]:
        if len(r) != len(procs) + 1:
            raise InputError(f"{comp}:{ln}", f"expected a task name and {len(procs)} costs, "
                             f"got {len(r)} fields")
        tasks.append(r[0])
        times.append([_num(comp, ln, x, f"cost of {r[0]} on {procs[k]}", allow_inf=True)
                      for k, x in enumerate(r[1:])])
    if len(set(tasks)) != len(tasks):
        raise InputError(str(comp), "task names must be unique")
    idx = {t: i for i, t in enumerate(tasks)}
    crow = _read_csv(conn)
    if not crow:
        raise InputError(str(conn), "is empty")
    cols = crow[0][1][1:]
    if sorted(cols) != sorted(tasks):
        raise InputError(f"{conn}:{crow[0][0]}", "the header must list the same tasks as "
                         f"{comp.name}")
    edges, ebytes = [], []
    seen_rows = set()
    for ln, r in crow[1:]:
        if len(r) != len(cols) + 1 or r[0] not in idx:
            raise InputError(f"{conn}:{ln}", "expected a known task name and "
                             f"{len(cols)} data volumes")
        seen_rows.add(r[0])
        for c, x in zip(cols, r[1:], strict=True):
            v = _num(conn, ln, x, f"data {r[0]} -> {c}")
            if v > 0:
                if c == r[0]:
                    raise InputError(f"{conn}:{ln}", f"task {c} depends on itself")
                edges.append((idx[r[0]], idx[c]))
                ebytes.append(v)
    if seen_rows != set(tasks):
        raise InputError(str(conn), f"missing rows for {sorted(set(tasks) - seen_rows)}")
    P = len(procs)
    lat = np.zeros((P, P))
    band = np.ones((P, P))
    if bw is not None:
        bw = Path(bw)
        brow = _read_csv(bw)
        if not brow or brow[0][1][1:] != procs:
            raise InputError(f"{bw}:1", f"the header must list the processors of {comp.name} "
                             "in the same order")
        body = [(ln, r) for ln, r in brow[1:] if r[0].lower() != "startup"]
        start = [(ln, r) for ln, r in brow[1:] if r[0].lower() == "startup"]
        if len(body) != P:
            raise InputError(str(bw), f"expected {P} bandwidth rows, found {len(body)}")
        for k, (ln, r) in enumerate(body):
            if len(r) != P + 1 or r[0] != procs[k]:
                raise InputError(f"{bw}:{ln}", f"expected row {procs[k]} with {P} bandwidths")
            for m, x in enumerate(r[1:]):
                if m != k:
                    v = _num(bw, ln, x, f"bandwidth {procs[k]} -> {procs[m]}", allow_inf=True)
                    if v == 0:
                        raise InputError(f"{bw}:{ln}", f"bandwidth {procs[k]} -> {procs[m]} "
                                         "is 0", "give a positive bandwidth")
                    band[k, m] = v
        if start:
            ln, r = start[0]
            if len(r) != P + 1:
                raise InputError(f"{bw}:{ln}", f"the Startup row needs {P} values")
            for k, x in enumerate(r[1:]):
                lat[k, :] = _num(bw, ln, x, f"startup of {procs[k]}")
    return _sorted_instance(
        comp.stem.removesuffix("_task_exe_time"), tasks, np.array(times, dtype=float), edges,
        ebytes, str(comp), processors=tuple(procs), cores=(1,) * P,
        op_class=("task",) * len(tasks), latency=lat, bandwidth=band, time_unit="u.t.",
        objective=objective or "makespan",
        meta={"source": ",".join(str(x) for x in (comp, conn, bw) if x), "format": "heft-csv"})


def write_heft_csv(instance: Instance, base: str | os.PathLike[str]) -> tuple[Path, Path, Path]:
    """Write ``base_task_exe_time.csv``, ``base_task_connectivity.csv`` and
    ``base_resource_BW_startup.csv`` (the startup row is processor m's latency to the
    next processor; the format has one startup per source processor)."""
    from chipsched.files import atomic_write

    base = Path(base)
    n, P = instance.n_ops, instance.n_processors
    comp = base.with_name(base.name + "_task_exe_time.csv")
    conn = base.with_name(base.name + "_task_connectivity.csv")
    bwp = base.with_name(base.name + "_resource_BW_startup.csv")

    def w_comp(fh: Any) -> None:
        w = csv.writer(fh)
        w.writerow(["TP", *instance.processors])
        for i in range(n):
            w.writerow([instance.ops[i], *(f"{x:.12g}" for x in instance.time[i])])

    def w_conn(fh: Any) -> None:
        m = np.zeros((n, n))
        for (a, b), v in zip(instance.edges, instance.edge_bytes, strict=True):
            m[a, b] = v
        w = csv.writer(fh)
        w.writerow(["T", *instance.ops])
        for i in range(n):
            w.writerow([instance.ops[i], *(f"{x:.12g}" for x in m[i])])

    def w_bw(fh: Any) -> None:
        w = csv.writer(fh)
        w.writerow(["P", *instance.processors])
        for k in range(P):
            row = ["0" if k == m else f"{instance.bandwidth[k, m]:.12g}" for m in range(P)]
            w.writerow([instance.processors[k], *row])
        w.writerow(["Startup", *(f"{instance.latency[k, (k + 1) % P]:.12g}" if P > 1 else "0"
                                 for k in range(P))])

    return atomic_write(comp, w_comp), atomic_write(conn, w_conn), atomic_write(bwp, w_bw)


# ---------------------------------------------------------------------------------------
# generic JSON


def _matrix(v: Any, P: int, default: float, where: str) -> np.ndarray:
    if v is None:
        m = np.full((P, P), default)
    elif isinstance(v, (int, float)):
        m = np.full((P, P), float(v))
    else:
        if len(v) != P or any(len(r) != P for r in v):
            raise InputError(where, f"must be a number or a {P}×{P} matrix")
        m = np.array([[default if x is None else float(x) for x in r] for r in v])
    np.fill_diagonal(m, default)
    return m


def instance_from_dict(data: Mapping[str, Any], source: str = "instance",
                       objective: str | None = None) -> Instance:
    """Build from the generic JSON form (validated against :data:`SCHEMA` first)."""
    validate(data, SCHEMA, source)
    procs = [p["name"] for p in data["processors"]]
    if len(set(procs)) != len(procs):
        raise InputError(f"{source}.processors", "names must be unique")
    P = len(procs)
    ops = [o["name"] for o in data["ops"]]
    if len(set(ops)) != len(ops):
        dup = next(o for o in ops if ops.count(o) > 1)
        raise InputError(f"{source}: op {dup!r}", "defined twice")
    idx = {o: i for i, o in enumerate(ops)}
    n = len(ops)
    time = np.zeros((n, P))
    energy = np.zeros((n, P))
    rt = np.zeros((n, P))
    for i, o in enumerate(data["ops"]):
        for key, arr, required in (("time", time, True), ("energy", energy, False),
                                   ("roundtrip", rt, False)):
            table = o.get(key)
            if table is None:
                continue
            extra = set(table) - set(procs)
            if extra:
                raise InputError(f"{source}: op {o['name']!r}.{key}",
                                 f"unknown processor {sorted(extra)[0]!r}",
                                 f"processors: {', '.join(procs)}")
            for k, pn in enumerate(procs):
                if pn not in table:
                    if required:
                        raise InputError(f"{source}: op {o['name']!r}.time",
                                         f"processor {pn!r} missing from the cost table",
                                         "give a time for every processor (null: cannot run)")
                    continue
                v = table[pn]
                try:
                    arr[i, k] = math.inf if v is None else float(v)
                except OverflowError:  # an integer beyond a float (1e400)
                    raise InputError(f"{source}: op {o['name']!r}.{key}.{pn}",
                                     "implausibly large", "give seconds (or joules) as "
                                     "ordinary numbers") from None
    edges, ebytes = [], []
    for e in data.get("edges", []):
        for end in ("src", "dst"):
            if e[end] not in idx:
                raise InputError(f"{source}: edge {e['src']} -> {e['dst']}",
                                 f"unknown op {e[end]!r}")
        edges.append((idx[e["src"]], idx[e["dst"]]))
        ebytes.append(float(e.get("bytes", 0.0)))
    cf = [bool(o.get("control_flow", False)) for o in data["ops"]]
    return _sorted_instance(
        data.get("name", Path(source).stem), ops, time, edges, ebytes, source,
        processors=tuple(procs), cores=tuple(int(p.get("cores", 1)) for p in data["processors"]),
        native_control_flow=tuple(bool(p.get("control_flow", False))
                                  for p in data["processors"]),
        op_class=tuple(o.get("class", "task") for o in data["ops"]),
        op_kind=tuple(o.get("kind", o.get("class", "task")) for o in data["ops"]),
        control_flow=np.array(cf), energy=energy, roundtrip=rt,
        work=np.array([float(o.get("work", 0.0)) for o in data["ops"]]),
        latency=_matrix(data.get("latency"), P, 0.0, f"{source}.latency"),
        bandwidth=_matrix(data.get("bandwidth"), P, math.inf, f"{source}.bandwidth"),
        time_unit=data.get("time_unit", "s"),
        objective=objective or data.get("objective") or "makespan",
        meta={"source": source, "format": "json"})


def read_json(path: str | os.PathLike[str], objective: str | None = None) -> Instance:
    from chipsched.files import read_data

    return instance_from_dict(read_data(path), str(path), objective)


def write_json(instance: Instance, path: str | os.PathLike[str]) -> Path:
    from chipsched.files import atomic_write

    return atomic_write(path, lambda fh: json.dump(instance.to_dict(), fh, indent=1))


def is_instance_json(data: Any) -> bool:
    """True for the op-placement JSON form (it has ``ops``), False for a network file."""
    return isinstance(data, Mapping) and "ops" in data


def schema_json() -> str:
    return json.dumps(SCHEMA, indent=2) + "\n"
