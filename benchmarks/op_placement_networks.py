"""op_placement on real networks (issues 6 and 15, first figure).

ResNet-50, MobileNet-v2 and BERT-base, expanded with the compiler's scalar ops (seed
003), on the NPU+GPU+CPU preset: makespan of seed 003 (the default refined mode and
literal mode), its by-class variants, HEFT, the best single processor, and CP-SAT
(objective and proven bound; warm-started from HEFT, from the best heuristic, and cold
in full mode) under a time limit, and the ``bound`` method (the window decomposition);
every method's distance to the best bound — an upper bound on its gap, the gap itself
where the bound meets a schedule (the optimum is then proven).
Also prints the instances' sizes and the function library's cost/profit table.

    python benchmarks/op_placement_networks.py            # full: 60 s CP-SAT limits
    python benchmarks/op_placement_networks.py --quick    # 10 s limits, no cold run

Prints markdown tables (with the command that reproduces them).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

from chipsched.api import make_instance, solve
from chipsched.instances.chips import get_chip
from chipsched.problems.op_placement import library_rows, lower_bound

NETWORKS = ("resnet50", "mobilenet-v2", "bert-base")
#: label -> (method, parameters); seed003 places ops in idle gaps by default, the
#: "append" variant only after each core's last op
VARIANTS = {"seed003": ("seed003", {}),
            "seed003 (literal)": ("seed003", {"mode": "literal"}),
            "seed003 (literal, append)": ("seed003", {"mode": "literal", "insertion": False}),
            "by-class": ("by-class", {}), "by-complexity": ("by-complexity", {}),
            "heft": ("heft", {}), "cpop": ("cpop", {}), "single": ("single", {})}
HEURISTICS = tuple(VARIANTS)
CHIP = "soc-npu-gpu-cpu"


def ms(x: float | None) -> str:
    return "—" if x is None else f"{x * 1e3:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 s limits, no cold CP-SAT run")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--networks", default=",".join(NETWORKS))
    args = ap.parse_args()
    limit = args.time_limit or (10.0 if args.quick else 60.0)
    nets = [n for n in args.networks.split(",") if n]
    cmd = "python benchmarks/op_placement_networks.py" + (" --quick" if args.quick else "") + \
        (f" --time-limit {args.time_limit:g}" if args.time_limit else "")
    print(f"Command: `{cmd}` (CP-SAT: {args.threads} workers, {limit:g} s; "
          f"{platform.machine()}, Python {platform.python_version()}; the machine's 2 cores "
          "are shared, so times are inflated)\n")

    hw = get_chip(CHIP)
    print(f"### Function library of {CHIP} (from the cost model)\n")
    print("cost = the op's time on the processor; profit P = S + O against the host (cpu); "
          "an op of work 10^(k+0.5) (MACs or ops) in bucket 1ek.\n")
    print("| kind | size | processor | cost (µs) | speed gain S | complexity gain O | "
          "profit P |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in library_rows(hw, buckets=(1, 3, 5, 7)):
        print(f"| {r['kind']} | {r['size_bucket']} | {r['processor']} | "
              f"{r['cost_s'] * 1e6:.4g} | {r['speed_gain']:+.3f} | "
              f"{r['complexity_gain']:+.3f} | {r['profit']:+.3f} |")
    print()

    insts = {}
    print("### Instances (seed-003 expansion, 512 KiB blocks)\n")
    print("| network | ops | tensor | vector | scalar | control-flow | edges | lower bound "
          "(ms) | build (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    for n in nets:
        t0 = time.perf_counter()
        inst = make_instance("op_placement", n, CHIP)
        dt = time.perf_counter() - t0
        insts[n] = inst
        s = inst.summary()
        c = s["classes"]
        print(f"| {n} | {inst.n_ops} | {c.get('tensor', 0)} | {c.get('vector', 0)} | "
              f"{c.get('scalar', 0)} | {s['control_flow_ops']} | {len(inst.edges)} | "
              f"{lower_bound(inst) * 1e3:.4f} | {dt:.2f} |")
    print()

    rows = []
    for n, inst in insts.items():
        res = {label: solve("op_placement", inst, m, **kw)
               for label, (m, kw) in VARIANTS.items()}
        warm = solve("op_placement", inst, "cpsat", time_limit=limit, threads=args.threads,
                     warm_start=res["heft"])
        best = min(res.values(), key=lambda r: r.objective)
        warm_best = solve("op_placement", inst, "cpsat", time_limit=limit,
                          threads=args.threads, warm_start=best)
        cold = None if args.quick else solve("op_placement", inst, "cpsat", time_limit=limit,
                                             threads=args.threads, auto_warm_start=False)
        lb = solve("op_placement", inst, "bound", time_limit=limit, threads=args.threads)
        rows.append((n, res, warm, cold, (best.method, warm_best), lb))
        print(f"[{n} done]", file=sys.stderr, flush=True)

    bound_of = {n: max(b for b in (w.bound, c.bound if c else None, wb.bound, lb.bound)
                       if b is not None) for n, _, w, c, (_, wb), lb in rows}
    best_of = {n: min(r.objective for r in (*res.values(), w, c, wb)
                      if r is not None and r.objective is not None)
               for n, res, w, c, (_, wb), _ in rows}
    print("### Makespan (ms) per method\n")
    print("Heuristics, then CP-SAT: objective (status) and proven bound of each run; "
          "\"best heuristic\" = the heuristic of least makespan on that network.\n")
    head = ["network", *HEURISTICS, "CP-SAT warm (HEFT)", "bound",
            "CP-SAT warm (best heuristic)", "bound", "bound method"]
    if not args.quick:
        head += ["CP-SAT cold", "cold bound"]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for n, res, warm, cold, (best_name, wb), lb in rows:
        cells = [ms(res[m].objective) for m in HEURISTICS]
        cells += [f"{ms(warm.objective)} ({warm.status.value})", ms(warm.bound)]
        cells += [f"{ms(wb.objective)} ({wb.status.value}, from {best_name})", ms(wb.bound)]
        cells += [f"{ms(lb.bound)} ({lb.wall_s:.1f} s)"]
        if not args.quick:
            cells += [f"{ms(cold.objective)} ({cold.status.value})", ms(cold.bound)]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print()
    print("### Distance to the best bound, and gain over the best single processor\n")
    print("distance = (makespan − best bound) / makespan: an upper bound on the gap, the "
          "gap itself where the best bound meets the best schedule (column \"proven\"); "
          "gain = best single processor's makespan / makespan.\n")
    head = ["network", "best bound (ms)", "best schedule (ms)", "proven", *HEURISTICS,
            "CP-SAT"]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for n, res, warm, cold, (_, wb), _ in rows:
        b = bound_of[n]
        proven = "yes" if best_of[n] - b <= 1e-6 * best_of[n] else "no"
        best_cp = min((r for r in (warm, cold, wb) if r is not None and
                       r.objective is not None), key=lambda r: r.objective, default=None)
        cells = []
        for r in [*(res[m] for m in HEURISTICS), best_cp]:
            cells.append("no solution" if r is None else
                         f"{100 * (r.objective - b) / r.objective:.3f} % / "
                         f"{r.metrics['gain_vs_best_single']:.2f}×")
        print(f"| {n} | {b * 1e3:.6f} | {best_of[n] * 1e3:.6f} | {proven} | "
              + " | ".join(cells) + " |")
    print()
    print("### Where the ops go (ops on npu / gpu / cpu) and heuristic run times\n")
    print("| network | " + " | ".join(HEURISTICS) + " | CP-SAT |")
    print("|---|" + "---:|" * (len(HEURISTICS) + 1))
    for n, res, warm, _, _, _ in rows:
        cells = []
        for r in [*(res[m] for m in HEURISTICS), warm]:
            if r.solution is None:
                cells.append(f"— ({r.wall_s:.3g} s)")
                continue
            p = r.metrics["processors"]
            cells.append("/".join(str(p[k]["ops"]) for k in ("npu", "gpu", "cpu")) +
                         f" ({r.wall_s:.3g} s)")
        print(f"| {n} | " + " | ".join(cells) + " |")
    print()
    best = {n: min(np.array([r.objective for r in res.values()])) for n, res, *_ in rows}
    print("best heuristic makespan (ms): " + ", ".join(f"{n} {v * 1e3:.4f}"
                                                       for n, v in best.items()))


if __name__ == "__main__":
    main()
