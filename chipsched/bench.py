"""``chipsched bench``: many instances × methods × seeds, in parallel, into SQLite + CSV.

A suite is a YAML/JSON file (or the name of a built-in one in ``chipsched/suites``)::

    name: tile_groups-small
    decision: tile_groups
    chip: edge-4x4                  # default chip (optional: the decision's own default)
    options: {time_limit: 30}       # SolveOptions for every run
    instances:                      # an instance spec, or a mapping with per-instance options
      - tiny
      - {instance: resnet50, chip: cloud-12x12, batch: 8, objective: ed2}
    methods:                        # default: every method of the decision
      - sa
      - {method: sa, params: {beta: 10}}   # a variant: recorded as method "sa[beta=10]"
      - ls
    seeds: 3                        # randomized methods run with seeds 0..seeds-1

A suite may instead hold ``runs: [suite, suite, …]`` to cover several decisions.
Runs go to a process pool (``workers``) or, given ``scheduler`` (a Dask address), to a
Dask cluster. A method that does not apply to an instance is recorded as ``skipped``
with the reason, a run that fails with status ``error`` and its message; the sweep goes
on. Exact and bound methods without a time limit in the suite's options get
``chipsched.api.DEFAULT_EXACT_TIME_LIMIT`` seconds. Results: SQLite (table ``runs``,
one row per run, appended), CSV, a
plot of each method's gap to the best bound and of wall time against instance size,
and an HTML report linking them.
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from chipsched.errors import ChipschedError, InputError, UnknownNameError
from chipsched.units import unit_scale

#: Columns of the ``runs`` table, in order (also the CSV header).
COLUMNS = ("bench_id", "suite", "decision", "instance", "chip", "instance_options",
           "size", "size_unit", "method", "kind", "space", "seed", "status", "objective",
           "bound", "gap", "objective_name", "objective_unit", "wall_s", "message", "started",
           "chip_given")

_SOLVE_OPTIONS = ("time_limit", "threads", "mip_gap", "milp_solver", "auto_warm_start")


@dataclass(frozen=True)
class Job:
    """One run: a method with a seed on one instance."""

    suite: str
    decision: str
    instance: str
    chip: str | None
    instance_options: tuple[tuple[str, Any], ...]
    method: str
    seed: int
    options: tuple[tuple[str, Any], ...] = ()
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def method_label(self) -> str:
        """The method with its parameters, e.g. ``sa[beta=10]`` (the ``method`` column)."""
        ps = ",".join(f"{k}={v}" for k, v in self.params)
        return f"{self.method}[{ps}]" if ps else self.method

    @property
    def label(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in self.instance_options)
        return (f"{self.decision}:{self.instance}{'[' + opts + ']' if opts else ''}/"
                f"{self.method_label}")


@dataclass(frozen=True)
class Suite:
    name: str
    decision: str
    instances: tuple[tuple[str, str | None, tuple[tuple[str, Any], ...]], ...]
    #: (method, its parameters) pairs; None = every method of the decision
    methods: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] | None = None
    seeds: int = 1
    options: tuple[tuple[str, Any], ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def builtin_suites() -> list[str]:
    """Names of the suites shipped in ``chipsched/suites``."""
    folder = resources.files("chipsched").joinpath("suites")
    if not folder.is_dir():
        return []
    names = (p.name for p in folder.iterdir())
    return sorted(n.rsplit(".", 1)[0] for n in names if n.endswith((".yaml", ".yml")))


def load_suites(spec: str | os.PathLike[str] | Mapping[str, Any],
                _within: tuple[str, ...] = ()) -> list[Suite]:
    """Suites from a file, a built-in name, or a mapping (the file form)."""
    from chipsched.files import read_data

    if isinstance(spec, Mapping):
        data, source = spec, "suite"
    else:
        s = str(spec)
        key = str(Path(s).resolve()) if Path(s).suffix else s
        if key in _within:
            raise InputError(f"{_within[-1]}.runs", f"includes {s}, which includes it back",
                             "a runs: list names other suites, never itself")
        _within = (*_within, key)
        if Path(s).suffix.lower() in (".yaml", ".yml", ".json"):
            data, source = read_data(s), s
        else:
            if s not in builtin_suites():
                raise UnknownNameError("bench suite", s, builtin_suites())
            path = resources.files("chipsched").joinpath("suites", f"{s}.yaml")
            data, source = read_data(str(path)), f"suite {s}"
    if not isinstance(data, Mapping):
        raise InputError(source, "a suite must be a mapping")
    if "name" not in data:
        raise InputError(f"{source}.name", "is required",
                         "give the suite a name, e.g. name: my-sweep")
    if "runs" in data:
        runs = data["runs"]
        if not isinstance(runs, list) or not runs:
            raise InputError(f"{source}.runs", "must be a non-empty list of suites")
        out: list[Suite] = []
        for i, sub in enumerate(runs):
            if isinstance(sub, Mapping):
                out.append(_suite({"name": data.get("name", source), **sub},
                                  f"{source}.runs[{i}]"))
            elif isinstance(sub, str):  # the name or file of another suite
                out += load_suites(sub, _within)
            else:
                raise InputError(f"{source}.runs[{i}]", "must be a suite mapping, a suite "
                                 "file or a built-in suite name")
        return out
    return [_suite(data, source)]


def suite_title(spec: str | os.PathLike[str] | Mapping[str, Any], suites: Sequence[Suite]
                ) -> str:
    """The name of the suite file or mapping itself (a ``runs:`` file's own name, not its
    first run's)."""
    if isinstance(spec, Mapping):
        return str(spec.get("name") or suites[0].name)
    s = str(spec)
    if Path(s).suffix.lower() in (".yaml", ".yml", ".json"):
        from chipsched.files import read_data

        data = read_data(s)
        return str(data.get("name") or Path(s).stem) if isinstance(data, Mapping) else s
    return s


def _suite(data: Mapping[str, Any], source: str) -> Suite:
    allowed = {"name", "decision", "chip", "options", "instances", "methods", "seeds",
               "description"}
    extra = set(data) - allowed
    if extra:
        raise InputError(f"{source}.{sorted(extra)[0]}", "unknown field",
                         f"allowed: {', '.join(sorted(allowed))}")
    for key in ("decision", "instances"):
        if key not in data:
            raise InputError(f"{source}.{key}", "is required")
    insts = data["instances"]
    if not isinstance(insts, list) or not insts:
        raise InputError(f"{source}.instances", "must be a non-empty list")
    default_chip = data.get("chip")
    parsed = []
    for i, item in enumerate(insts):
        if isinstance(item, str):
            parsed.append((item, default_chip, ()))
        elif isinstance(item, Mapping) and "instance" in item:
            opts = tuple(sorted((k, v) for k, v in item.items() if k not in ("instance", "chip")))
            parsed.append((str(item["instance"]), item.get("chip", default_chip), opts))
        else:
            raise InputError(f"{source}.instances[{i}]",
                             "must be a name or a mapping with 'instance'")
    seeds = data.get("seeds", 1)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise InputError(f"{source}.seeds", f"must be a positive integer, got {seeds!r}")
    options = data.get("options", {}) or {}
    if not isinstance(options, Mapping):
        raise InputError(f"{source}.options", f"must be a mapping, got {options!r}",
                         "e.g. options: {time_limit: 10}")
    bad = set(options) - set(_SOLVE_OPTIONS)
    if bad:
        raise InputError(f"{source}.options.{sorted(bad)[0]}", "unknown option",
                         f"allowed: {', '.join(_SOLVE_OPTIONS)}")
    methods = data.get("methods")
    if methods is not None and not isinstance(methods, list):
        raise InputError(f"{source}.methods", "must be a list of method names or "
                         "{method: NAME, params: {...}} mappings")
    parsed_methods = []
    for i, m in enumerate(methods or []):
        if isinstance(m, str):
            parsed_methods.append((m, ()))
        elif isinstance(m, Mapping) and "method" in m and set(m) <= {"method", "params"}:
            ps = m.get("params") or {}
            if not isinstance(ps, Mapping):
                raise InputError(f"{source}.methods[{i}].params", "must be a mapping")
            parsed_methods.append((str(m["method"]), tuple(sorted(ps.items()))))
        else:
            raise InputError(f"{source}.methods[{i}]", "must be a method name or a mapping "
                             "with 'method' (and optional 'params')")
    twice = [m for i, m in enumerate(parsed_methods) if m in parsed_methods[:i]]
    if twice:
        raise InputError(f"{source}.methods", f"lists {twice[0][0]!r} twice"
                         + (" with the same params" if twice[0][1] else ""),
                         "give each method (and parameter set) once; seeds: N repeats "
                         "randomized methods")
    return Suite(name=str(data.get("name", source)), decision=str(data["decision"]),
                 instances=tuple(parsed),
                 methods=tuple(parsed_methods) if parsed_methods else None,
                 seeds=seeds, options=tuple(sorted(options.items())))


def expand(suites: Iterable[Suite], registry_: Any = None) -> list[Job]:
    """The jobs of the suites, validated against the registry and the methods' declared
    parameters (fails fast on a typo or a bad value)."""
    from chipsched.api import check_params, make_instance, registry
    from chipsched.solvers.options import SolveOptions

    reg = registry_ or registry()
    jobs: list[Job] = []
    for s in suites:
        dec = reg.decision(s.decision)
        try:  # solver options and every instance are checked before anything runs
            SolveOptions(**dict(s.options))
            for inst, chip, iopts in dict.fromkeys(s.instances):
                make_instance(s.decision, inst, chip, registry_=reg, **dict(iopts))
        except InputError as exc:
            raise InputError(f"suite {s.name}", str(exc)) from None
        variants = list(s.methods) if s.methods else [(n, ()) for n in reg.methods(s.decision)]
        for n, ps in variants:
            m = dec.method(n)  # an unknown name: UnknownNameError with a suggestion
            try:
                check_params(dec, m, dict(ps))
            except InputError as exc:
                raise InputError(f"suite {s.name}: {n}", str(exc)) from None
        for inst, chip, iopts in s.instances:
            for n, ps in variants:
                seeds = range(s.seeds) if reg.get(s.decision, n).randomized else range(1)
                for seed in seeds:
                    jobs.append(Job(s.name, s.decision, inst, chip, iopts, n, seed, s.options,
                                    ps))
    return jobs


def run_job(job: Job, registry_: Any = None) -> dict[str, Any]:
    """Run one job and return its row; never raises for a failing method or instance."""
    from chipsched.api import (
        DEFAULT_EXACT_TIME_LIMIT,
        NotApplicable,
        crash_message,
        make_instance,
        registry,
        solve,
    )
    from chipsched.solvers.options import SolveOptions

    reg = registry_ or registry()
    row: dict[str, Any] = {
        "suite": job.suite, "decision": job.decision, "instance": job.instance,
        "chip": job.chip or "", "chip_given": job.chip or "",
        "instance_options": json.dumps(dict(job.instance_options)),
        "method": job.method_label, "kind": "", "space": "", "seed": job.seed, "size": None,
        "size_unit": "", "objective_name": "", "objective_unit": "",
        "status": "error", "objective": None, "bound": None, "gap": None, "wall_s": None,
        "message": "", "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    t0 = time.perf_counter()
    try:
        m = reg.get(job.decision, job.method)
        row["kind"], row["space"] = m.kind, m.space
        problem = reg.decision(job.decision).problem
        inst = make_instance(job.decision, job.instance, job.chip, registry_=reg,
                             **dict(job.instance_options))
        # the chip the run used, resolved: the decision's default when the suite names
        # none, and the core array actually used when the instance sized its own
        chip = job.chip or str(getattr(problem, "default_chip", "") or "")
        summary = inst.summary() if hasattr(inst, "summary") else {}
        if isinstance(summary, Mapping) and summary.get("mesh"):
            chip = f"{chip} [mesh {summary['mesh']}]"
        row["chip"] = chip
        row["size"] = problem.instance_size(inst)
        row["size_unit"] = problem.size_unit
        obj = problem.objective(inst)
        row["objective_name"], row["objective_unit"] = obj.name, obj.unit
        opts = SolveOptions(seed=job.seed, **dict(job.options))
        if m.limited_by_default and opts.time_limit is None:
            opts = opts.replace(time_limit=DEFAULT_EXACT_TIME_LIMIT)
        res = solve(job.decision, inst, job.method, options=opts, registry_=reg,
                    **dict(job.params))
        row.update(status=res.status.value, objective=res.objective, bound=res.bound,
                   gap=res.gap, wall_s=res.wall_s, message=res.message)
    except NotApplicable as exc:
        row.update(status="skipped", message=exc.reason, wall_s=None)
    except ChipschedError as exc:
        row.update(message=str(exc), wall_s=time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001 - a bench records failures and goes on
        row.update(message=crash_message(exc), wall_s=time.perf_counter() - t0)
    return row


#: seconds to wait for a Dask scheduler before calling its address bad input
SCHEDULER_TIMEOUT_S = 5


def dask_client(address: str) -> Any:
    """A ``dask.distributed.Client`` for ``address``; an address that is malformed or where
    no scheduler answers within SCHEDULER_TIMEOUT_S is a one-line InputError."""
    import re

    if not re.fullmatch(r"(tcp|tls|inproc|ws|wss)://[^\s/:]+(:\d+)?|[^\s/:]+:\d+", address):
        raise InputError("--scheduler", f"malformed address {address!r}",
                         "give tcp://host:port (dask scheduler prints it)")
    import logging

    from dask.distributed import Client

    # the failed connection would otherwise log several retries before it gives up
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    try:
        return Client(address, timeout=f"{SCHEDULER_TIMEOUT_S}s")
    except Exception as exc:  # noqa: BLE001 - refused, timed out, or not a Dask scheduler
        raise InputError("--scheduler", f"no Dask scheduler answers at {address} within "
                         f"{SCHEDULER_TIMEOUT_S} s ({exc.__class__.__name__})",
                         "start one with `dask scheduler`, or leave --scheduler out to "
                         "run on this machine") from None


def die_with_parent() -> None:
    """A pool worker's initializer: on Linux the kernel kills the worker when the bench
    process dies — even by ``kill -9``, which runs no clean-up of its own — instead of
    leaving it an orphan blocked on its pipe (PR_SET_PDEATHSIG); elsewhere a daemon
    thread notices the new parent and exits."""
    import signal
    import sys
    import threading

    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
            if os.getppid() != parent:  # the parent died before the call
                os._exit(1)
            return
        except OSError:
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


#: seconds between two checks of a Dask cluster's workers while runs are pending
WORKER_POLL_S = 1.0
#: seconds a bench waits for a Dask cluster without workers before it stops
WAIT_WORKERS_S = 30.0


def run_bench(jobs: Sequence[Job], workers: int = 1, scheduler: str | None = None,
              progress: Callable[[float, float | None, str], None] | None = None,
              registry_: Any = None,
              on_row: Callable[[dict[str, Any]], None] | None = None,
              wait_workers: float = WAIT_WORKERS_S) -> list[dict[str, Any]]:
    """Run the jobs; rows come back in job order. ``registry_`` (tests) forces serial.
    ``progress(done, total, note)`` hears of every finished run (the CLI draws it). On a
    Dask cluster that has no worker (none yet, or every one lost) the bench waits
    ``wait_workers`` seconds, says so through ``progress``, then stops with an error
    (the finished runs are in the database; run again to resume)."""
    rows: list[dict[str, Any] | None] = [None] * len(jobs)
    count = [0]

    def done(i: int, row: dict[str, Any]) -> None:
        rows[i] = row
        count[0] += 1
        if on_row:
            on_row(row)
        if progress is not None:
            progress(count[0], len(jobs), f"{jobs[i].label} → {row['status']}")

    if scheduler:
        with dask_client(scheduler) as client:
            from dask.distributed import wait

            futs = {client.submit(run_job, j, pure=False): i for i, j in enumerate(jobs)}
            pending = set(futs)
            no_workers_since: float | None = None
            while pending:
                try:
                    finished, pending = wait(pending, timeout=WORKER_POLL_S,
                                             return_when="FIRST_COMPLETED")
                except TimeoutError:  # dask says "nothing finished" this way
                    finished = set()
                for f in finished:
                    done(futs[f], f.result())
                if finished or not pending:
                    no_workers_since = None
                    continue
                if client.scheduler_info().get("workers"):
                    no_workers_since = None
                    continue
                now = time.monotonic()
                if no_workers_since is None:
                    no_workers_since = now
                    if progress is not None:
                        progress(count[0], len(jobs), f"no Dask worker at {scheduler}: "
                                 f"waiting up to {wait_workers:g} s")
                if now - no_workers_since >= wait_workers:
                    raise ChipschedError(f"--scheduler {scheduler}: no Dask worker for "
                                         f"{wait_workers:g} s ({len(pending)} of "
                                         f"{len(jobs)} runs left); start workers with "
                                         f"`dask worker {scheduler}` and run the bench "
                                         "again (it resumes), or give --wait-workers "
                                         "more seconds")
    elif workers <= 1 or registry_ is not None or len(jobs) < 2:
        for i, j in enumerate(jobs):
            done(i, run_job(j, registry_))
    else:
        with ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent) as ex:
            futs = {ex.submit(run_job, j): i for i, j in enumerate(jobs)}
            for f in as_completed(futs):
                done(futs[f], f.result())
    return [r for r in rows if r is not None]


# ---------------------------------------------------------------------------------------
# storage and reports


def save_rows(rows: Sequence[Mapping[str, Any]], db: str | os.PathLike[str], bench_id: str
              ) -> None:
    """Append rows to the ``runs`` table of the SQLite file ``db`` (created if missing)."""
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(db))
    try:
        con.execute("CREATE TABLE IF NOT EXISTS runs (" + ", ".join(
            f"{c} {'REAL' if c in ('objective', 'bound', 'gap', 'wall_s', 'size') else 'TEXT'}"
            for c in COLUMNS) + ")")
        have = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
        for c in COLUMNS:  # a database written by an older chipsched: add new columns
            if c not in have:
                con.execute(f"ALTER TABLE runs ADD COLUMN {c} TEXT")
        con.executemany(f"INSERT INTO runs ({', '.join(COLUMNS)}) VALUES "
                        f"({', '.join('?' for _ in COLUMNS)})",
                        [tuple(bench_id if c == "bench_id" else _plain(r.get(c))
                               for c in COLUMNS) for r in rows])
        con.commit()
    finally:
        con.close()


def _plain(v: Any) -> Any:
    if isinstance(v, float) and v != v:  # NaN
        return None
    return v


def write_csv(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], bench_id: str
              ) -> Path:
    from chipsched.files import atomic_write

    def write(fh: Any) -> None:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow(["" if (v := (bench_id if c == "bench_id" else r.get(c))) is None else v
                        for c in COLUMNS])

    return atomic_write(path, write)


