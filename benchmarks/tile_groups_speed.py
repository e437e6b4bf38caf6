"""SA speed (issues 4 and 10): rounds per second and wall time of SET's SA with its
defaults (β = 100 rounds per layer; 8 tries since issue 30: 4 draws, 4 reheats),
pinned to one core. Target: ResNet-50 on cloud-12x12, batch 64, β = 100 in under 60 s.

    python benchmarks/tile_groups_speed.py --quick     # ResNet-50 only, β = 10
    python benchmarks/tile_groups_speed.py             # ResNet-50, β = 100, 3 seeds
    python benchmarks/tile_groups_speed.py --all       # + SET's five networks
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from chipsched.api import registry, solve
from chipsched.instances.chips import get_chip
from chipsched.instances.tile_groups import load_instance
from chipsched.problems.tile_groups import ls_tree


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--all", action="store_true", help="all five SET networks")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--chip", default="cloud-12x12")
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
    rows = []
    for net in nets:
        t0 = time.perf_counter()
        inst = load_instance(net, get_chip(a.chip), batch=a.batch)
        an = inst.analyzer
        t_table = time.perf_counter() - t0
        t0 = time.perf_counter()
        an.totals(ls_tree(len(inst.workload), a.batch))
        t_ls = time.perf_counter() - t0
        walls, ips, evals, rounds, tries = [], [], [], 0, 0
        for s in range(seeds):
            r = solve("tile_groups", inst, "sa", seed=s, beta=beta)
            st = r.metrics["solver"]
            walls.append(r.wall_s)
            ips.append(st["iterations_per_s"])
            evals.append(st["segment_cache"])
            rounds = st["iterations"]
            tries = len(st["tries"])
        rows.append((net, len(inst.workload), t_table, t_ls, f"{rounds:,} ({tries})",
                     statistics.fmean(walls), max(walls), statistics.fmean(ips),
                     statistics.fmean(evals)))
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
    if beta == 100:
        ok = all(r[6] < 60 for r in rows if r[0] == "resnet50")
        print(f"\ntarget (ResNet-50, β = 100, < 60 s): {'met' if ok else 'NOT met'}")
    else:
        print("\ntarget (ResNet-50, β = 100, < 60 s): not measured in quick mode")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
