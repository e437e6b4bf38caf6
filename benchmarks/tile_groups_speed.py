"""SA speed (issues 4 and 10): rounds per second and wall time of SET's SA with its
defaults (β = 100 rounds per layer; 8 tries since issue 30: 4 draws, 4 reheats),
pinned to one core. Target: ResNet-50 on cloud-12x12, batch 64, β = 100 in under 60 s.

    python benchmarks/tile_groups_speed.py --quick     # ResNet-50 only, β = 10
    python benchmarks/tile_groups_speed.py             # ResNet-50, β = 100, 3 seeds
    python benchmarks/tile_groups_speed.py --all       # + SET's five networks
    python benchmarks/tile_groups_speed.py --against-python   # + the same runs with the
        analyzer's Python steps instead of its compiled segment kernel, back to back
    python benchmarks/tile_groups_speed.py --against-rev 13022f5  # + the same runs with
        the code of a git revision (a temporary worktree), back to back
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chipsched.api import registry, solve, warm_up
from chipsched.instances.chips import get_chip
from chipsched.instances.tile_groups import load_instance
from chipsched.problems.tile_groups import ls_tree

#: one SA run in a subprocess with another revision's code (its root first on sys.path)
_AT_REV = """
import json, sys
sys.path.insert(0, sys.argv[1])
import chipsched
assert chipsched.__file__.startswith(sys.argv[1]), chipsched.__file__
from chipsched.api import registry, solve, warm_up
from chipsched.instances.chips import get_chip
from chipsched.instances.tile_groups import load_instance
registry()
warm_up(["tile_groups"])
inst = load_instance(sys.argv[2], get_chip(sys.argv[3]), batch=int(sys.argv[4]))
r = solve("tile_groups", inst, "sa", seed=int(sys.argv[5]), beta=float(sys.argv[6]))
print(json.dumps({"wall": r.wall_s, "ips": r.metrics["solver"]["iterations_per_s"]}))
"""


def _worktree(rev: str) -> Path:
    root = Path(__file__).resolve().parents[1]
    path = Path(tempfile.mkdtemp(prefix="chipsched-rev-")) / "tree"
    subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(path), rev],
                   check=True, capture_output=True)
    return path


def _run_at_rev(worktree: Path, net: str, chip: str, batch: int, seed: int,
                beta: float) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _AT_REV, str(worktree), net, chip,
                          str(batch), str(seed), str(beta)], check=True,
                         capture_output=True, text=True, cwd=worktree)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--all", action="store_true", help="all five SET networks")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--chip", default="cloud-12x12")
    ap.add_argument("--against-rev", default=None, metavar="REV",
                    help="also run each seed with the code of git revision REV (checked out "
                         "in a temporary worktree, run in a subprocess on the same core)")
    ap.add_argument("--against-python", action="store_true",
                    help="also run each seed with the analyzer's Python steps "
                         "(Analyzer.compiled = False) right after the compiled run")
    a = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    beta = 10 if a.quick else 100
    seeds = a.seeds or (1 if a.quick else 3)
    nets = ["resnet50"]
    if a.all:
        nets += ["resnet50-v1", "googlenet", "inception-resnet-v1", "pnasnet5-large",
                 "transformer-set-isca23"]
    registry()
    warm_up(["tile_groups"])  # compiled kernels loaded before any clock
    rows, py_rows, rev_rows = [], [], []
    worktree = _worktree(a.against_rev) if a.against_rev else None
    for net in nets:
        t0 = time.perf_counter()
        inst = load_instance(net, get_chip(a.chip), batch=a.batch)
        an = inst.analyzer
        t_table = time.perf_counter() - t0
        t0 = time.perf_counter()
        an.totals(ls_tree(len(inst.workload), a.batch))
        t_ls = time.perf_counter() - t0
        walls, ips, evals, rounds, tries, py_walls, py_ips = [], [], [], 0, 0, [], []
        rev_walls: list[float] = []
        rev_ips: list[float] = []
        for s in range(seeds):
            r = solve("tile_groups", inst, "sa", seed=s, beta=beta)
            st = r.metrics["solver"]
            walls.append(r.wall_s)
            ips.append(st["iterations_per_s"])
            evals.append(st["segment_cache"])
            rounds = st["iterations"]
            tries = len(st["tries"])
            if a.against_python:
                # a fresh instance: nothing cached from the compiled run
                ref = load_instance(net, get_chip(a.chip), batch=a.batch)
                ref.analyzer.compiled = False
                rp = solve("tile_groups", ref, "sa", seed=s, beta=beta)
                py_walls.append(rp.wall_s)
                py_ips.append(rp.metrics["solver"]["iterations_per_s"])
            if a.against_rev:
                got = _run_at_rev(worktree, net, a.chip, a.batch, s, beta)
                rev_walls.append(got["wall"])
                rev_ips.append(got["ips"])
        if a.against_rev:
            rev_rows.append((net, statistics.fmean(rev_walls), statistics.fmean(rev_ips),
                             statistics.fmean(ips) / statistics.fmean(rev_ips)))
        rows.append((net, len(inst.workload), t_table, t_ls, f"{rounds:,} ({tries})",
                     statistics.fmean(walls), max(walls), statistics.fmean(ips),
                     statistics.fmean(evals)))
        if a.against_python:
            py_rows.append((net, statistics.fmean(py_walls), statistics.fmean(py_ips),
                            statistics.fmean(ips) / statistics.fmean(py_ips)))
    cmd = "python benchmarks/tile_groups_speed.py " + " ".join(sys.argv[1:] if argv is None
                                                                 else argv)
    print(f"Command: `{cmd.strip()}` — {a.chip}, batch {a.batch}, objective "
          f"{inst.objective.name}, β = {beta:g}, {seeds} seed(s), pinned to {cores} core\n")
    print("| network | layers | layer table (s) | LS tree, cold (s) | SA rounds (tries) | "
          "SA wall mean (s) | SA wall max (s) | rounds/s | segments evaluated |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for net, n, tt, tl, rounds, wm, wx, ip, ev in rows:
        print(f"| {net} | {n} | {tt:.2f} | {tl:.3f} | {rounds} | {wm:.1f} | {wx:.1f} | "
              f"{ip:.0f} | {ev:,.0f} |")
    if py_rows:
        print("\nThe same seeds with the analyzer's Python steps (Analyzer.compiled = False), "
              "each right after its compiled run; a seed may take another path (rounding "
              "in the last bits), the rounds are the same:\n")
        print("| network | SA wall mean, Python steps (s) | rounds/s, Python steps | "
              "compiled / Python rounds/s |")
        print("|---|---:|---:|---:|")
        for net, wm, ip, ratio in py_rows:
            print(f"| {net} | {wm:.1f} | {ip:.0f} | {ratio:.2f}× |")
    if rev_rows:
        print(f"\nThe same seeds with the code of git revision {a.against_rev}, each right "
              "after its run here (a subprocess on the same core):\n")
        print(f"| network | SA wall mean at {a.against_rev} (s) | rounds/s at "
              f"{a.against_rev} | here / {a.against_rev} rounds/s |")
        print("|---|---:|---:|---:|")
        for net, wm, ip, ratio in rev_rows:
            print(f"| {net} | {wm:.1f} | {ip:.0f} | {ratio:.2f}× |")
    if worktree is not None:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], check=False,
                       capture_output=True)
    if beta == 100:
        ok = all(r[6] < 60 for r in rows if r[0] == "resnet50")
        print(f"\ntarget (ResNet-50, β = 100, < 60 s): {'met' if ok else 'NOT met'}")
    else:
        print("\ntarget (ResNet-50, β = 100, < 60 s): not measured in quick mode")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
