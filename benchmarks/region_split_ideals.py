"""region_split: the DP over ideals on every library network (issue 12).

For every library network, items = layers and = pipeline groups, on chiplet-4x4 and
chiplet-6x6, objective ``period`` (and ``cost`` with ``--objectives period,cost``):
the number of ideals of the item DAG, the pairs of ideals the DP visits, its time, its
optimum over every convex partition, and the linear-order DP's optimum over cuts of the
file's item order (the pre-issue-12 ``dp``), with the gain in %. A DAG with more than
``--max-ideals`` ideals is reported as a fall-back (the DP then cuts the item order
only, says so, and reports a lower bound over every convex partition: the last column
is how far at most the item order's optimum is from the whole space's).

    python benchmarks/region_split_ideals.py                  # period, 4x4 and 6x6
    python benchmarks/region_split_ideals.py --objectives period,cost --chips chiplet-4x4
"""

from __future__ import annotations

import argparse
import platform

from chipsched.api import make_instance, solve, warm_up
from chipsched.formulations.region_split.ideals import MAX_IDEALS
from chipsched.instances.networks import network_names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chips", default="chiplet-4x4,chiplet-6x6")
    ap.add_argument("--objectives", default="period")
    ap.add_argument("--items", default="layers,groups")
    ap.add_argument("--networks", default=",".join(network_names()))
    ap.add_argument("--max-ideals", type=int, default=MAX_IDEALS)
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per dp run (past it: the item order's optimum, said so)")
    a = ap.parse_args()
    warm_up(["region_split"])  # numba's compile stays out of the first row's time
    print(f"machine: {platform.machine()}, python {platform.python_version()}; "
          f"max_ideals = {a.max_ideals:,}\n")
    print("| network | items | chip | objective | items n | ideals | pairs | DP time | "
          "optimum (every convex partition) | file order only | gain | "
          "file order ≤ above the full-space bound |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for net in a.networks.split(","):
        for items in a.items.split(","):
            for chip in a.chips.split(","):
                for obj in a.objectives.split(","):
                    inst = make_instance("region_split", net, chip, objective=obj,
                                         items=items)
                    r = solve("region_split", inst, "dp", max_ideals=a.max_ideals,
                              time_limit=a.time_limit)
                    dt = r.wall_s  # the method's clock (the face loads solvers before it)
                    lin = solve("region_split", inst, "dp", order_only=True)
                    st = r.metrics["solver"]
                    ideals = f"{st['ideals']:,}" if "ideals" in st else \
                        "time limit (fall-back)" if r.message.startswith("time") else \
                        f"> {a.max_ideals:,} (fall-back)"
                    pairs = f"{st['ideal_pairs']:,}" if "ideal_pairs" in st else "—"
                    if "ideals" in st:
                        best = f"{r.objective * 1e6:.3f} µs"
                        gain = f"{100 * (1 - r.objective / lin.objective):.2f} %"
                        dist = "— (solved)"
                    else:   # the fall-back solved the item order only: no optimum to show
                        lb = st["full_space_bound"]
                        best, gain = f"not solved; ≥ {lb * 1e6:.3f} µs", "—"
                        dist = f"{100 * (lin.objective / lb - 1):.2f} %"
                    print(f"| {net} | {items} | {chip} | {obj} | {inst.n_items} | {ideals} | "
                          f"{pairs} | {dt:.2f} s | {best} | "
                          f"{lin.objective * 1e6:.3f} µs | {gain} | {dist} |", flush=True)


if __name__ == "__main__":
    main()
