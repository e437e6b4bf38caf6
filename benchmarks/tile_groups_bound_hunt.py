"""A hunt for a counterexample to the tile_groups bound (issue 30): random walks of the
SA's operators over the trees of random 4–7-layer DAGs of 3×3 convolutions (compute-heavy
ones among them, so compute decides many latencies) on 2–16-tile chips with default,
64 KiB and 16 KiB buffers, batches 1–8, every objective and both weight accountings.
Every feasible tree visited is checked against the theorem behind the path envelope
(its latency is at least ``path_latency`` of the rows it uses) and against
``full_space_bound``; the first violation is printed with its tree and the run exits 1.

    python benchmarks/tile_groups_bound_hunt.py --seconds 400 --seed 1
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace


def _network(rng: random.Random, n: int):
    from chipsched.workload import Layer, OpKind, Workload

    layers, edges = [], []
    for i in range(n):
        k, c, h = rng.choice([8, 64, 256]), rng.choice([8, 64, 128]), rng.choice([4, 16, 32])
        layers.append(Layer(f"l{i}", OpKind.CONV, K=k, C=c, H=h, W=h, R=3, S=3,
                            in_elems=c * h * h, weight_elems=9 * k * c))
    for d in range(1, n):
        for s in range(d):
            if rng.random() < (0.6 if s == d - 1 else 0.3):
                edges.append((s, d, min(layers[s].out_elems, layers[d].in_elems)))
    return Workload("hunt", tuple(layers), tuple(edges))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=150, help="operator moves per instance")
    args = ap.parse_args()

    from chipsched.errors import InputError
    from chipsched.heuristics import tile_groups as H
    from chipsched.instances.chips import get_chip
    from chipsched.problems.tile_groups import Infeasible, Instance
    from chipsched.problems.tile_groups.bound import full_space_bound, tree_path_latency

    rng = random.Random(args.seed)
    t_end = time.perf_counter() + args.seconds
    n_inst = n_tree = tight = multi = 0
    closest = 0.0
    while time.perf_counter() < t_end:
        hw = get_chip(rng.choice(["tiled-1x2", "tiled-1x3", "tiled-2x2", "edge-4x4"]))
        buf = rng.choice([None, 65536, 16384])
        if buf:
            hw = replace(hw, unit=replace(hw.unit, buffer_bytes=buf))
        try:
            inst = Instance(_network(rng, rng.randint(4, 7)), hw,
                            batch=rng.choice([1, 2, 4, 8]),
                            objective=rng.choice(["latency", "energy", "edp", "e2d", "ed2"]),
                            weight_accounting=rng.choice(["per_run", "set"]))
            tree = H.initial_tree(inst)[0]
        except (InputError, Infeasible):
            continue  # a network no tree can run on that chip
        an = inst.analyzer
        n_inst += 1
        fb = full_space_bound(inst)
        ctx = H._Ctx(frozenset((s, d) for s, d, _ in inst.workload.edges), inst.batch, "full")
        weights = {k: 1.0 for k in H.OPERATORS}
        if inst.batch == 1:
            weights["op5"] = weights["op6"] = 0.0
        for _ in range(args.steps):
            moved = H.mutate(tree, rng, ctx, weights)
            if moved is None:
                break
            try:
                t = an.totals(moved[0])
            except Infeasible:
                continue
            tree = moved[0]
            n_tree += 1
            multi += t.root_runs > 1
            path = tree_path_latency(inst, tree)
            obj = inst.objective(t.energy.total, t.latency)
            closest = max(closest, fb.objective / obj)
            tight += t.latency <= path * (1 + 1e-6)
            if t.latency < path * (1 - 1e-9) or obj < fb.objective * (1 - 1e-9):
                print(f"COUNTEREXAMPLE on {inst.workload!r} ({hw.name}, buffer {buf}, batch "
                      f"{inst.batch}): latency {t.latency:.6g} vs path {path:.6g}, objective "
                      f"{obj:.6g} vs bound {fb.objective:.6g}\n{tree}")
                return 1
    print(f"{n_inst} instances, {n_tree} feasible trees ({multi} with a root run count above "
          f"1): none below the bound or faster than its rows' dependency paths ({tight} "
          f"exactly as fast); closest bound / objective {closest:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
