"""region_split on chiplet grids (issue 5): seed 000 vs the exact optimum vs baselines.

Prints markdown tables:

A. objective of seed 000, equal-layers and equal-compute vs the proven optimum (DP) —
   gap and time — for the networks × chiplet grids (N NPUs, w×w arrays varied) ×
   objectives cost (the document's additive cost) and period;
B. the period as sub-chiplets are added (1×1 … 6×6), with the plot
   ``docs/img/region_split_period_vs_chiplets.png`` and the placement picture
   ``docs/img/region_split_placement.png``;
C. the target: do the exact models (DP, CP-SAT, MILP) prove the optimum for every
   network on 36 sub-chiplets within 10 s? (time limit 60 s per run).

    python benchmarks/region_split_chiplet.py --quick     # ~1 min
    python benchmarks/region_split_chiplet.py             # full (~15 min on 2 cores)
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

import chipsched
from chipsched.plots.region_split import plot_period_vs_chiplets, plot_placement

NETWORKS = ["resnet50", "googlenet", "mobilenet-v2", "bert-base", "transformer-base"]
CHIPS = ["chiplet-2x2", "chiplet-4x4", "chiplet-6x6", "chiplet-4x4-n8-w16",
         "chiplet-6x6-n2-w64"]
GRIDS = [(1, 1), (1, 2), (2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (4, 5), (5, 5), (5, 6), (6, 6)]
HEUR = ["seed000", "equal-layers", "equal-compute"]


def _pct(x: float, ref: float) -> str:
    return f"{100 * (x / ref - 1):+.1f} %"


def table_a(nets: list[str], chips: list[str], objectives: list[str]) -> None:
    print("\n### A. Seed 000 and baselines vs the proven optimum\n")
    print("| network | chip | objective | optimum (DP) | regions | DP time | seed 000 | gap | "
          "regions | equal-layers gap | equal-compute gap |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for net in nets:
        for chip in chips:
            for obj in objectives:
                inst = chipsched.make_instance("region_split", net, chip, objective=obj)
                opt = chipsched.solve("region_split", inst, "dp")
                res = {m: chipsched.solve("region_split", inst, m) for m in HEUR}
                s = res["seed000"]
                print(f"| {net} | {chip} | {obj} | {opt.objective * 1e6:.2f} µs | "
                      f"{len(opt.solution.regions)} | {opt.wall_s:.2f} s | "
                      f"{s.objective * 1e6:.2f} µs | {_pct(s.objective, opt.objective)} | "
                      f"{len(s.solution.regions)} | "
                      f"{_pct(res['equal-layers'].objective, opt.objective)} | "
                      f"{_pct(res['equal-compute'].objective, opt.objective)} |", flush=True)


def table_b(nets: list[str], grids: list[tuple[int, int]], img: Path) -> None:
    print("\n### B. Period as sub-chiplets are added (objective period; µs)\n")
    print("| network | method | " + " | ".join(f"{r}×{c}" for r, c in grids) + " |")
    print("|---|---|" + "---:|" * len(grids))
    curves: dict[str, dict[str, list[tuple[int, float]]]] = {}
    for net in nets:
        curves[net] = {m: [] for m in ("dp", *HEUR)}
        for r, c in grids:
            inst = chipsched.make_instance("region_split", net, f"chiplet-{r}x{c}",
                                           objective="period")
            for m in curves[net]:
                curves[net][m].append((r * c, chipsched.solve("region_split", inst,
                                                              m).objective))
        for m, pts in curves[net].items():
            print(f"| {net} | {'optimum (dp)' if m == 'dp' else m} | " +
                  " | ".join(f"{v * 1e6:.1f}" for _, v in pts) + " |", flush=True)
    p = plot_period_vs_chiplets(curves, img / "region_split_period_vs_chiplets.png",
                                title="pipeline period vs sub-chiplets (4 NPUs of 32×32 each)")
    print(f"\nplot: {p}")
    inst = chipsched.make_instance("region_split", nets[0], "chiplet-6x6", objective="period")
    r = chipsched.solve("region_split", inst, "dp")
    from chipsched.problems.region_split import describe_regions

    labels = [f"{d['first']}…{d['last']} ({d['layers']} layers, {m} sub-chiplets)"
              for d, m in zip(describe_regions(inst, r.solution), r.solution.counts,
                              strict=True)]
    p = plot_placement(6, 6, r.solution.placement, img / "region_split_placement.png",
                       labels=labels, title=f"{nets[0]} on chiplet-6x6: optimal period "
                       f"{r.objective * 1e6:.1f} µs, serpentine placement")
    print(f"plot: {p}")


def table_c(nets: list[str], objectives: list[str], limit: float, methods: list[str]) -> None:
    print(f"\n### C. Exact models on 36 sub-chiplets (chiplet-6x6), time limit {limit:g} s\n")
    print("| network | objective | items | method | status | objective | time | options "
          "kept / total | ≤ 10 s? |")
    print("|---|---|---:|---|---|---:|---:|---:|---|")
    for net in nets:
        for obj in objectives:
            inst = chipsched.make_instance("region_split", net, "chiplet-6x6", objective=obj)
            ref = None
            for m in methods:
                t0 = time.perf_counter()
                r = chipsched.solve("region_split", inst, m, time_limit=limit)
                wall = time.perf_counter() - t0
                st = r.metrics.get("solver", {})
                kept = f"{st['options']:,} / {st['options_total']:,}" if "options" in st \
                    else ""
                ref = r.objective if ref is None else ref
                if abs(r.objective - ref) <= 1e-6 * ref:
                    same = ""
                elif r.status.value == "optimal":
                    same = " (**≠ dp: a bug**)"
                else:
                    gap = "" if r.bound is None else f", bound {r.bound * 1e6:.3f}"
                    same = f" ({_pct(r.objective, ref)} vs dp{gap})"
                ok = "yes" if r.status.value == "optimal" and wall <= 10 else "**no**"
                print(f"| {net} | {obj} | {inst.n_items} | {m} | {r.status.value} | "
                      f"{r.objective * 1e6:.3f} µs{same} | {wall:.2f} s | {kept} | {ok} |",
                      flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two networks, small grids")
    ap.add_argument("--img", type=Path, default=Path("docs/img"))
    ap.add_argument("--limit", type=float, default=60.0, help="time limit of part C (s)")
    ap.add_argument("--parts", default="abc")
    a = ap.parse_args()
    a.img.mkdir(parents=True, exist_ok=True)
    cmd = "python benchmarks/region_split_chiplet.py" + (" --quick" if a.quick else "")
    print(f"# region_split on chiplet grids — `{cmd}`")
    print(f"# {platform.machine()}, python {platform.python_version()}, numpy "
          f"{np.__version__}; 2 shared cores: times are inflated by other jobs")
    nets = ["resnet50", "mobilenet-v2"] if a.quick else NETWORKS
    if "a" in a.parts:
        table_a(nets, ["chiplet-2x2", "chiplet-4x4"] if a.quick else CHIPS, ["cost", "period"])
    if "b" in a.parts:
        table_b(nets, GRIDS[:7] if a.quick else GRIDS, a.img)
    if "c" in a.parts:
        table_c(["resnet50"] if a.quick else NETWORKS,
                ["period"] if a.quick else ["cost", "period", "sync_latency"],
                min(a.limit, 10.0) if a.quick else a.limit, ["dp", "cpsat", "milp"])
    sys.stdout.flush()


if __name__ == "__main__":
    main()
