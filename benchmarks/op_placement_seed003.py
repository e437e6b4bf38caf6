"""Seed 003's thresholds and fusion on real networks (issue 15).

ResNet-50, MobileNet-v2 and BERT-base, expanded with the compiler's scalar ops, on the
NPU+GPU+CPU preset (makespan, ms):

* the sweep th1 × th2 × fusion of the default (refined) mode;
* what each refined choice contributes (one switched back at a time: the look-ahead,
  the compiler order, the least-cost choice via th2) and literal mode;
* the energy objective: seed 003 against the best single processor and Σ min energy;
* the instances with the loop-fusion scalar ops of [0047] (``fuse_loops=True``);
* the function library's cost and profit values in both modes;
* random task graphs (``random:n=40,p=3,het=0.5``, seeds 0–59, ccr 0, 1, 3): seed 003's
  makespan relative to HEFT's — off the networks it was tuned on.

Every run is deterministic and takes well under a second.

    python benchmarks/op_placement_seed003.py

Prints markdown tables (with the command that reproduces them).
"""

from __future__ import annotations

import argparse
import itertools
import platform

import numpy as np

from chipsched.api import make_instance, solve
from chipsched.instances.chips import get_chip
from chipsched.problems.op_placement import library_rows

NETWORKS = ("resnet50", "mobilenet-v2", "bert-base")
CHIP = "soc-npu-gpu-cpu"
TH1 = (-0.5, 0.0, 0.25, 0.5)
TH2 = (1.0, 1.1, 1.25, 1.5, 2.0)
#: literal mode's profit is 0 on the host, so th1 acts as a switch at 0
LITERAL_TH1 = (-1.0, -0.5, 0.0, 0.01, 0.25)
#: label -> seed003 parameters: the default, one refined choice undone at a time, literal
ABLATION = {
    "default (refined)": {},
    "no look-ahead": {"lookahead": False},
    "program order": {"order": "program"},
    "no fusion": {"fusion": False},
    "th2 = 1.5 (first-fit slack)": {"th2": 1.5},
    "append, no gaps": {"insertion": False},
    "literal": {"mode": "literal"},
    "literal, th2 = 1": {"mode": "literal", "th2": 1.0},
    "literal, no fusion": {"mode": "literal", "fusion": False},
}


