"""What a structural bound for tile_groups would face (issue 30, part 2): two facts
measured on SET's grid, for whoever builds it.

* **How many orders.** A tree's nodes cover contiguous runs of a topological order, so
  a DP over nested cuts that covers every order runs over pairs of ideals (down-sets)
  of the layer DAG (each node is J \\ I for ideals I ⊂ J). Per network: layers, edges,
  and the ideals counted (up to ``--max-ideals``; ``>N`` when there are more).
* **How much of the chip the best trees leave idle.** The full-space bound (§4.2–4.3
  of docs/tile_groups.md) lets busy tile-time fill all G tiles (Σ busy ≤ G·D). An S cut
  reserves each child's tiles for the whole cut, so a pipeline's fast stages hold their
  tiles while they wait. Per configuration: the best known tree's busy tile-time (tiles
  used × compute time of every leaf run) over G × its latency, and the same over its
  segments bound by compute only (where DRAM and NoC do not stretch the time).

    python benchmarks/tile_groups_structure_probe.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NETWORKS = ("resnet50-v1", "googlenet", "inception-resnet-v1", "pnasnet5-large",
            "transformer-set-isca23")


def busy_shares(instance, solution) -> tuple[int, int, float, float]:
    """Segments, compute-bound segments, busy tile-time / (G·latency) and the same over
    the compute-bound segments only (jobs in DRAM- or NoC-bound segments are stretched to
    the segment's time, so only there is idle time the pipeline's)."""
    from chipsched.problems.tile_groups.evaluate import analyze

    a = analyze(instance, solution)
    G = instance.analyzer.G
    segs = a.totals.segments
    busy_seg = np.zeros(len(segs))
    for j in a.jobs:
        busy_seg[j.segment] += j.used * (j.end - j.start)
    cb = [i for i, c in enumerate(segs) if c.bound_by == "compute"]
    cb_time = sum(segs[i].time for i in cb) * a.totals.root_runs
    share_cb = float(busy_seg[cb].sum() / (G * cb_time)) if cb_time > 0 else float("nan")
    return (len(segs), len(cb), float(busy_seg.sum() / (G * a.totals.latency)), share_cb)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-ideals", type=int, default=300_000)
    args = ap.parse_args()

    from chipsched import library
    from chipsched.formulations.region_split.ideals import item_ideals
    from chipsched.instances.networks import get_network
    from chipsched.problems.tile_groups.instance import Solution

    print("| network | layers | edges | ideals | seconds |")
    print("|---|---:|---:|---:|---:|")
    for name in NETWORKS:
        w = get_network(name)
        edges = np.array([(p, c) for p, c, *_ in w.edges], dtype=np.int64)
        t = time.perf_counter()
        memb = item_ideals(len(w.layers), edges, args.max_ideals)
        n = f">{args.max_ideals:,}" if memb is None else f"{len(memb):,}"
        print(f"| {name} | {len(w.layers)} | {len(edges)} | {n} | "
              f"{time.perf_counter() - t:.1f} |", flush=True)

    print("\n| instance | segments (compute-bound) | busy / (G·D) | busy / (G·D), compute-bound "
          "segments |")
    print("|---|---:|---:|---:|")
    for e in library.entries("tile_groups"):
        if e.id.startswith(("tg-tiny", "tg-lenet")):
            continue
        bk = library.best_known(e)
        if bk is None:
            continue
        inst = library.build_instance(e)
        n, ncb, share, share_cb = busy_shares(inst, Solution.from_dict(inst, bk.solution))
        print(f"| {e.id} | {n} ({ncb}) | {share:.3f} | "
              + ("—" if np.isnan(share_cb) else f"{share_cb:.3f}") + " |", flush=True)


if __name__ == "__main__":
    main()
