"""Does ``--time-limit`` hold? Every method of every decision, each in a fresh process
(so a first run — numba kernels loaded or compiled, solver libraries imported — is what
is measured), on small conformance-style instances and one real instance per decision.

For each run the table gives the method's reported ``wall_s`` (the face's budget: the
automatic warm start, model building, the solver, chain steps, decoding), the whole
process's wall time (imports and instance building included, which the budget does not
cover), the status, and whether ``wall_s`` ended within 1.1 × the limit.

    python benchmarks/time_budget.py                   # every decision, limit 5 s
    python benchmarks/time_budget.py --decisions core_assignment --limit 5
    python benchmarks/time_budget.py --quick           # the real instances only
    python benchmarks/time_budget.py --json out.json   # keep the rows
    python benchmarks/time_budget.py --repeat core_assignment:seed004-plus --times 5
        # one method on the real instance, five fresh processes in a row, no limit: the
        # first run against the later ones (clear numba's cache first — the *.nbi/*.nbc
        # files next to the modules — to see a first run after an install)

Methods that do not apply to an instance are listed as ``n/a`` (``solve`` refuses them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

#: decision → [(instance spec, chip, extra CLI arguments)]; the last one is the real
#: instance of the issue (ResNet-50 for the first three, lenet5-neurons).
INSTANCES: dict[str, list[tuple[str, str, list[str]]]] = {
    "region_split": [("tiny", "chiplet-2x2", []), ("tiny", "soc-npu-gpu-cpu", []),
                     ("resnet50", "chiplet-4x4", [])],
    "tile_groups": [("tiny-chain", "tiled-2x2", ["--batch", "2"]),
                    ("tiny-chain", "edge-4x4", ["--batch", "4"]),
                    ("resnet50", "edge-4x4", ["--batch", "8"])],
    "op_placement": [("random:n=5,p=2,seed=1", "soc-npu-gpu-cpu", []),
                     ("topcuoglu2002", "soc-npu-gpu-cpu", []),
                     ("resnet50", "soc-npu-gpu-cpu", [])],
    "core_assignment": [("layered:layers=2,width=3,fanin=2,seed=0", "neuro-2x3-k2", []),
                        ("stencil:nx=12,ny=12", "neuro-4x4-k9", []),
                        ("lenet5-neurons", "neuro-8x8", [])],
}


def methods(decision: str) -> list[str]:
    from chipsched.registry import registry

    return list(registry().methods(decision))


def run_one(decision: str, spec: str, chip: str, extra: list[str], method: str,
            limit: float, exe: str) -> dict:
    cmd = [exe, "solve", decision, "-i", spec, "-c", chip, "-m", method, "--time-limit",
           f"{limit:g}", "--json", *extra]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    total = time.perf_counter() - t0
    row = {"decision": decision, "instance": spec, "chip": chip, "method": method,
           "process_s": total, "exit": p.returncode}
    if p.returncode == 0 and p.stdout.strip():
        try:
            out = json.loads(p.stdout)
        except json.JSONDecodeError:
            out = {}
        row.update(status=out.get("status"), wall_s=out.get("wall_s"),
                   objective=out.get("objective"), bound=out.get("bound"),
                   message=out.get("message") or "")
    else:
        err = (p.stderr.strip().splitlines() or [""])[-1]
        row.update(status="n/a" if "does not apply" in err else "error", wall_s=None,
                   message=err[:160])
    return row


def repeat(exe: str, what: str, times: int) -> int:
    """``what`` = DECISION:METHOD on the decision's real instance, ``times`` fresh
    processes without a time limit: wall_s and load_s of each."""
    decision, method = what.split(":")
    spec, chip, extra = INSTANCES[decision][-1]
    print(f"Command: `python benchmarks/time_budget.py --repeat {what} --times {times}`\n")
    print("| run | wall_s (s) | load_s (s) | process (s) |")
    print("|---:|---:|---:|---:|")
    for k in range(times):
        cmd = [exe, "solve", decision, "-i", spec, "-c", chip, "-m", method, "--json", *extra]
        t0 = time.perf_counter()
        out = json.loads(subprocess.run(cmd, capture_output=True, text=True,
                                        check=True).stdout)
        total = time.perf_counter() - t0
        load = out["metrics"].get("solver", {}).get("load_s", 0.0)
        print(f"| {k + 1} | {out['wall_s']:.3f} | {load:.2f} | {total:.2f} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=5.0)
    ap.add_argument("--decisions", default="region_split,tile_groups,op_placement,"
                    "core_assignment")
    ap.add_argument("--methods", default="", help="only these methods (comma-separated)")
    ap.add_argument("--quick", action="store_true", help="the real instance only")
    ap.add_argument("--json", default="", help="write the rows to this file")
    ap.add_argument("--repeat", default="", help="DECISION:METHOD run --times times")
    ap.add_argument("--times", type=int, default=5)
    a = ap.parse_args(argv)
    exe = os.path.join(os.path.dirname(sys.executable), "chipsched")
    if a.repeat:
        return repeat(exe, a.repeat, a.times)
    rows = []
    for d in a.decisions.split(","):
        insts = INSTANCES[d][-1:] if a.quick else INSTANCES[d]
        names = [m for m in methods(d) if not a.methods or m in a.methods.split(",")]
        for spec, chip, extra in insts:
            for m in names:
                r = run_one(d, spec, chip, extra, m, a.limit, exe)
                rows.append(r)
                w = "—" if r["wall_s"] is None else f"{r['wall_s']:.2f}"
                print(f"{d:16s} {spec[:24]:24s} {m:18s} {r['status']!s:10s} wall_s {w:>7s} "
                      f"process {r['process_s']:6.2f}", file=sys.stderr, flush=True)
    cmd = "python benchmarks/time_budget.py " + " ".join(sys.argv[1:] if argv is None
                                                         else argv)
    print(f"Command: `{cmd.strip()}` — time limit {a.limit:g} s, each run a fresh process\n")
    print("| decision | instance | chip | method | status | wall_s (s) | process (s) | "
          "within 1.1× |")
    print("|---|---|---|---|---|---:|---:|---|")
    ran = [r for r in rows if r["wall_s"] is not None]
    for r in rows:
        w = "—" if r["wall_s"] is None else f"{r['wall_s']:.2f}"
        ok = "" if r["wall_s"] is None else ("yes" if r["wall_s"] <= 1.1 * a.limit
                                             else "**no**")
        print(f"| {r['decision']} | {r['instance']} | {r['chip']} | {r['method']} | "
              f"{r['status']} | {w} | {r['process_s']:.2f} | {ok} |")
    over = [r for r in ran if r["wall_s"] > 1.1 * a.limit]
    errors = [r for r in rows if r["status"] == "error"]
    print(f"\n{len(ran)} runs, {len(over)} above 1.1 × the limit"
          + (f" (max {max(r['wall_s'] for r in ran):.2f} s)" if ran else "")
          + f"; {len(errors)} errors; process time max "
          f"{max(r['process_s'] for r in rows):.2f} s")
    for r in errors:
        print(f"error: {r['decision']}/{r['method']} on {r['instance']}: {r['message']}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
