"""What the SA's descents after the allocation polish buy (docs/tile_groups.md §5): per
instance and seed, the default SA's objective before the descents (its first polish —
the result of the same run with ``descents=0``) and after them, their ratio (what the
rounds bought: each a descent and another polish), and the seconds of the rounds
against those of the whole run.

    python benchmarks/tile_groups_sa_descents.py tg-resnet50-v1-edge-b8 --seeds 3

``--param NAME=VALUE`` passes an SA parameter (as ``chipsched solve -p``), e.g.
``--param descents=3``; ``--keep-better`` writes a run that beats the library's best
known into it (as ``tile_groups_sa_starts.py --keep-better``).
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
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--keep-better", action="store_true")
    args = ap.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from library_build import keep_if_better
    from tile_groups_sa_starts import sa_params

    from chipsched import library
    from chipsched.api import solve

    params = sa_params(args.param)
    if params.get("polish", 1) == 0:
        raise SystemExit("--param polish=0: the descents follow the polish; give polish > 0")

    print("| instance | seed | before the descents | after | after / before | rounds | "
          "descent seconds / run seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    ratios: list[float] = []
    per_id: dict[str, tuple[list[float], list[float]]] = {}
    for id_ in args.ids:
        e = library.entry(id_)
        per_id[id_] = ([], [])
        for seed in range(args.seeds):
            inst = library.build_instance(e)  # fresh: the segment cache is per instance
            t = time.perf_counter()
            r = solve("tile_groups", inst, "sa", seed=seed, threads=1, **params)
            secs = time.perf_counter() - t
            pol = r.metrics["solver"]["polish"]
            if pol is None:  # the budget ended the run before its polish
                print(f"| {id_} | {seed} | — | {r.objective:.4g} | — | 0 | — / {secs:.1f} |")
                continue
            before = pol["first_polish"]
            ratios.append(r.objective / before)
            per_id[id_][0].append(r.objective)
            per_id[id_][1].append(before)
            dsecs = sum(d["seconds"] for d in pol["descents"])
            print(f"| {id_} | {seed} | {before:.4g} | {r.objective:.4g} | {ratios[-1]:.4f} | "
                  f"{len(pol['descents'])} | {dsecs:.1f} / {secs:.1f} |", flush=True)
            if args.keep_better and keep_if_better(e, r, {"start": "best", **params}, seed,
                                                   None) is not None:
                print(f"{id_}: seed {seed} ({r.objective:.4g}) is the new best known",
                      file=sys.stderr, flush=True)
    # per instance, the seeds in the form `tile_groups_bounds.py --sa-from` reads
    print("\n| instance | after the descents, per seed | before, per seed | median after / "
          "best known |")
    print("|---|---|---|---:|")
    for id_, (after, before_) in per_id.items():
        bk = library.best_known(library.entry(id_))
        rel = f"{statistics.median(after) / bk.objective:.3f}" if bk is not None else ""
        print(f"| {id_} | {', '.join(f'{v:.4g}' for v in after)} | "
              f"{', '.join(f'{v:.4g}' for v in before_)} | {rel} |")
    if ratios:
        gm = statistics.geometric_mean(ratios)
        print(f"\n{len(ratios)} runs: after / before geometric mean {gm:.4f}, range "
              f"{min(ratios):.4f}–{max(ratios):.4f}")


if __name__ == "__main__":
    main()
