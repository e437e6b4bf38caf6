"""op_placement: CP-SAT against the published optima of the Kasahara STG sets (issue 12).

Every graph of the 50- and 100-task sets in ``--data`` (Standard Task Graph Set files,
identical processors, no communication) on 2, 4, 8 and 16 processors, solved by
``chipsched solve op_placement -m cpsat`` (auto warm start from HEFT/CPOP, one worker
unless ``--threads``) with a time limit per case, against ``optima.json`` (the
archive's ``[lower, upper]`` per graph and processor count; lower == upper: proven).

Per set and limit: how many of the archive's proven cases CP-SAT proves, how many it
solves to the archive's value, whether any makespan falls below an archive lower bound
(must be 0), the archive's open cases it closes, and the time to proof (median, max).
``--ablation`` repeats the run with ``cumulative_reasoning=false`` (CP-SAT's default
propagation in the cumulative constraint).

    python benchmarks/op_placement_stg.py --data DIR --time-limit 10
    python benchmarks/op_placement_stg.py --data DIR --time-limit 60 --ablation
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
from pathlib import Path

import ortools

from chipsched.api import solve
from chipsched.instances.op_placement import read_stg
from chipsched.result import Status


def run_set(data: Path, size: str, optima: dict, procs: list[int], limit: float,
            threads: int, reasoning: bool, verbose: bool) -> dict:
    rows = []
    for f in sorted(optima):
        for p in procs:
            lo, hi = optima[f][str(p)]
            inst = read_stg(data / size / f, p)
            r = solve("op_placement", inst, "cpsat", time_limit=limit, threads=threads,
                      cumulative_reasoning=reasoning)
            proved = r.status is Status.OPTIMAL
            rows.append({"file": f, "p": p, "lo": lo, "hi": hi, "obj": r.objective,
                         "bound": r.bound, "proved": proved, "wall": r.wall_s})
            if verbose or not proved or r.objective < lo:
                print(f"  {size}/{f} p={p}: archive [{lo}, {hi}], CP-SAT {r.objective:g} "
                      f"bound {r.bound:g} {r.status.value} {r.wall_s:.1f} s", flush=True)
    return summarize(rows)


def summarize(rows: list[dict]) -> dict:
    closed = [r for r in rows if r["lo"] == r["hi"]]
    open_ = [r for r in rows if r["lo"] != r["hi"]]
    times = [r["wall"] for r in rows if r["proved"]]
    return {
        "cases": len(rows),
        "archive_proven": len(closed),
        "proved_of_archive_proven": sum(r["proved"] for r in closed),
        "value_reached": sum(abs(r["obj"] - r["hi"]) < 1e-9 for r in closed),
        "below_archive_lower": sum(r["obj"] < r["lo"] - 1e-9 for r in rows),
        "archive_open": len(open_),
        "open_closed": [(r["file"], r["p"], r["lo"], r["hi"], r["obj"]) for r in open_
                        if r["proved"]],
        "median_s": statistics.median(times) if times else None,
        "max_s": max(times) if times else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True,
                    help="directory with 50/, 100/ and optima.json")
    ap.add_argument("--sizes", default="50,100")
    ap.add_argument("--procs", default="2,4,8,16")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ablation", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    optima = json.loads((a.data / "optima.json").read_text())
    procs = [int(x) for x in a.procs.split(",")]
    print(f"machine: {platform.machine()}, python {platform.python_version()}, OR-Tools "
          f"{ortools.__version__}; {a.threads} worker(s), {a.time_limit:g} s per case\n")
    table = []
    for reasoning in ([True, False] if a.ablation else [True]):
        for size in a.sizes.split(","):
            print(f"{size}-task set, cumulative_reasoning={reasoning}:", flush=True)
            s = run_set(a.data, size, optima[size], procs, a.time_limit, a.threads,
                        reasoning, a.verbose)
            table.append((size, reasoning, s))
    print("\n| set | cumulative reasoning | cases | proven by the archive | CP-SAT proves "
          "them | at the archive's value | below an archive lower bound | archive's open "
          "cases closed | time to proof (median / max) |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for size, reasoning, s in table:
        pct = 100 * s["proved_of_archive_proven"] / max(s["archive_proven"], 1)
        closed = "; ".join(f"{f} p={p}: [{lo}, {hi}] → {obj:g}"
                           for f, p, lo, hi, obj in s["open_closed"]) or "—"
        med = "—" if s["median_s"] is None else f"{s['median_s']:.2f} / {s['max_s']:.1f} s"
        print(f"| {size} tasks | {'on' if reasoning else 'off'} | {s['cases']} | "
              f"{s['archive_proven']} | {s['proved_of_archive_proven']} ({pct:.1f} %) | "
              f"{s['value_reached']} | {s['below_archive_lower']} | "
              f"{len(s['open_closed'])} of {s['archive_open']}: {closed} | {med} |")


if __name__ == "__main__":
    main()
