"""core_assignment on a multicast NoC: what the (λ − 1) packet refinement of
``seed004-plus`` gains over partitions that minimize the synapse cut (issue 11).

Every instance uses the ``multicast`` objective (packet·hops: one packet per spike and
destination core). Rows, each through ``chipsched.solve`` (seed 0, re-evaluated by the
shared evaluator):

1. ``seed004`` — the document's pipeline (cut partition; its placement on the packet
   graph);
2. ``metis`` — METIS's cut partition, seed 004's placement;
3. ``seed004-plus -p partition_objective=cut -p place=swaps`` — the improved cut
   partition, traffic-exact swaps on the packet graph;
4. ``seed004-plus -p place=swaps`` — the same partition refined for packets (the default
   for ``multicast``), same placement;
5. ``seed004-plus`` — 4 with the tabu search placement (the default since issue 31).

Instances: the CNN neuron graphs and a layered random graph, each once as every neuron
spiking once and once with synthetic spike counts (Poisson, mean 4 per vertex, seed 0 —
chipsched runs no simulator; with spikes the instance is on the smallest near-square
array of ``neuro-8x8``'s cores that fits it). Columns: groups, packets, multicast
traffic (packet·hops), its change against row 3, the synapse cut, wall time.

    python benchmarks/core_assignment_multicast.py --quick     # lenet5-neurons
    python benchmarks/core_assignment_multicast.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROWS = (("seed004", "seed004", {}),
        ("metis (seed 004 placement)", "metis", {}),
        ("seed004-plus, cut partition", "seed004-plus", {"partition_objective": "cut",
                                                          "place": "swaps"}),
        ("seed004-plus, packet refinement", "seed004-plus", {"place": "swaps"}),
        ("seed004-plus, packets + tabu", "seed004-plus", {"place": "tabu"}))
REFERENCE = 2  # the row the change is measured against
SPIKE_MEAN = 4


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import numpy as np

    from chipsched.api import solve
    from chipsched.instances.chips import get_chip
    from chipsched.instances.core_assignment import load_instance
    from chipsched.problems.core_assignment import make_instance

    hw = get_chip("neuro-8x8")
    names = ["lenet5-neurons"] if args.quick else [
        "lenet5-neurons", "vgg-cifar-neurons", "resnet-cifar-neurons",
        "layered:layers=10,width=10000,fanin=16,seed=1"]
    cmd = "python benchmarks/core_assignment_multicast.py" + (" --quick" if args.quick else "")
    print(f"\n`{cmd}` — seed {args.seed}; multicast traffic in packet·hops; packets per "
          "inference (spiking once) or per profiling window (spikes); Δ = change of the "
          f"multicast traffic against row {REFERENCE + 1} (the cut partition)\n")
    print("| instance | spikes | mesh | method | groups | packets | multicast traffic | Δ | "
          "cut (synapses) | time (s) |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        base = load_instance(name, hw, objective="multicast")
        spikes = np.random.default_rng(0).poisson(SPIKE_MEAN, base.graph.n)
        with_spikes = make_instance(base.graph, hw, objective="multicast", sized_to_fit=True,
                                    spikes=spikes, name=f"{base.name}+spikes")
        for inst, spk in ((base, "once"), (with_spikes, f"Poisson({SPIKE_MEAN})")):
            out = []
            for label, method, params in ROWS:
                t = time.perf_counter()
                r = solve("core_assignment", inst, method, seed=args.seed, **params)
                out.append((label, r, time.perf_counter() - t))
            ref = out[REFERENCE][1].metrics["multicast_traffic"]
            short = name.split(",")[0] if name.startswith("layered") else name
            for i, (label, r, dt) in enumerate(out):
                m = r.metrics
                tr = m["multicast_traffic"]
                delta = f"{100 * (tr - ref) / ref:+.1f} %" if ref and i != REFERENCE else "—"
                groups = m["solver"].get("groups", m.get("cores_used"))
                print(f"| {short} | {spk} | {inst.rows}×{inst.cols} | {label} | {groups:,} | "
                      f"{m['multicast_packets']:,} | {tr:,} | {delta} | {m['cut_weight']:,} | "
                      f"{dt:.1f} |", flush=True)


if __name__ == "__main__":
    main()
