"""Time to build the full layer cost table (issue: core, "Cost tables").

Prints, per (network, chip): layers, distinct layer shapes (the table is built once
per shape), unit counts, sub-batches, table entries, the
build time of a fresh CostModel (best of --repeat runs, and the first run), the
time of a cached lookup, and the table's memory. Default: ResNet-50 on
cloud-12x12, g = 1..144, b ∈ divisors of 64 — the figure in docs/benchmarks.md.

    python benchmarks/cost_table.py [--all] [--repeat 3]
    python benchmarks/cost_table.py --all --against OLD_COST_PY

``--against`` times another version of ``chipsched/cost.py`` (e.g. ``git show
REV:chipsched/cost.py > /tmp/cost_old.py``) back to back with today's, per network on
cloud-12x12, and checks that both give the same table.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import platform
import sys
import time

import numpy as np

from chipsched.cost import CostModel, divisors, layer_shapes, output_partitions
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
    shapes = len(layer_shapes(w)[0])
    return {"network": net, "chip": chip, "layers": len(w), "shapes": shapes,
            "units": hw.n_units,
            "batches": len(tab.batches), "partitions": len(output_partitions(hw.n_units)),
            "entries": len(w) * hw.n_units * len(tab.batches), "first_s": times[0],
            "best_s": min(times), "cached_us": cached * 1e6, "mib": nbytes / 2**20}


def against(path: str, nets: list[str], repeat: int, batch: int) -> None:
    """Best-of-``repeat`` build times of the cost module at ``path`` and of today's,
    alternating, on cloud-12x12; both tables must agree entry for entry."""
    from chipsched import cost

    spec = importlib.util.spec_from_file_location("chipsched.cost_against", path)
    old = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = old  # its dataclasses look their module up
    spec.loader.exec_module(old)
    hw = get_chip("cloud-12x12")
    print("| network | layers | shapes | before (s) | after (s) | faster |")
    print("|---|---:|---:|---:|---:|---:|")
    for net in nets:
        w, times, last = get_network(net), {old: [], cost: []}, {}
        for _ in range(repeat):
            for mod in (old, cost):
                t0 = time.perf_counter()
                last[mod] = mod.build_layer_table(w, hw.unit, hw.n_units, divisors(batch))
                times[mod].append(time.perf_counter() - t0)
        same = all(np.array_equal(getattr(last[old], f.name), getattr(last[cost], f.name))
                   for f in dataclasses.fields(last[cost]))
        o, n = min(times[old]), min(times[cost])
        print(f"| {net} | {len(w)} | {len(layer_shapes(w)[0])} | {o:.2f} | {n:.2f} | "
              f"{o / n:.2f}× |" + ("" if same else " tables differ |"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every library network, both SET chips")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64, help="sub-batches = divisors of this")
    ap.add_argument("--against", metavar="COST_PY",
                    help="another version of chipsched/cost.py to time back to back")
    a = ap.parse_args()
    cases = [("resnet50", "cloud-12x12")]
    if a.all:
        cases = [(n, c) for c in ("edge-4x4", "cloud-12x12")
                 for n in ("resnet50", "googlenet", "inception-resnet-v1", "pnasnet5-mobile",
                           "pnasnet5-large", "transformer-base", "mobilenet-v2", "bert-base",
                           "vgg16")]
    if a.against:
        against(a.against, [n for n, c in cases if c == "cloud-12x12"], a.repeat, a.batch)
        return
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()},"
          f" numpy {np.__version__}")
    print("| network | chip | layers | shapes | g | b values | partitions | entries "
          "| first build (s) "
          f"| best of {a.repeat} (s) | cached lookup (µs) | memory (MiB) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for net, chip in cases:
        r = measure(net, chip, a.batch, a.repeat)
        print(f"| {r['network']} | {r['chip']} | {r['layers']} | {r['shapes']} | "
              f"1..{r['units']} | "
              f"{r['batches']} | {r['partitions']} | {r['entries']:,} | {r['first_s']:.3f} | "
              f"{r['best_s']:.3f} | {r['cached_us']:.1f} | {r['mib']:.1f} |")


if __name__ == "__main__":
    main()
