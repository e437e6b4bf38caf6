"""Seed 001 on the NPU → GPU → CPU chain (issue 5): throughput under a changing load.

For each network: the threshold split (seed 001, steps 1–2; thresholds 2 ms), then
frames through the pipeline (triple buffering, one buffer per sub-model) while the
background load changes phase by phase — idle, NPU 60 % busy, GPU 70 % busy, CPU 80 %
busy, idle — each phase lasting 150 periods of the initial split. Runs: static split
(no rebalancing), the history policy and the real-time policy (each moving the
boundary that best balances the pair, and one layer per frame). Tables: throughput,
latency, moves; per phase, the gap of the settled split's period to the exact optimum
for the phase's loads (over every split) and to the best split on the same processors.
Plot: ``docs/img/region_split_throughput.png``.

    python benchmarks/region_split_dynamic.py --quick     # ResNet-50 only, ~10 s
    python benchmarks/region_split_dynamic.py             # five networks
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import numpy as np

import chipsched
from chipsched.heuristics.region_split import settled_vs_optimum, simulate, threshold_split
from chipsched.instances.region_split import phase_trace
from chipsched.plots.region_split import plot_throughput
from chipsched.problems.region_split import evaluate, soc_solution

NETWORKS = ["resnet50", "googlenet", "mobilenet-v2", "bert-base", "transformer-base"]
PHASES = [[0.0, 0.0, 0.0], [0.6, 0.0, 0.0], [0.0, 0.7, 0.0], [0.0, 0.0, 0.8], [0.0, 0.0, 0.0]]
RUNS = [("static", "none", None), ("history", "history", None),
        ("realtime", "realtime", None), ("history, 1 layer/frame", "history", 1),
        ("realtime, 1 layer/frame", "realtime", 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--img", type=Path, default=Path("docs/img"))
    ap.add_argument("--phase-periods", type=int, default=150)
    a = ap.parse_args()
    a.img.mkdir(parents=True, exist_ok=True)
    cmd = "python benchmarks/region_split_dynamic.py" + (" --quick" if a.quick else "")
    print(f"# seed 001 dynamic rebalancing — `{cmd}`")
    print(f"# {platform.machine()}, python {platform.python_version()}, numpy {np.__version__};"
          " simulated time, not wall time")
    nets = ["resnet50"] if a.quick else NETWORKS
    summary, phases_rows = [], []
    for net in nets:
        inst = chipsched.make_instance("region_split", net, "soc-npu-gpu-cpu")
        regs, procs, seen = threshold_split(inst)
        period0 = evaluate(inst, soc_solution(regs, procs))[1]["period_s"]
        tr = phase_trace(PHASES, a.phase_periods * period0)
        frames = int(a.phase_periods * len(PHASES) * 1.1)
        sims = {}
        for label, policy, step in RUNS:
            sim = simulate(inst, regs, procs, frames=frames, policy=policy, trace=tr, step=step)
            sims[label] = sim
            rep = settled_vs_optimum(inst, sim, tr)
            span = sim.end[-1] - sim.start[0]
            summary.append((net, len(regs), label, frames / span, float(sim.latency.mean()),
                            len(sim.moves), max(r.gap for r in rep)))
            for r in rep:
                phases_rows.append((net, label, r.phase, r.loads, r.regions, r.period_s,
                                    r.optimum_s, r.same_processors_s))
        if net == nets[0]:
            end = max(s.end[-1] for s in sims.values())
            opt_lines = [(float(tr.times[r.phase]),
                          float(tr.times[r.phase + 1]) if r.phase + 1 < len(tr.times) else end,
                          1.0 / r.optimum_s)
                         for r in settled_vs_optimum(inst, sims["static"], tr)]
            p = plot_throughput({k: sims[k] for k in ("static", "history", "realtime")},
                                a.img / "region_split_throughput.png", tr.times, opt_lines,
                                title=f"{net} on soc-npu-gpu-cpu, background load npu/gpu/cpu:\n"
                                + " → ".join("/".join(f"{x:.1f}" for x in ph) for ph in PHASES))
            print(f"\nplot: {p}")
        print(f"\n{net}: threshold split → {len(regs)} sub-models on "
              f"{[inst.proc_name(p) for p in procs]}, layers {[b - a + 1 for a, b in regs]}, "
              f"predicted {', '.join(f'{t * 1e3:.2f} ms' for t in seen)}")
    print("\n### Throughput, latency and moves (whole trace)\n")
    print("| network | sub-models | run | mean throughput (frames/s) | mean latency (ms) | "
          "moves | worst settled gap |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for net, R, label, tp, lat, mv, gap in summary:
        print(f"| {net} | {R} | {label} | {tp:.1f} | {lat * 1e3:.2f} | {mv} | "
              f"{_gap(1 + gap, 1)} |")
    print("\n### Settled split per load phase vs the exact optimum for the phase's loads\n")
    print("| network | run | phase | loads npu/gpu/cpu | layers per sub-model | period (ms) | "
          "optimum (ms) | gap | best on same processors (ms) |")
    print("|---|---|---:|---|---|---:|---:|---:|---:|")
    for net, label, ph, loads, regs, per, opt, same in phases_rows:
        if label in ("static", "history", "realtime"):
            print(f"| {net} | {label} | {ph} | {'/'.join(f'{x:.1f}' for x in loads)} | "
                  f"{[b - a + 1 for a, b in regs]} | {per * 1e3:.3f} | {opt * 1e3:.3f} | "
                  f"{_gap(per, opt)} | {same * 1e3:.3f} |")


def _gap(x: float, ref: float) -> str:
    g = x / ref - 1
    return f"{100 * (g if abs(g) > 1e-9 else 0.0):.1f} %"


if __name__ == "__main__":
    main()
