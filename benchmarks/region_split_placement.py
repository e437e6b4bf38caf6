"""region_split: exact placement of the regions on the chiplet grid vs serpentine (issue 5).

For each network × chip (default objective, period) the DP's optimal regions and counts
are placed three ways — seed 000's serpentine, core_assignment's ``bnb-place`` and
``cpsat-place`` (each warm-started from serpentine, ``--time-limit`` seconds) — and the
die-to-die byte·hops of each placement (the evaluator's ``d2d_byte_hops``) are printed as
a markdown table with the solver's status, whether the placement is proven optimal (for
the flows rounded to whole bytes) and the remaining gap.

    python benchmarks/region_split_placement.py                 # ~1.5 min on 2 cores
    python benchmarks/region_split_placement.py --time-limit 2  # quicker
"""

from __future__ import annotations

import argparse
import os
import platform

import chipsched

NETWORKS = ["resnet50", "googlenet"]
CHIPS = ["chiplet-4x4", "chiplet-6x6"]
PLACERS = ["bnb", "cpsat"]


def _cell(st: dict, serp: float) -> str:
    """byte·hops (change vs serpentine), proven / gap, solver time."""
    change = 100 * (st["byte_hops"] / serp - 1) if serp else 0.0
    if st["proven"]:
        proof = "proven"
    else:
        proof = "gap " + ("–" if st["gap"] is None else f"{100 * st['gap']:.0f} %")
    return (f"{st['byte_hops'] / 1e6:.3f} ({change:+.1f} %), {proof}, "
            f"{st['solver_s']:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--chips", default=",".join(CHIPS))
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds per placement solve (default 10)")
    args = ap.parse_args()
    print(f"# region_split placement — {platform.node()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}, time limit {args.time_limit:g} s\n")
    print("| network | chip | regions | sub-chiplets | serpentine (MB·hops) | "
          + " | ".join(f"{p}-place (MB·hops)" for p in PLACERS) + " |")
    print("|---|---|---:|---:|---:|" + "---:|" * len(PLACERS))
    for net in args.networks.split(","):
        for chip in args.chips.split(","):
            inst = chipsched.make_instance("region_split", net, chip)
            serp = chipsched.solve("region_split", inst, "dp")
            sb = serp.metrics["d2d_byte_hops"]
            cells = []
            for p in PLACERS:
                res = chipsched.solve("region_split", inst, "dp", placement=p,
                                      placement_time_limit=args.time_limit)
                st = res.metrics["solver"]["placement"]
                assert res.metrics["d2d_byte_hops"] <= sb * (1 + 1e-12)
                assert res.objective == serp.objective
                cells.append(_cell(st, sb))
            print(f"| {net} | {chip} | {len(serp.solution.regions)} | "
                  f"{sum(serp.solution.counts)}/{inst.chiplets} | {sb / 1e6:.3f} | "
                  + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
