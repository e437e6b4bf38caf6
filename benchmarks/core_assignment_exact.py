"""core_assignment exact placement: the largest mesh each exact method proves optimal
within a time limit (60 s by default).

Instances: G groups on an R×C mesh with G = R·C (every core used), flows of a random
sparse group graph like the quotient graphs of seed 004's partitions — each group talks
to 3–5 random others plus its successor in id order, weights 1–20 — seeded, so that every
method sees the same instances. For each mesh (growing) each method runs until it fails
to prove optimality within the limit; larger meshes are then skipped for that method
("—"). Cells: time to proof, or ``limit`` with the gap at the limit. CP-SAT uses the
threads of ``--threads`` (default 2, the machine's cores).

    python benchmarks/core_assignment_exact.py --quick    # 10 s, meshes up to 3×4
    python benchmarks/core_assignment_exact.py            # 60 s, meshes up to 6×6
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MESHES = [(2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (4, 5), (5, 5), (5, 6), (6, 6)]
METHODS = ("cpsat-place", "milp-place", "bnb-place")


def group_graph(G: int, seed: int):
    from chipsched.neurongraph import NeuronGraph

    rng = np.random.default_rng(seed)
    us, vs = [], []
    for g in range(G):
        k = int(rng.integers(3, 6))
        for h in rng.choice(G, size=min(k, G - 1), replace=False):
            if h != g:
                us.append(g)
                vs.append(int(h))
        if g + 1 < G:
            us.append(g)
            vs.append(g + 1)
    w = rng.integers(1, 21, len(us))
    return NeuronGraph.from_edges(np.ones(G, np.int64), us, vs, w, name=f"groups{G}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    tl = 10.0 if args.quick else args.time_limit
    meshes = MESHES[:4] if args.quick else MESHES

    import chipsched.formulations.core_assignment  # noqa: F401
    import chipsched.heuristics.core_assignment  # noqa: F401
    import chipsched.instances.core_assignment  # noqa: F401
    from chipsched.api import solve
    from chipsched.instances.chips import get_chip
    from chipsched.problems.core_assignment import Instance
    from chipsched.result import Status

    alive = dict.fromkeys(METHODS, True)
    lines = []
    for R, C in meshes:
        G = R * C
        inst = Instance(f"{R}x{C}", group_graph(G, 100 + G), get_chip("neuro-8x8"), R, C, 1)
        heur = solve("core_assignment", inst, "seed004-plus")
        cells = []
        for m in METHODS:
            if not alive[m]:
                cells.append("—")
                continue
            r = solve("core_assignment", inst, m, time_limit=tl,
                      threads=args.threads)
            if r.status is Status.OPTIMAL:
                cells.append(f"{r.wall_s:.1f} s (opt {r.objective:,.0f})")
            else:
                alive[m] = False
                gap = f"{100 * r.gap:.1f} %" if r.gap is not None else "no bound"
                cells.append(f"limit (obj {r.objective:,.0f}, gap {gap})"
                             if r.objective is not None else f"limit ({r.status.value})")
            print(f"{R}x{C} {m}: {cells[-1]}", file=sys.stderr)
        lines.append(f"| {R}×{C} | {G} | {inst.graph.m} | {heur.objective:,.0f} | "
                     + " | ".join(cells) + " |")
    cmd = "python benchmarks/core_assignment_exact.py" + (" --quick" if args.quick else "")
    print(f"\n`{cmd}` — limit {tl:.0f} s per run, {args.threads} threads; seed004-plus "
          "shown for reference\n")
    print("| mesh | groups | edges | seed004-plus | " + " | ".join(METHODS) + " |")
    print("|---|---:|---:|---:|" + "---|" * len(METHODS))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
