"""SA quality (issue 4, "Figures"): gap to the brute-force optimum of the full tree space
on tiny networks, gap to the exact segmented-space optimum (CP-SAT, checked by the
MILP) on small ones, and the check that the SA never ends worse than its start.

    python benchmarks/tile_groups_quality.py --quick    # 3 seeds, the smaller cases
    python benchmarks/tile_groups_quality.py            # 10 seeds, all cases
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from chipsched.api import registry, solve
from chipsched.heuristics.tile_groups import SAParams
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network
from chipsched.problems.tile_groups import Instance
from chipsched.workload import Layer, OpKind, Workload


def prefix(w: Workload, k: int) -> Workload:
    """The first k layers of a network (edges among them; the rest dropped)."""
    return Workload(f"{w.name}[:{k}]", w.layers[:k],
                    tuple(e for e in w.edges if e[1] < k), w.precision_bytes)


def chain4() -> Workload:
    layers = tuple(Layer(f"l{i}", OpKind.CONV, K=16, C=16, H=8, W=8, R=3, S=3, in_elems=1024,
                         weight_elems=2304) for i in range(4))
    return Workload("chain4", layers, tuple((i, i + 1, 1024) for i in range(3)))


def diamond4() -> Workload:
    layers = tuple(Layer(f"l{i}", OpKind.CONV, K=16, C=16, H=8, W=8, R=3, S=3, in_elems=1024,
                         weight_elems=2304) for i in range(4))
    return Workload("diamond4", layers, ((0, 1, 1024), (0, 2, 1024), (1, 3, 1024),
                                         (2, 3, 1024)))


def mixed4() -> Workload:
    """Four layers of very different shapes (a conv stem, a depthwise, a 1×1, an fc)."""
    b = [Layer("stem", OpKind.CONV, K=32, C=3, H=16, W=16, R=3, S=3, in_elems=3 * 1024,
               weight_elems=864),
         Layer("dw", OpKind.DEPTHWISE, K=32, C=32, H=16, W=16, R=3, S=3, groups=32,
               in_elems=32 * 256, weight_elems=288),
         Layer("pw", OpKind.CONV, K=64, C=32, H=16, W=16, in_elems=32 * 256, weight_elems=2048),
         Layer("fc", OpKind.FC, K=10, C=64 * 256, in_elems=64 * 256, weight_elems=163840)]
    return Workload("mixed4", tuple(b), ((0, 1, 8192), (1, 2, 8192), (2, 3, 16384)))


def _stats(xs: list[float]) -> tuple[float, float, float]:
    return min(xs), statistics.fmean(xs), max(xs)


def oracle_rows(seeds: int, quick: bool) -> list[dict[str, Any]]:
    cases = [("chain4", chain4(), "tiled-2x2", 2), ("diamond4", diamond4(), "tiled-2x2", 2),
             ("mixed4", mixed4(), "tiled-2x2", 2)]
    if not quick:
        cases += [("mixed4", mixed4(), "tiled-2x2", 4), ("diamond4", diamond4(), "tiled-1x3", 4)]
    rows = []
    for name, w, chip, b in cases:
        inst = Instance(w, get_chip(chip), batch=b, objective="e2d")
        bf = solve("tile_groups", inst, "bruteforce")
        sas = [solve("tile_groups", inst, "sa", seed=s) for s in range(seeds)]
        vals = [r.objective for r in sas]
        starts = [r.metrics["solver"]["start_objective"] for r in sas]
        rows.append({"case": f"{name} on {chip}, B={b}", "trees": bf.metrics["solver"]["trees"],
                     "opt": bf.objective, "bf_s": bf.wall_s, "sa": _stats(vals),
                     "hits": sum(v <= bf.objective * (1 + 1e-9) for v in vals),
                     "below_opt": sum(v < bf.objective * (1 - 1e-9) for v in vals),
                     "worse_than_start": sum(v > s0 * (1 + 1e-12) for v, s0 in
                                             zip(vals, starts, strict=True)),
                     "sa_s": statistics.fmean(r.wall_s for r in sas), "seeds": seeds})
    return rows


def exact_rows(seeds: int, quick: bool, plot: str | None = None) -> list[dict[str, Any]]:
    cases = [("tiny-chain", get_network("tiny-chain"), "edge-4x4", 4),
             ("tiny", get_network("tiny"), "edge-4x4", 4)]
    if not quick:
        cases += [("resnet50[:6]", prefix(get_network("resnet50"), 6), "edge-4x4", 4),
                  ("googlenet[:6]", prefix(get_network("googlenet"), 6), "edge-4x4", 4),
                  ("tiny", get_network("tiny"), "edge-4x4", 1)]
    rows = []
    for k, (name, w, chip, b) in enumerate(cases):
        inst = Instance(w, get_chip(chip), batch=b, objective="e2d")
        cp = solve("tile_groups", inst, "cpsat")
        mi = solve("tile_groups", inst, "milp")
        dp = solve("tile_groups", inst, "dp-seg")
        ls = solve("tile_groups", inst, "ls")
        lp = solve("tile_groups", inst, "lp")
        sas = [solve("tile_groups", inst, "sa", seed=s) for s in range(seeds)]
        vals = [r.objective for r in sas]
        starts = [r.metrics["solver"]["start_objective"] for r in sas]
        if k == 0 and plot:
            from chipsched.plots.tile_groups import plot_pareto_front

            front = [(p["latency_s"], p["energy_j"]) for p in
                     cp.metrics["solver"]["pareto_front"]]
            best_sa = min(sas, key=lambda r: r.objective)
            marks = {m.upper(): (r.metrics["latency_s"], r.metrics["energy_j"])
                     for m, r in (("ls", ls), ("lp", lp), ("sa", best_sa))}
            env = solve("tile_groups", inst, "bound").metrics["solver"]["envelope"]
            plot_pareto_front(front, plot, marks, title=f"segmented-space Pareto front: "
                              f"{name} on {chip}, batch {b}", envelope=env)
        rows.append({"case": f"{name} on {chip}, B={b}", "layers": len(w), "opt": cp.objective,
                     "status": cp.status.value, "milp_agrees": abs(mi.objective - cp.objective)
                     <= 1e-6 * cp.objective, "cp_s": cp.wall_s,
                     "dp_agrees": abs(dp.objective - cp.objective) <= 1e-6 * cp.objective,
                     "dp_s": dp.wall_s,
                     "front": len(cp.metrics["solver"].get("pareto_front", [])),
                     "ls": ls.objective, "lp": lp.objective, "sa": _stats(vals),
                     "worse_than_start": sum(v > s0 * (1 + 1e-12) for v, s0 in
                                             zip(vals, starts, strict=True)),
                     "sa_s": statistics.fmean(r.wall_s for r in sas), "seeds": seeds})
    return rows


def gap(x: float, ref: float) -> str:
    return f"{100 * (x / ref - 1):+.2f} %"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=None, help="SA seeds (10; quick 3)")
    ap.add_argument("--plot", default="docs/img/tile_groups_pareto.png",
                    help="Pareto-front plot of the first segmented case ('' for none)")
    a = ap.parse_args(argv)
    seeds = a.seeds or (3 if a.quick else 10)
    registry()
    t0 = time.perf_counter()
    orows = oracle_rows(seeds, a.quick)
    erows = exact_rows(seeds, a.quick, a.plot or None)
    cmd = "python benchmarks/tile_groups_quality.py " + " ".join(sys.argv[1:] if argv is None
                                                                   else argv)
    d = SAParams()
    print(f"Command: `{cmd.strip()}` (SA defaults: β = {d.beta:g}, T0 = 0.07, α = 8, "
          f"start {d.start!r}, OP1–OP9, {d.tries} tries, the first {d.independent} from the "
          f"start; {time.perf_counter() - t0:.0f} s wall)\n")
    print("SA vs the full-space brute-force optimum (objective E²·D):\n")
    print("| case | trees | optimum | brute force (s) | SA best / mean / worst gap | "
          "seeds at optimum | SA below optimum | SA worse than start | SA (s) |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for r in orows:
        b, m, w = r["sa"]
        print(f"| {r['case']} | {r['trees']:,} | {r['opt']:.4g} | {r['bf_s']:.1f} | "
              f"{gap(b, r['opt'])} / {gap(m, r['opt'])} / {gap(w, r['opt'])} | "
              f"{r['hits']}/{r['seeds']} | {r['below_opt']} | {r['worse_than_start']} | "
              f"{r['sa_s']:.2f} |")
    print("\nSA vs the exact segmented-space optimum (CP-SAT; MILP and dp-seg checked; "
          "E²·D). The SA "
          "searches the larger full space, so a negative gap means it beat the segmented "
          "optimum:\n")
    print("| case | layers | segmented optimum | CP-SAT (s) | MILP agrees | dp-seg agrees "
          "(s) | front points | LS gap | LP gap | SA best / mean / worst gap | "
          "SA worse than start | SA (s) |")
    print("|---|---:|---:|---:|---|---|---:|---:|---:|---|---:|---:|")
    for r in erows:
        b, m, w = r["sa"]
        print(f"| {r['case']} | {r['layers']} | {r['opt']:.4g} ({r['status']}) | "
              f"{r['cp_s']:.1f} | {'yes' if r['milp_agrees'] else 'NO'} | "
              f"{'yes' if r['dp_agrees'] else 'NO'} ({r['dp_s']:.2f}) | {r['front']} | "
              f"{gap(r['ls'], r['opt'])} | {gap(r['lp'], r['opt'])} | "
              f"{gap(b, r['opt'])} / {gap(m, r['opt'])} / {gap(w, r['opt'])} | "
              f"{r['worse_than_start']} | {r['sa_s']:.2f} |")
    bad = sum(r["below_opt"] + r["worse_than_start"] for r in orows) + \
        sum(r["worse_than_start"] + (not r["milp_agrees"]) + (not r["dp_agrees"])
            for r in erows)
    print(f"\nviolations (SA below the full-space optimum, SA worse than its start, MILP or "
          f"dp-seg ≠ CP-SAT): {bad}")
    if a.plot:
        print(f"Pareto-front plot: {a.plot}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
