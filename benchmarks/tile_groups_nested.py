"""The right-nested segment DP (``nested``, issue 30) on SET's grid: per configuration
its objective, its segments, its seconds, and its objective over the library's best
known and over the default SA's first tree (its 'best' start: the best of the wrapped
layers and the LS and LP DP trees) — where it is below 1, ``-p start=nested`` gives
the SA another start than its default.

    python benchmarks/tile_groups_nested.py                      # the 30 configurations
    python benchmarks/tile_groups_nested.py --networks pnasnet5-large --chips cloud-12x12
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tile_groups_bounds import add_grid_args, gm  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_grid_args(ap)
    args = ap.parse_args()

    from chipsched import library
    from chipsched.api import solve
    from chipsched.heuristics.tile_groups import wrapped_start

    print("| network | chip | B | nested | segments | seconds | nested / best known | "
          "nested / the SA's default start |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    vs_known, vs_dp = [], []
    for chip in args.chips:
        for net in args.networks:
            for b in args.batches:
                e = library.entry(f"tg-{net}-{chip.split('-')[0]}-b{b}")
                inst = library.build_instance(e)
                t = time.perf_counter()
                r = solve("tile_groups", inst, "nested", threads=1)
                secs = time.perf_counter() - t
                dp = min([float(solve("tile_groups", inst, m, threads=1).objective)
                          for m in ("ls", "lp")] + [wrapped_start(inst)[1]])
                known = library.best_known(e)
                obj = float(r.objective)
                rk = obj / known.objective if known is not None else float("nan")
                vs_known.append(rk)
                vs_dp.append(obj / dp)
                print(f"| {net} | {chip} | {b} | {obj:.4g} | "
                      f"{r.metrics['solver']['segments']} | {secs:.1f} | {rk:.3f} | "
                      f"{obj / dp:.3f} |", flush=True)
    print(f"\n{len(vs_known)} rows: nested / best known geometric mean {gm(vs_known):.3f} "
          f"({sum(x < 1 for x in vs_known)} below 1); nested / the SA's default start "
          f"{gm(vs_dp):.3f} ({sum(x < 1 for x in vs_dp)} below 1)")


if __name__ == "__main__":
    main()
