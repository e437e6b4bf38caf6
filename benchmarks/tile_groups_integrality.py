"""Is the dependency-path envelope loose because it mixes layer-table rows fractionally?
(issue 30, docs/tile_groups.md §4.3.) Every tree runs each layer on exactly one row; the
envelope's LP (``PathEnvelope.lp_model``) lets a layer take a fraction of several. This
solves the same model with the row weights binary (a MILP, HiGHS through
``scipy.optimize.milp``; start times and tails stay continuous) at the best known tree's
root run count and latency, and prints the LP's value, the Lagrangian floor the bound
uses, the MILP's dual bound and best value, and the best known's energy:

    python benchmarks/tile_groups_integrality.py
    python benchmarks/tile_groups_integrality.py tg-googlenet-cloud-b1 --factors 1,1.5,3

The MILP's dual bound is a valid floor of the relaxation with integral rows (HiGHS's
tolerances aside), so "MILP dual / LP" is how much integrality alone could add.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

ROWS = ["tg-googlenet-cloud-b1", "tg-resnet50-v1-edge-b8",
        "tg-inception-resnet-v1-cloud-b1", "tg-transformer-set-isca23-cloud-b1"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="*", default=ROWS, help="chipsched-lib tile_groups ids")
    ap.add_argument("--factors", default="1", metavar="F,F,…",
                    help="latencies as multiples of the best known's (default 1)")
    ap.add_argument("--time-limit", type=float, default=90.0, metavar="S",
                    help="seconds per MILP (default 90)")
    args = ap.parse_args()
    factors = [float(f) for f in args.factors.split(",")]

    from scipy.optimize import Bounds, LinearConstraint, linprog, milp

    from chipsched import library
    from chipsched.problems.tile_groups.bound import PathEnvelope, row_terms
    from chipsched.registry import registry

    prob = registry().decision("tile_groups").problem
    print("| instance | R | D / best known's | layers | binaries | LP floor (mJ) | "
          "Lagrangian floor (mJ) | MILP dual bound (mJ) | MILP best (mJ) | status | "
          "MILP dual / LP | MILP s | best known energy (mJ) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    ratios = []
    for id_ in args.ids:
        e = library.entry(id_)
        known = library.best_known(e)
        inst = library.build_instance(e)
        with open(known.path) as fh:
            sol = prob.read_solution(inst, json.load(fh)["solution"], field="solution")
        _, m = prob.evaluate(inst, sol)
        an = inst.analyzer
        terms = row_terms(inst, int(m["root_runs"]))
        pe = PathEnvelope(terms, an.preds, an.G, float(an.hw.dram.bytes_per_s))
        for f in factors:
            d = f * float(m["latency_s"])
            lp = pe.lp_model(d, d)
            if lp is None:
                print(f"| {id_} | {m['root_runs']} | {f:g} | {pe.L} | no row set within D |")
                continue
            nx, n = len(lp.layer), len(lp.objective)
            rows = [LinearConstraint(lp.a_ub, -np.inf, lp.b_ub),
                    LinearConstraint(lp.a_eq, 1.0, 1.0)]
            relaxed = linprog(lp.objective, A_ub=lp.a_ub, b_ub=lp.b_ub, A_eq=lp.a_eq,
                              b_eq=np.ones(pe.L), bounds=(0, None), method="highs")
            if relaxed.status != 0:  # D below the rows' least path latency
                print(f"| {id_} | {m['root_runs']} | {f:g} | {pe.L} | {nx} | infeasible |")
                continue
            t = time.perf_counter()
            whole = milp(lp.objective, integrality=np.r_[np.ones(nx), np.zeros(n - nx)],
                         bounds=Bounds(0, np.r_[np.ones(nx), np.full(n - nx, np.inf)]),
                         constraints=rows, options={"time_limit": args.time_limit})
            secs = time.perf_counter() - t
            mj = 1e3 * lp.energy_scale
            dual = getattr(whole, "mip_dual_bound", np.nan)
            best = whole.fun if whole.x is not None else np.nan
            ratios.append(dual / relaxed.fun)
            status = {0: "optimal", 1: "time limit"}.get(whole.status, whole.message)
            print(f"| {id_} | {m['root_runs']} | {f:g} | {pe.L} | {nx} | "
                  f"{mj * relaxed.fun:.5g} | {1e3 * pe.energy_floor(d):.5g} | "
                  f"{mj * dual:.5g} | {mj * best:.5g} | {status} | {ratios[-1]:.4f} | "
                  f"{secs:.1f} | {1e3 * m['energy_j']:.5g} |", flush=True)
    if ratios:
        print(f"\nMILP dual bound / LP: {min(ratios):.4f}–{max(ratios):.4f} over "
              f"{len(ratios)} latencies")


if __name__ == "__main__":
    main()
