"""The tile_groups full-space bound on SET's grid (issue 30): per configuration the
per-layer bound of issue 10 (``lower_bound``), the full-space bound (``full_space_bound``:
root run count, usable rows, placement hops, the energy-latency envelope), how much
tighter it is, the root run count where it binds, its seconds, and — with
``--best-from`` — the best objective of the grid table in docs/benchmarks.md (the least
of LS, LP, SA and dp-seg-npt of that table) over the bound: an upper bound on the gap of
that best tree, not the gap. With ``--library`` the best known of chipsched-lib
(``lib:tg-<network>-<edge|cloud>-b<B>``, every configuration since 1.1) and how it was
found, re-evaluated by today's analyzer, are printed and divided by the bound instead.

    python benchmarks/tile_groups_bounds.py                       # the 30 configurations
    python benchmarks/tile_groups_bounds.py --best-from docs/benchmarks.md
    python benchmarks/tile_groups_bounds.py --library [--best-from docs/benchmarks.md]
    python benchmarks/tile_groups_bounds.py --networks resnet50-v1 --batches 8
"""

from __future__ import annotations

import argparse
import math
import re
import time
from pathlib import Path

NETWORKS = ("resnet50-v1", "googlenet", "inception-resnet-v1", "pnasnet5-large",
            "transformer-set-isca23")
CHIPS = {"edge-4x4": "e2d", "cloud-12x12": "ed2"}
BATCHES = (1, 8, 64)


def best_from_grid_table(path: Path, column: str = "best"
                         ) -> dict[tuple[str, str, int], float]:
    """(network, chip, batch) → the least objective of the grid table's row: LS, LP, SA
    (best seed) and dp-seg-npt (given as a ratio to the baseline); ``column='sa'``: the
    SA's (best seed) alone."""
    out: dict[tuple[str, str, int], float] = {}
    text = path.read_text()
    start = text.index("### SET's experiment on our model")
    for line in text[start:].splitlines()[1:]:
        if line.startswith("### "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 11 or not cells[2].isdigit():
            continue
        net, chip, b = cells[0], cells[1].split()[0], int(cells[2])
        vals = [float(v) for v in cells[3].split(" / ")]
        if column == "sa":
            out[(net, chip, b)] = vals[2]
            continue
        base = min(vals[:2])
        m = re.match(r"([0-9.]+) \(", cells[9])
        if m:
            vals.append(float(m.group(1)) * base)
        out[(net, chip, b)] = min(vals)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--networks", nargs="+", default=list(NETWORKS))
    ap.add_argument("--chips", nargs="+", default=list(CHIPS))
    ap.add_argument("--batches", nargs="+", type=int, default=list(BATCHES))
    ap.add_argument("--best-from", type=Path, default=None,
                    help="docs/benchmarks.md: divide the grid table's best by the bound")
    ap.add_argument("--library", action="store_true",
                    help="divide chipsched-lib's best known (re-evaluated) by the bound")
    args = ap.parse_args()

    from chipsched import library
    from chipsched.api import make_instance
    from chipsched.problems.tile_groups.bound import full_space_bound

    best = best_from_grid_table(args.best_from) if args.best_from else {}
    sa = best_from_grid_table(args.best_from, "sa") if args.best_from and args.library \
        else {}
    what = "best known (chipsched-lib)" if args.library else "best in grid table"
    extra = (" | SA (grid table)" if sa else "") + \
        (" | best known | found by" if args.library else "")
    print(f"| network | chip | B | per-layer bound | full-space bound | tighter | binding R"
          f"{extra} | {what} / bound | seconds (table + bound) |")
    print("|---|---|---:|---:|---:|---:|---:|" + ("---:|" if sa else "")
          + ("---:|---|" if args.library else "") + "---:|---:|")
    ratios, tighter = [], []
    for chip in args.chips:
        for net in args.networks:
            for b in args.batches:
                t0 = time.perf_counter()
                inst = make_instance("tile_groups", net, chip, batch=b, objective=CHIPS[chip])
                inst.analyzer  # noqa: B018 - the layer table, timed with the bound
                fb = full_space_bound(inst)
                dt = time.perf_counter() - t0
                bk = best.get((net, chip, b))
                lib = f" | {sa[(net, chip, b)]:.4g}" if (net, chip, b) in sa else \
                    (" | —" if sa else "")
                if args.library:
                    e = library.entry(f"tg-{net}-{chip.split('-')[0]}-b{b}")
                    known = library.best_known(e)
                    bk = None
                    if known is not None:
                        bk = library.verify(e, known.path).objective
                        lib += f" | {bk:.4g} | {library.how_found(known.found_by)}"
                    else:
                        lib += " | — | —"
                r = bk / fb.objective if bk else None
                if r:
                    ratios.append(r)
                tighter.append(fb.objective / fb.basic.objective)
                print(f"| {net} | {chip} | {b} | {fb.basic.objective:.4g} | "
                      f"{fb.objective:.4g} | {tighter[-1]:.3f}× | {fb.root_runs}{lib} | "
                      f"{'' if r is None else f'{r:.3g}'} | {dt:.1f} ({fb.seconds:.1f}) |",
                      flush=True)

    def gm(xs: list[float]) -> float:
        return math.exp(sum(map(math.log, xs)) / len(xs))

    print(f"\ntighter than the per-layer bound: geometric mean {gm(tighter):.3f}×, "
          f"range {min(tighter):.3f}–{max(tighter):.3f}×")
    if ratios:
        print(f"{what} / full-space bound: geometric mean {gm(ratios):.3g}, "
              f"max {max(ratios):.3g} ({len(ratios)} rows; above 5: "
              f"{sum(r > 5 for r in ratios)}, above 2: {sum(r > 2 for r in ratios)})")


if __name__ == "__main__":
    main()
