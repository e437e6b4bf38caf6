"""How much the SA's result depends on its seed, per start (issue 30, item 4): the
default SA (4 chained tries of β × layers rounds, no time limit) from the wrapped start
(the default) and from the better LS/LP DP tree (``-p start=dp``), seeds 0..N-1, on
chipsched-lib instances; per instance and start the objectives, their spread (worst /
best) and the median over the library's best known.

    python benchmarks/tile_groups_sa_starts.py tg-resnet50-v1-edge-b8 --seeds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="+", help="chipsched-lib tile_groups instance ids")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--starts", nargs="+", default=["wrapped", "dp"])
    args = ap.parse_args()

    from chipsched import library
    from chipsched.api import solve

    print("| instance | start | objective per seed | worst / best | median / best known "
          "| seconds per run |")
    print("|---|---|---|---:|---:|---:|")
    for id_ in args.ids:
        e = library.entry(id_)
        inst = library.build_instance(e)
        bk = library.best_known(e)
        for start in args.starts:
            vals, secs = [], []
            for seed in range(args.seeds):
                t = time.perf_counter()
                r = solve("tile_groups", inst, "sa", seed=seed, threads=1, start=start)
                secs.append(time.perf_counter() - t)
                vals.append(float(r.objective))
            med = statistics.median(vals)
            rel = f"{med / bk.objective:.3f}" if bk is not None else ""
            print(f"| {id_} | {start} | {', '.join(f'{v:.4g}' for v in vals)} | "
                  f"{max(vals) / min(vals):.3f} | {rel} | {statistics.median(secs):.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