def summarize(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per row: the instance's best proven bound and best objective among all methods, and
    the row's gap to that bound — the 'within x % of the proven lower bound' figure — and
    its distance to the best objective found (``vs_best_found``, the console's column).
    Bounds of restricted-space methods (column ``space``) bound that space only and do
    not count (see :func:`chipsched.api.best_bound`)."""
    key = lambda r: (r["decision"], r["instance"], r["chip"], r["instance_options"])  # noqa: E731
    best_bound: dict[Any, float] = {}
    best_obj: dict[Any, float] = {}
    for r in rows:
        k = key(r)
        if r.get("bound") is not None and not r.get("space"):
            best_bound[k] = max(best_bound.get(k, -float("inf")), r["bound"])
        if r.get("objective") is not None:
            best_obj[k] = min(best_obj.get(k, float("inf")), r["objective"])
    out = []
    for r in rows:
        k = key(r)
        bb, bo, obj = best_bound.get(k), best_obj.get(k), r.get("objective")
        vs = vf = None
        if bb is not None and obj is not None and bb != 0:
            vs = (obj - bb) / abs(bb)
        if bo is not None and obj is not None and bo != 0:
            vf = (obj - bo) / abs(bo)
        out.append({**r, "best_bound": bb, "best_objective": bo, "gap_to_best_bound": vs,
                    "vs_best_found": vf})
    return out


def plot_bench(rows: Sequence[Mapping[str, Any]], out_dir: Path,
               skipped: list[str] | None = None) -> list[Path]:
    """Per decision: gap to the best bound vs size, and wall time vs size. A plot with
    nothing to show (no proven bound, no sizes) is not drawn; ``skipped`` hears why.
    Points are not joined: runs of one size can be different networks."""
    from chipsched.plots import MARKERS, _figure, plain_log_axis, save_figure

    paths = []
    summ = summarize(rows)
    for decision in sorted({r["decision"] for r in summ}):
        rs = [r for r in summ if r["decision"] == decision and r.get("size") is not None]
        if not rs:
            if skipped is not None:
                skipped.append(f"{decision}: no instance size, no plots")
            continue
        for what, ylabel, fname in (
                ("gap_to_best_bound", "objective / best proven bound − 1 (%)", "gap"),
                ("wall_s", "wall time (s)", "time")):
            if not any(r.get(what) is not None for r in rs):
                if skipped is not None:
                    skipped.append(f"{decision}: {fname} plot omitted — "
                                   + ("no run has a proven bound of the decision's space"
                                      if what == "gap_to_best_bound" else "no timings"))
                continue
            fig, ax = _figure()
            for k, m in enumerate(sorted({r["method"] for r in rs})):
                pts = sorted((r["size"], r[what]) for r in rs
                             if r["method"] == m and r.get(what) is not None)
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                ys = [100 * p[1] if what == "gap_to_best_bound" else p[1] for p in pts]
                # methods that land on one point stay apart by their marker shape
                ax.plot(xs, ys, MARKERS[k % len(MARKERS)], label=m, ms=5, alpha=0.8,
                        mfc="none" if k % 2 else None)
            ax.set_xscale("log")
            plain_log_axis(ax.xaxis, [r["size"] for r in rs])
            if what == "wall_s":
                ax.set_yscale("log")
                plain_log_axis(ax.yaxis, [r["wall_s"] for r in rs if r.get("wall_s")])
            units = sorted({r.get("size_unit") or "" for r in rs} - {""})
            ax.set_xlabel("instance size" + (f" ({units[0]})" if len(units) == 1 else ""))
            ax.set_ylabel(ylabel)
            ax.set_title(f"{decision}: {ylabel} vs size")
            ax.grid(True, alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
            paths.append(save_figure(fig, out_dir / f"{decision}_{fname}_vs_size.png"))
    return paths


def write_html(rows: Sequence[Mapping[str, Any]], plots: Sequence[Path], path: Path,
               title: str, notes: Sequence[str] = ()) -> Path:
    from chipsched.files import atomic_write

    summ = summarize(rows)
    spaces = sorted({r["space"] for r in summ if r.get("space") and r.get("bound") is not None})
    cols = ["decision", "instance", "chip", "instance_options", "method", "seed", "status",
            "objective", "bound", "gap", "gap_to_best_bound", "vs_best_found", "wall_s",
            "message"]
    # one SI prefix per instance (its objective and bound columns read alike)
    values: dict[tuple[Any, ...], list[float | None]] = {}
    units: dict[tuple[Any, ...], str] = {}
    for r in summ:
        k = (r["decision"], r["instance"], r["chip"], r["instance_options"])
        values.setdefault(k, []).extend((r.get("objective"), r.get("bound")))
        units.setdefault(k, r.get("objective_unit") or "")
    scale = {k: unit_scale(v, units[k]) for k, v in values.items()}

    def cell(c: str, v: Any, r: Mapping[str, Any]) -> str:
        if v is None or (c == "instance_options" and v in ("{}", {})):
            return ""
        if c in ("gap", "gap_to_best_bound", "vs_best_found") and isinstance(v, float):
            pct = 0.0 if abs(100 * v) < 5e-3 else 100 * v  # no "-0.00 %" from tolerances
            return f"{pct:+.2f} %" if c == "vs_best_found" else f"{pct:.2f} %"
        if c in ("objective", "bound") and isinstance(v, float):
            mark = "†" * (spaces.index(r["space"]) + 1) if c == "bound" and \
                r.get("space") in spaces else ""
            f, unit = scale[(r["decision"], r["instance"], r["chip"], r["instance_options"])]
            return f"{v / f:.6g}{mark} {html.escape(unit)}".strip()
        if c == "wall_s" and isinstance(v, float):
            return f"{v:.3g}"
        if isinstance(v, float):
            return f"{v:.6g}"
        return html.escape(str(v))

    body = [f"<h1>{html.escape(title)}</h1>",
            f"<p>{len(rows)} runs; generated {dt.datetime.now().isoformat(timespec='seconds')}"
            "</p>"]
    for p in plots:
        body.append(f'<img src="{html.escape(p.name)}" style="max-width:48%">')
    heads = {"wall_s": "wall (s)", "gap": "gap (own bound)",
             "gap_to_best_bound": "vs best proven bound", "vs_best_found": "vs best found"}
    text_cols = {"decision", "instance", "chip", "instance_options", "method", "status",
                 "message"}
    body.append("<table><tr>" + "".join(
        f"<th{' class=txt' if c in text_cols else ''}>{heads.get(c, c)}</th>" for c in cols)
        + "</tr>")

    td = {c: "<td class='msg'>" if c == "message" else "<td class='txt'>"
          if c in text_cols else "<td>" for c in cols}
    for r in summ:
        body.append("<tr>" + "".join(f"{td[c]}{cell(c, r.get(c), r)}</td>" for c in cols)
                    + "</tr>")
    body.append("</table>")
    foot = [f"{'†' * (i + 1)} bound of the restricted space {s}: it bounds that space only, "
            "not the decision, and is not used for 'vs best proven bound'"
            for i, s in enumerate(spaces)] + list(notes)
    if foot:
        body.append("<p>" + "<br>".join(html.escape(n) for n in foot) + "</p>")
    page = ("<!doctype html><meta charset='utf-8'><title>" + html.escape(title) + "</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse;font-size:12px}"
            # a number and its unit on one line; names left, numbers right; only the
            # message wraps (it can be a paragraph), at a readable width
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;"
            "white-space:nowrap}.txt{text-align:left}"
            "td.msg{text-align:left;white-space:normal;min-width:20em;max-width:40em}"
            "tr:nth-child(even){background:#f7f7f7}</style>"
            + "\n".join(body))
    return atomic_write(path, lambda fh: fh.write(page))


def job_key(row_or_job: Mapping[str, Any] | Job) -> tuple[str, ...]:
    """What identifies a run within a bench: suite, instance, chip, options, method with
    its parameters, seed — the same for a job and for the row it wrote."""
    if isinstance(row_or_job, Job):
        j = row_or_job
        return (j.suite, j.decision, j.instance, j.chip or "",
                json.dumps(dict(j.instance_options)), j.method_label, str(j.seed))
    r = row_or_job
    chip = r["chip_given"] if "chip_given" in r else r["chip"]
    return (str(r["suite"]), str(r["decision"]), str(r["instance"]), str(chip or ""),
            str(r["instance_options"]), str(r["method"]), str(r["seed"]))


def fingerprint(jobs: Sequence[Job]) -> str:
    """A digest of every job with its solver options: a rerun resumes a bench only when
    it would run exactly the same jobs."""
    import hashlib

    return hashlib.sha256(repr(list(jobs)).encode()).hexdigest()[:16]


_BENCHES = ("CREATE TABLE IF NOT EXISTS benches (bench_id TEXT PRIMARY KEY, title TEXT, "
            "fingerprint TEXT, jobs INTEGER, started TEXT, ended TEXT, status TEXT)")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def record_bench(db: Path, bench_id: str, **fields: Any) -> None:
    """Insert or update the bench's row in the ``benches`` table (its start, end and
    status: running, complete, interrupted)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(db))
    try:
        con.execute(_BENCHES)
        con.execute("INSERT OR IGNORE INTO benches (bench_id) VALUES (?)", (bench_id,))
        for k, v in fields.items():
            con.execute(f"UPDATE benches SET {k} = ? WHERE bench_id = ?", (v, bench_id))
        con.commit()
    finally:
        con.close()


