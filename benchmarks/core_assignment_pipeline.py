"""core_assignment stage by stage: seed 004's pipeline with each stage swapped for a
stronger one, and what each swap gains (issue 11).

Rows, each through ``chipsched.solve`` (seed 0, re-evaluated by the shared evaluator):

1. ``seed004`` — the document: its partition, recursive-bisection placement, its
   force-directed swaps;
2. ``seed004-plus -p place=force`` — the improved partition (heavy-edge matching to a
   small graph, size bisection with FM, k-way FM on every level), the document's
   placement;
3. ``seed004-plus -p place=swaps -p vertex_moves=0`` — the same partition, traffic-exact
   swaps (the default before issue 31); then the same + neuron moves and swaps on the
   mesh;
4. ``seed004-plus -p place=tabu -p vertex_moves=0`` — the same partition, tabu search
   (Ro-TS up to 256 cores, the sparse search above); then ``seed004-plus``, its default
   since issue 31: the same + the neuron moves;
5. ``metis`` and ``metis -p placement=tabu`` — METIS's partition (its own part count)
   with the document's placement and with the tabu search, for reference;
6. ``scotch`` — Scotch's static mapping onto a mesh2D target (issue 31), and its k-way
   partition with the tabu search.

Columns: groups, cut (synapses), traffic (synapse·hops), multicast traffic
(packet·hops), wall time, and the change of traffic against the row above.

    python benchmarks/core_assignment_pipeline.py --quick     # lenet5-neurons
    python benchmarks/core_assignment_pipeline.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROWS = (("seed004", "seed004", {}),
        ("seed004-plus, place=force", "seed004-plus", {"place": "force", "vertex_moves": 0}),
        ("seed004-plus (swaps)", "seed004-plus", {"place": "swaps", "vertex_moves": 0}),
        ("seed004-plus (swaps + neuron moves)", "seed004-plus", {"place": "swaps"}),
        ("seed004-plus, place=tabu", "seed004-plus", {"place": "tabu", "vertex_moves": 0}),
        ("seed004-plus, place=tabu + neuron moves: the default", "seed004-plus", {}),
        ("metis (seed 004 placement)", "metis", {}),
        ("metis, placement=tabu", "metis", {"placement": "tabu"}),
        ("scotch (static mapping)", "scotch", {}),
        ("scotch partition, placement=tabu", "scotch", {"placement": "tabu"}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from chipsched.api import solve
    from chipsched.instances.chips import get_chip
    from chipsched.instances.core_assignment import load_instance

    hw = get_chip("neuro-8x8")
    names = ["lenet5-neurons"] if args.quick else [
        "lenet5-neurons", "vgg-cifar-neurons", "resnet-cifar-neurons",
        "layered:layers=10,width=10000,fanin=16,seed=1"]
    cmd = "python benchmarks/core_assignment_pipeline.py" + (" --quick" if args.quick else "")
    print(f"\n`{cmd}` — seed {args.seed}; traffic in synapse·hops, multicast in "
          "packet·hops (one packet per neuron and destination core); Δ = traffic change "
          "against the row above\n")
    print("| instance | mesh | pipeline | groups | cut | traffic | Δ traffic | multicast | "
          "time (s) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        inst = load_instance(name, hw)
        prev = None
        for label, method, params in ROWS:
            t = time.perf_counter()
            r = solve("core_assignment", inst, method, seed=args.seed, **params)
            dt = time.perf_counter() - t
            m = r.metrics
            tr = m["traffic"]
            delta = "" if prev is None or label.startswith(("metis (", "scotch (")) else \
                f"{100 * (tr - prev) / prev:+.1f} %"
            prev = tr
            groups = m["solver"].get("groups", m.get("cores_used"))
            short = name.split(",")[0] if name.startswith("layered") else name
            print(f"| {short} | {inst.rows}×{inst.cols} | {label} | {groups:,} | "
                  f"{m['cut_weight']:,} | {tr:,} | {delta} | {m['multicast_traffic']:,} | "
                  f"{dt:.1f} |", flush=True)


if __name__ == "__main__":
    main()
