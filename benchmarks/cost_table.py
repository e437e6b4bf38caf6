"""Time to build the full layer cost table (issue: core, "Cost tables").

Prints, per (network, chip): layers, unit counts, sub-batches, table entries, the
build time of a fresh CostModel (best of --repeat runs, and the first run), the
time of a cached lookup, and the table's memory. Default: ResNet-50 on
cloud-12x12, g = 1..144, b ∈ divisors of 64 — the figure in docs/benchmarks.md.

    python benchmarks/cost_table.py [--all] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from chipsched.cost import CostModel, divisors, output_partitions
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network


def measure(net: str, chip: str, batch: int, repeat: int) -> dict:
    w, hw = get_network(net), get_chip(chip)
    times = []
    for _ in range(repeat):
        cm = CostModel(w, hw)
        t0 = time.perf_counter()
        tab = cm.layer_table(divisors(batch))
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    cm.layer_table(divisors(batch))
    cached = time.perf_counter() - t0
    nbytes = sum(v.nbytes for v in vars(tab).values() if isinstance(v, np.ndarray))
    return {"network": net, "chip": chip, "layers": len(w), "units": hw.n_units,
            "batches": len(tab.batches), "partitions": len(output_partitions(hw.n_units)),
            "entries": len(w) * hw.n_units * len(tab.batches), "first_s": times[0],
            "best_s": min(times), "cached_us": cached * 1e6, "mib": nbytes / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every library network, both SET chips")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64, help="sub-batches = divisors of this")
    a = ap.parse_args()
    cases = [("resnet50", "cloud-12x12")]
    if a.all:
        cases = [(n, c) for c in ("edge-4x4", "cloud-12x12")
                 for n in ("resnet50", "googlenet", "inception-resnet-v1", "pnasnet5-mobile",
                           "transformer-base", "mobilenet-v2", "bert-base", "vgg16")]
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()},"
          f" numpy {np.__version__}")
    print("| network | chip | layers | g | b values | partitions | entries | first build (s) "
          f"| best of {a.repeat} (s) | cached lookup (µs) | memory (MiB) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for net, chip in cases:
        r = measure(net, chip, a.batch, a.repeat)
        print(f"| {r['network']} | {r['chip']} | {r['layers']} | 1..{r['units']} | "
              f"{r['batches']} | {r['partitions']} | {r['entries']:,} | {r['first_s']:.3f} | "
              f"{r['best_s']:.3f} | {r['cached_us']:.1f} | {r['mib']:.1f} |")


if __name__ == "__main__":
    main()