def _new_bench_id(db: Path) -> str:
    """The start time (UTC, to the second), with a suffix when a bench of the same second
    is already in ``db``."""
    base = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if not db.exists():
        return base
    con = sqlite3.connect(str(db))
    try:
        con.execute(_BENCHES)
        taken = {r[0] for r in con.execute("SELECT bench_id FROM benches WHERE bench_id "
                                           "LIKE ?", (base + "%",))}
    finally:
        con.close()
    k, bid = 1, base
    while bid in taken:
        k += 1
        bid = f"{base}-{k}"
    return bid


def unfinished_bench(db: Path, fp: str) -> tuple[str, list[dict[str, Any]]] | None:
    """The latest bench of ``db`` with these jobs that did not complete, and its rows."""
    if not db.exists():
        return None
    con = sqlite3.connect(str(db))
    con.row_factory = sqlite3.Row
    try:
        con.execute(_BENCHES)
        got = con.execute("SELECT bench_id FROM benches WHERE fingerprint = ? AND status != "
                          "'complete' ORDER BY started DESC LIMIT 1", (fp,)).fetchone()
        if got is None:
            return None
        rows = [dict(r) for r in con.execute("SELECT * FROM runs WHERE bench_id = ?",
                                             (got["bench_id"],))]
        for r in rows:  # TEXT columns give back what an int was
            if isinstance(r.get("seed"), str) and r["seed"].lstrip("-").isdigit():
                r["seed"] = int(r["seed"])
    except sqlite3.OperationalError:  # a database without a runs table yet
        return None
    finally:
        con.close()
    return got["bench_id"], rows


