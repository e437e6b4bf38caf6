"""SA start and moves (issue 10): SA objective / best of LS and LP per seed, for the
wrapped start (default) and SET's layer-sequential start, with OP1–OP8 ("extended",
default) or the document's OP1–OP6 ("document").

    python benchmarks/tile_groups_sa_moves.py            # 5 cases × 4 seeds × 3 variants
    python benchmarks/tile_groups_sa_moves.py --seeds 2 --quick

Prints one markdown row per case and variant: the ratio of each seed (< 1: the SA beats
the better baseline) and how many seeds win. One anneal per run (``--tries 1``) unless
``--tries`` says otherwise.
"""

from __future__ import annotations

import argparse
import time

CASES = [("resnet50", "edge-4x4", 8), ("googlenet", "edge-4x4", 8),
         ("inception-resnet-v1", "edge-4x4", 8), ("resnet50", "edge-4x4", 64),
         ("googlenet", "edge-4x4", 64)]
VARIANTS = [("wrapped", "extended"), ("wrapped", "document"), ("ls", "document")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="the first two cases only")
    ap.add_argument("--tries", type=int, default=1,
                    help="anneals per run, best kept (the SA's default is 4; 1 shows one try)")
    args = ap.parse_args()

    import chipsched

    print("| network | chip | batch | start | moves | SA / best baseline, per seed | "
          "wins | s per run |")
    print("|---|---|---|---|---|---|---|---|")
    for net, chip, b in CASES[:2] if args.quick else CASES:
        inst = chipsched.make_instance("tile_groups", net, chip, batch=b)
        base = min(chipsched.solve("tile_groups", inst, m).objective for m in ("ls", "lp"))
        for start, moves in VARIANTS:
            t0 = time.perf_counter()
            ratios = [chipsched.solve("tile_groups", inst, "sa", seed=s, start=start,
                                      moves=moves, tries=args.tries).objective / base
                      for s in range(args.seeds)]
            dt = (time.perf_counter() - t0) / args.seeds
            print(f"| {net} | {chip} | {b} | {start} | {moves} | "
                  f"{', '.join(f'{r:.3f}' for r in ratios)} | "
                  f"{sum(r < 1 for r in ratios)}/{args.seeds} | {dt:.1f} |", flush=True)


if __name__ == "__main__":
    main()
