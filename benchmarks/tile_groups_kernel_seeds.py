"""Does the compiled segment kernel change what the SA finds? The default SA per seed
with the analyzer's compiled kernel and with its Python steps (``Analyzer.compiled =
False``): both evaluate the same costs to ~10⁻¹⁵ (tests/test_tile_groups_segment_kernel.py),
but a last-bit difference can send a seed down another path, so per seed the results
may differ; over many seeds they should not, in either direction.

    python benchmarks/tile_groups_kernel_seeds.py resnet50-v1 edge-4x4 8 --seeds 28

Prints one row per seed, the count of seeds where the compiled run ends lower, higher
or equal, and the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("network")
    ap.add_argument("chip")
    ap.add_argument("batch", type=int)
    ap.add_argument("--seeds", type=int, default=8)
    a = ap.parse_args(argv)

    from chipsched.api import registry, solve, warm_up
    from chipsched.instances.chips import get_chip
    from chipsched.instances.tile_groups import load_instance

    registry()
    warm_up(["tile_groups"])
    print(f"Command: `python benchmarks/tile_groups_kernel_seeds.py {a.network} {a.chip} "
          f"{a.batch} --seeds {a.seeds}` — the default SA, a fresh instance per run\n")
    print("| seed | Python steps | s | compiled | s | compiled / Python |")
    print("|---:|---:|---:|---:|---:|---:|")
    py, co = [], []
    for s in range(a.seeds):
        out = []
        for compiled in (False, True):
            inst = load_instance(a.network, get_chip(a.chip), batch=a.batch)
            inst.analyzer.compiled = compiled
            t0 = time.perf_counter()
            r = solve("tile_groups", inst, "sa", seed=s)
            out.append((r.objective, time.perf_counter() - t0))
        (p, tp), (c, tc) = out
        py.append(p)
        co.append(c)
        print(f"| {s} | {p:.4g} | {tp:.1f} | {c:.4g} | {tc:.1f} | {c / p:.3f} |", flush=True)
    lower = sum(c < p for p, c in zip(py, co, strict=True))
    higher = sum(c > p for p, c in zip(py, co, strict=True))
    print(f"\ncompiled lower on {lower}, higher on {higher}, equal on "
          f"{a.seeds - lower - higher} of {a.seeds} seeds; medians: Python steps "
          f"{statistics.median(py):.4g}, compiled {statistics.median(co):.4g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