def bench(spec: str | os.PathLike[str] | Mapping[str, Any], out_dir: str | os.PathLike[str],
          workers: int = 1, scheduler: str | None = None,
          progress: Callable[[float, float | None, str], None] | None = None,
          registry_: Any = None, resume: bool = True,
          notice: Callable[[str], None] | None = None,
          wait_workers: float = WAIT_WORKERS_S
          ) -> tuple[list[dict[str, Any]], dict[str, Path]]:
    """Load, run and store a bench; returns the rows and the files written.

    With ``resume`` (the default) a bench that was interrupted (^C, a crash, ``kill``)
    in the same ``out_dir`` with exactly the same jobs continues under its own
    ``bench_id``: only the runs missing from the database run (``notice`` hears how
    many). The ``benches`` table records each bench's start, end and status."""
    from chipsched.files import check_output_dir

    out = check_output_dir(out_dir)
    suites = load_suites(spec)
    jobs = expand(suites, registry_)
    db = out / "results.sqlite"
    fp = fingerprint(jobs)
    prev = unfinished_bench(db, fp) if resume else None
    old_rows: list[dict[str, Any]] = []
    if prev is not None:
        bench_id, old_rows = prev
        have = {job_key(r) for r in old_rows}
        todo = [j for j in jobs if job_key(j) not in have]
        if notice is not None:
            notice(f"resuming bench {bench_id}: {len(jobs) - len(todo)} of {len(jobs)} runs "
                   "are in the database, running the rest (--fresh starts over)")
    else:
        bench_id = _new_bench_id(db)
        todo = list(jobs)
    started = _now()
    recorded = [False]

    def begin() -> None:
        # written with the first finished run: a bench refused before any run (an
        # unreachable scheduler) leaves no database behind
        if not recorded[0]:
            if prev is None:
                record_bench(db, bench_id, title=suite_title(spec, suites), fingerprint=fp,
                             jobs=len(jobs), started=started)
            record_bench(db, bench_id, status="running", ended=None)
            recorded[0] = True

    def on_row(r: dict[str, Any]) -> None:
        begin()
        save_rows([r], files["sqlite"], bench_id)

    files = {"sqlite": db, "csv": out / f"bench-{bench_id}.csv"}
    # every finished run goes to the database at once: a crash or ^C later loses nothing
    try:
        new_rows = run_bench(todo, workers=workers, scheduler=scheduler, progress=progress,
                             registry_=registry_, on_row=on_row,
                             wait_workers=wait_workers)
    except BaseException:
        if recorded[0]:
            record_bench(db, bench_id, status="interrupted", ended=_now())
        raise
    begin()
    record_bench(db, bench_id, status="complete", ended=_now())
    order = {job_key(j): i for i, j in enumerate(jobs)}
    rows = sorted([{k: v for k, v in r.items() if k != "bench_id"} for r in old_rows]
                  + new_rows, key=lambda r: order.get(job_key(r), len(order)))
    write_csv(rows, files["csv"], bench_id)
    skipped: list[str] = []
    plots = plot_bench(rows, out, skipped)
    files["html"] = write_html(rows, plots, out / f"bench-{bench_id}.html",
                               f"chipsched bench {suite_title(spec, suites)}", skipped)
    for i, p in enumerate(plots):
        files[f"plot{i}"] = p
    return rows, files