def ms(x: float) -> str:
    return f"{x * 1e3:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default=",".join(NETWORKS))
    args = ap.parse_args()
    nets = [n for n in args.networks.split(",") if n]
    print(f"Command: `python benchmarks/op_placement_seed003.py` ({platform.machine()}, "
          f"Python {platform.python_version()}); makespan in ms on {CHIP}\n")
    insts = {n: make_instance("op_placement", n, CHIP) for n in nets}
    ref = {n: {m: solve("op_placement", i, m).objective for m in ("by-class", "heft")}
           for n, i in insts.items()}

    print("### Threshold and fusion sweep of the default mode\n")
    print("Each cell: makespan (ms) on " + " / ".join(nets) + "; **bold** = no worse than "
          "by-class on all of them.\n")
    print("| th1 | th2 | fusion on | fusion off |")
    print("|---:|---:|---|---|")
    for th1, th2 in itertools.product(TH1, TH2):
        cells = []
        for fusion in (True, False):
            vals = [solve("op_placement", insts[n], "seed003", th1=th1, th2=th2,
                          fusion=fusion).objective for n in nets]
            text = " / ".join(ms(v) for v in vals)
            ok = all(v <= ref[n]["by-class"] * (1 + 1e-12) for n, v in zip(nets, vals,
                                                                           strict=True))
            cells.append(f"**{text}**" if ok else text)
        print(f"| {th1:g} | {th2:g} | " + " | ".join(cells) + " |")
    print()

    print("### Literal mode: th1 is a switch (th2 = 1.5, fusion on)\n")
    print("| th1 | " + " | ".join(nets) + " |")
    print("|---:|" + "---:|" * len(nets))
    for th1 in LITERAL_TH1:
        vals = [solve("op_placement", insts[n], "seed003", mode="literal", th1=th1).objective
                for n in nets]
        print(f"| {th1:g} | " + " | ".join(ms(v) for v in vals) + " |")
    print()

    print("### What each choice contributes\n")
    print("| variant | " + " | ".join(nets) + " | outcomes pass/fused/fallback |")
    print("|---|" + "---:|" * len(nets) + "---|")
    for label, kw in ABLATION.items():
        res = [solve("op_placement", insts[n], "seed003", **kw) for n in nets]
        outs = " · ".join("/".join(str(r.metrics["solver"].get(k, 0))
                                   for k in ("pass", "fused", "fallback")) for r in res)
        print(f"| {label} | " + " | ".join(ms(r.objective) for r in res) + f" | {outs} |")
    for m in ("by-class", "heft"):
        print(f"| {m} | " + " | ".join(ms(ref[n][m]) for n in nets) + " | |")
    print()

    print("### Energy objective (mJ)\n")
    print("| network | seed003 (default) | seed003 (literal) | best single processor | "
          "Σ min energy per op | by-class | heft |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for n in nets:
        e = insts[n].with_objective("energy")
        vals = [solve("op_placement", e, "seed003").objective,
                solve("op_placement", e, "seed003", mode="literal").objective,
                solve("op_placement", e, "single").objective,
                float(e.energy.min(axis=1).sum()),
                solve("op_placement", e, "by-class").objective,
                solve("op_placement", e, "heft").objective]
        print(f"| {n} | " + " | ".join(f"{v * 1e3:.6f}" for v in vals) + " |")
    print()

    print("### With the loop-fusion scalar ops of [0047] (`fuse_loops=True`)\n")
    print("| network | ops | fuse ops | control flow | seed003 | literal | by-class | heft |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in nets:
        f = make_instance("op_placement", n, CHIP, fuse_loops=True)
        vals = [solve("op_placement", f, "seed003").objective,
                solve("op_placement", f, "seed003", mode="literal").objective,
                solve("op_placement", f, "by-class").objective,
                solve("op_placement", f, "heft").objective]
        print(f"| {n} | {f.n_ops} | {sum(k == 'fuse' for k in f.op_kind)} | "
              f"{int(f.control_flow.sum())} | " + " | ".join(ms(v) for v in vals) + " |")
    print()

    print(f"### The function library of {CHIP}: cost and profit in both modes\n")
    print("An op of work 10^(k+0.5) (MACs or ops) in bucket 1ek, int8. Literal P = S + O "
          "against the host (cpu); refined P against the mean of the processors: S for "
          "the makespan, O for the energy.\n")
    print("| kind | size | processor | cost (µs) | literal S | literal O | literal P | "
          "refined P (makespan) | refined P (energy) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for r in library_rows(get_chip(CHIP), buckets=(1, 3, 5, 7)):
        print(f"| {r['kind']} | {r['size_bucket']} | {r['processor']} | "
              f"{r['cost_s'] * 1e6:.4g} | {r['speed_gain']:+.3f} | "
              f"{r['complexity_gain']:+.3f} | {r['profit']:+.3f} | "
              f"{r['speed_gain_vs_mean']:+.3f} | {r['complexity_gain_vs_mean']:+.3f} |")

    print()

    print("### Random task graphs: makespan relative to HEFT's\n")
    print("`random:n=40,p=3,seed=S,ccr=C,het=0.5`, S = 0…59, C ∈ {0, 1, 3} (180 graphs).\n")
    print("| variant | mean ratio | median | better than HEFT | worse than HEFT |")
    print("|---|---:|---:|---:|---:|")
    graphs = [make_instance("op_placement", f"random:n=40,p=3,seed={s},ccr={c:g},het=0.5",
                            CHIP) for s in range(60) for c in (0.0, 1.0, 3.0)]
    heft = np.array([solve("op_placement", g, "heft").objective for g in graphs])
    for label, kw in (("seed003 (default)", {}), ("seed003 (literal)", {"mode": "literal"}),
                      ("seed003, program order", {"order": "program"}),
                      ("by-class", None)):
        vals = np.array([solve("op_placement", g, "by-class" if kw is None else "seed003",
                               **(kw or {})).objective for g in graphs])
        r = vals / heft
        print(f"| {label} | {r.mean():.3f} | {np.median(r):.3f} | "
              f"{int((r < 1 - 1e-9).sum())} | {int((r > 1 + 1e-9).sum())} |")


if __name__ == "__main__":
    main()
