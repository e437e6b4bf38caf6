"""op_placement MILP: the serial big-M against the incumbent horizon (issue 15).

The same families as ``op_placement_exact.py`` — prefixes of the STG file
``100_rand0000.stg`` (identical processors; "with transfers" = ccr 1) and
``random_instance(n, p, seed=0, density=4/n, het=0.5, ccr)`` — on 2, 3 and 4
processors, each size solved by the MILP twice with the same warm start (the better of
HEFT and seed 003):

* ``big_m=serial`` — the model before issue 15: one big-M, the serial bound, for every
  disjunction; the makespan bounded by the serial bound;
* ``big_m=incumbent`` (default) — the makespan capped by the best schedule at hand, a
  big-M per pair from start windows.

Sizes grow until both variants fail to prove optimality within the limit; the tables
give, per variant, the largest size proven before its first failure, the first failure
with its gap, the solve times on the sizes both proved, and how far the big-Ms are
above the optimum (or the best makespan found).

    python benchmarks/op_placement_milp.py            # 30 s per run
    python benchmarks/op_placement_milp.py --quick    # 5 s per run, fewer sizes
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np

from chipsched.api import solve
from chipsched.instances.op_placement import random_instance, read_stg
from chipsched.result import Status

VARIANTS = ("serial", "incumbent")


def make(family: str, n: int, p: int, ccr: float, stg_dir: Path):
    if family == "stg":
        return read_stg(stg_dir / "100_rand0000.stg", p, ccr, max_tasks=n)
    return random_instance(n=n, p=p, seed=0, density=min(1.0, 4 / n), het=0.5, ccr=ccr)


def run_size(inst, limit: float) -> dict:
    heft = solve("op_placement", inst, "heft")
    s3 = solve("op_placement", inst, "seed003")
    warm = min((heft, s3), key=lambda r: r.objective)
    out = {}
    for v in VARIANTS:
        r = solve("op_placement", inst, "milp", time_limit=limit, warm_start=warm, big_m=v)
        out[v] = r
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 s limits, fewer sizes")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--stg", type=Path, required=True,
                    help="folder of the Kasahara STG files (100_rand0000.stg is used)")
    args = ap.parse_args()
    limit = args.time_limit or (5.0 if args.quick else 30.0)
    if args.quick:
        sizes = {"stg": (10, 20, 30), "random": (10, 20, 25)}
    else:
        sizes = {"stg": (10, 15, 20, 25, 30, 40, 50, 60, 80, 100),
                 "random": (5, 10, 15, 20, 25, 30, 40, 50)}
    cmd = "python benchmarks/op_placement_milp.py" + (" --quick" if args.quick else "") + \
        (f" --time-limit {args.time_limit:g}" if args.time_limit else "")
    print(f"Command: `{cmd}` ({limit:g} s per run, HiGHS; warm start = the better of HEFT "
          f"and seed 003; {platform.machine()}, Python {platform.python_version()}; 2 "
          "shared cores, so times are inflated)\n")
    if not (args.stg / "100_rand0000.stg").is_file():
        sys.exit(f"--stg: 100_rand0000.stg not found in {args.stg}")
    rows, ratios = [], {v: [] for v in VARIANTS}
    for family in ("stg", "random"):
        for p in (2, 3, 4):
            for ccr in (0.0, 1.0):
                best = {v: None for v in VARIANTS}
                fail = {v: None for v in VARIANTS}
                both_times = {v: 0.0 for v in VARIANTS}
                for n in sizes[family]:
                    inst = make(family, n, p, ccr, args.stg)
                    res = run_size(inst, limit)
                    ref = min(r.objective for r in res.values())
                    for v, r in res.items():
                        ratios[v].append(r.metrics["solver"]["mean_big_m"] / ref)
                        if fail[v] is not None:
                            continue
                        if r.status is Status.OPTIMAL:
                            best[v] = (inst.n_ops, r.wall_s)
                        else:
                            gap = "—" if r.gap is None else f"{100 * r.gap:.2f} %"
                            fail[v] = (inst.n_ops, gap)
                    if all(r.status is Status.OPTIMAL for r in res.values()):
                        for v, r in res.items():
                            both_times[v] += r.wall_s
                    print(f"[{family} p={p} ccr={ccr:g} n={inst.n_ops}: " + ", ".join(
                        f"{v} {r.status.value} {r.wall_s:.1f} s" for v, r in res.items()) +
                        "]", file=sys.stderr, flush=True)
                    if all(f is not None for f in fail.values()):
                        break
                rows.append((family, p, ccr, best, fail, both_times))

    print("### Largest graph proved optimal, serial big-M vs incumbent horizon\n")
    print("| family | processors | transfers | serial: largest proven (ops, time) | "
          "serial: first not proven (ops, gap) | incumbent: largest proven | incumbent: "
          "first not proven | time on sizes both proved (serial → incumbent) |")
    print("|---|---:|---|---|---|---|---|---|")

    def cell(x, what):
        if x is None:
            return "none" if what == "best" else "— (all sizes tried were proven)"
        return f"{x[0]} ({x[1]:.1f} s)" if what == "best" else f"{x[0]} ({x[1]})"

    for family, p, ccr, best, fail, t in rows:
        print(f"| {family} | {p} | {'ccr=1' if ccr else 'none'} | "
              f"{cell(best['serial'], 'best')} | {cell(fail['serial'], 'fail')} | "
              f"{cell(best['incumbent'], 'best')} | {cell(fail['incumbent'], 'fail')} | "
              f"{t['serial']:.1f} s → {t['incumbent']:.1f} s |")
    print()
    print("Mean big-M over the disjunctions, divided by the best makespan found (every "
          "run of the sweep):\n")
    print("| variant | min | median | max |")
    print("|---|---:|---:|---:|")
    for v, r in ratios.items():
        a = np.array(r)
        print(f"| {v} | {a.min():.2f} | {np.median(a):.2f} | {a.max():.2f} |")


if __name__ == "__main__":
    main()
