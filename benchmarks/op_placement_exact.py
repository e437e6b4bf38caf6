"""op_placement: how large a graph the exact models prove optimal (issue 6, second figure).

Two families, on 2, 3 and 4 processors, without and with transfer costs:

* **STG** — the Standard Task Graph Set files in ``--stg DIR`` (Kasahara's STG set,
  https://www.kasahara.cs.waseda.ac.jp/schedule/; identical
  processors; "with transfers" adds ``ccr = 1``: an edge between different processors
  costs its producer's processing time). Each whole file, and — for the size sweep —
  the induced sub-graphs of tasks 1..k of ``100_rand0000.stg`` (STG numbers tasks
  topologically), k = 10, 20, …, 100.
* **random heterogeneous** — ``random_instance(n, p, seed=0, density=4/n, het=0.5,
  ccr=0 or 1)`` (chipsched.instances.op_placement.generators): times differ by
  processor by up to ±50 %, about 2 edges per op as in the STG files.

For every (family, processors, transfers, model) the sizes grow until the model fails
to prove optimality within the limit; the table gives the largest proven size and the
first failure with its gap. CP-SAT and the MILP get HEFT as a warm start.

    python benchmarks/op_placement_exact.py --stg DIR            # full: 60 s per run
    python benchmarks/op_placement_exact.py --stg DIR --quick    # 5 s per run, fewer sizes
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

from chipsched.api import solve
from chipsched.instances.op_placement import random_instance, read_stg
from chipsched.result import Status

STG_DIR = Path(".")  # set from --stg
STG_FILES = ("50_rand0000.stg", "50_rand0003.stg", "100_rand0000.stg")


def run(inst, model: str, limit: float, threads: int):
    heft = solve("op_placement", inst, "heft")
    kw = {"threads": threads} if model == "cpsat" else {}
    r = solve("op_placement", inst, model, time_limit=limit, warm_start=heft, **kw)
    return heft, r


def fmt_gap(r) -> str:
    if r.objective is None:
        return "no solution"
    return f"{100 * r.gap:.2f} %" if r.gap is not None else "—"


def whole_files(limit: float, threads: int, procs, models) -> None:
    print("### Whole STG files\n")
    print("| file | tasks | processors | transfers | HEFT | " +
          " | ".join(f"{m} (status, time, gap)" for m in models) + " |")
    print("|---|---:|---:|---|---:|" + "---|" * len(models))
    for f in STG_FILES:
        for p in procs:
            for ccr in (0.0, 1.0):
                inst = read_stg(STG_DIR / f, p, ccr)
                cells, heft = [], None
                for m in models:
                    heft, r = run(inst, m, limit, threads)
                    obj = "—" if r.objective is None else f"{r.objective:g}"
                    cells.append(f"{obj} ({r.status.value}, {r.wall_s:.1f} s, {fmt_gap(r)})")
                print(f"| {f} | {inst.n_ops} | {p} | {'ccr=1' if ccr else 'none'} | "
                      f"{heft.objective:g} | " + " | ".join(cells) + " |", flush=True)
    print()


def make(family: str, n: int, p: int, ccr: float):
    if family == "stg":
        return read_stg(STG_DIR / "100_rand0000.stg", p, ccr, max_tasks=n)
    return random_instance(n=n, p=p, seed=0, density=min(1.0, 4 / n), het=0.5, ccr=ccr)


def sweep(limit: float, threads: int, procs, models, sizes: dict) -> None:
    print("### Largest graph proved optimal within the limit\n")
    print("| family | processors | transfers | model | largest proven (ops, time) | "
          "first not proven (ops, gap) |")
    print("|---|---:|---|---|---|---|")
    for family in ("stg", "random"):
        for p in procs:
            for ccr in (0.0, 1.0):
                for m in models:
                    best, fail = None, None
                    for n in sizes[(family, m)]:
                        inst = make(family, n, p, ccr)
                        _, r = run(inst, m, limit, threads)
                        if r.status is Status.OPTIMAL:
                            best = (inst.n_ops, r.wall_s)
                        else:
                            fail = (inst.n_ops, fmt_gap(r))
                            break
                    b = "none" if best is None else f"{best[0]} ({best[1]:.1f} s)"
                    f = "— (all sizes tried were proven)" if fail is None else \
                        f"{fail[0]} ({fail[1]})"
                    print(f"| {family} | {p} | {'ccr=1' if ccr else 'none'} | {m} | {b} | "
                          f"{f} |", flush=True)
                    print(f"[{family} p={p} ccr={ccr} {m} done]", file=sys.stderr, flush=True)
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 s limits, fewer sizes")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models", default="cpsat,milp")
    ap.add_argument("--stg", required=True, help="folder of the STG set's .stg files")
    args = ap.parse_args()
    limit = args.time_limit or (5.0 if args.quick else 60.0)
    models = [m for m in args.models.split(",") if m]
    procs = (2, 3, 4)
    if args.quick:
        sizes = {("stg", "cpsat"): (20, 50, 100), ("stg", "milp"): (5, 10, 20),
                 ("random", "cpsat"): (20, 50, 100), ("random", "milp"): (5, 10, 20)}
    else:
        sizes = {("stg", "cpsat"): tuple(range(10, 101, 10)),
                 ("stg", "milp"): (5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100),
                 ("random", "cpsat"): (10, 20, 30, 40, 50, 60, 80, 100, 120, 150, 200, 300,
                                       400),
                 ("random", "milp"): (5, 8, 10, 12, 15, 20, 25, 30, 40, 50)}
    cmd = "python benchmarks/op_placement_exact.py --stg DIR" + \
        (" --quick" if args.quick else "") + \
        (f" --time-limit {args.time_limit:g}" if args.time_limit else "")
    print(f"Command: `{cmd}` ({limit:g} s per run; CP-SAT {args.threads} workers, MILP "
          f"HiGHS; both warm-started from HEFT; {platform.machine()}, Python "
          f"{platform.python_version()}; 2 shared cores, so times are inflated)\n")
    global STG_DIR
    STG_DIR = Path(args.stg)
    if not STG_DIR.is_dir():
        sys.exit(f"STG files not found in {STG_DIR}")
    whole_files(limit, args.threads, procs, models)
    sweep(limit, args.threads, procs, models, sizes)


if __name__ == "__main__":
    main()
