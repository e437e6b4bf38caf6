"""The default SA's seeds on SET's grid against the library's best known (issue 30's
SA target: median within 10 % and worst seed within 25 % of the best known on ≥ 27 of
the 30 rows), before and after a change of the default: reads the tables that
``tile_groups_sa_starts.py --starts best`` prints (one or more logs, rows
``| tg-… | best | v0, v1, v2 | …``) and a seeds table of docs/benchmarks.md (the default
before, by its bold title), divides both by today's best knowns (re-evaluated) and prints
the comparison table with ✓ where both targets are met, and the counts.

    python benchmarks/tile_groups_sa_table.py run1.log run2.log \\
        --before docs/benchmarks.md "**8 tries (4 draws + 4 reheats) on all 30 rows**"
    python benchmarks/tile_groups_sa_table.py run*.log --before-default docs/benchmarks.md

``--before-default`` takes, per row, the seeds the three-numbers table of
``tile_groups_bounds.py --sa-from`` reads (the newest of the seeds tables).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tile_groups_bounds import (  # noqa: E402
    BOUND_SIDE,
    SA_SIDE,
    read_seeds_table,
    sa_seeds_from,
)


def seeds_from_logs(paths: list[Path]) -> dict[str, list[float]]:
    """chipsched-lib id → objectives per seed, from ``tile_groups_sa_starts.py`` output."""
    out: dict[str, list[float]] = {}
    for p in paths:
        for line in p.read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            # the per-try table (``--per-try``) has rows of the same start: skip them
            if len(cells) >= 3 and cells[0].startswith("tg-") and cells[1] == "best" \
                    and ":" not in cells[2]:
                out[cells[0]] = [float(v) for v in cells[2].split(",")]
    return out


def cell(vals: list[float] | None, bk: float) -> tuple[str, bool]:
    if not vals:
        return "not run", False
    med, worst = statistics.median(vals) / bk, max(vals) / bk
    ok = med <= SA_SIDE and worst <= BOUND_SIDE
    return (f"{', '.join(f'{v:.4g}' for v in vals)} ({med:.3f}, {worst:.3f})"
            f"{' ✓' if ok else ''}"), ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", type=Path)
    before_from = ap.add_mutually_exclusive_group()
    before_from.add_argument("--before", nargs=2, metavar=("MARKDOWN", "TITLE"),
                             default=None,
                             help="a seeds table of docs/benchmarks.md: the default before")
    before_from.add_argument("--before-default", type=Path, default=None, metavar="MARKDOWN",
                             help="the seeds the three-numbers table reads from MARKDOWN")
    args = ap.parse_args()

    from chipsched import library

    after = seeds_from_logs(args.logs)
    before = {}
    if args.before:
        before = read_seeds_table(Path(args.before[0]), args.before[1])
    elif args.before_default:
        before = sa_seeds_from(args.before_default)
    print("| instance | best known | before: seeds (median, worst) / best known | "
          "after: seeds (median, worst) / best known |")
    print("|---|---:|---|---|")
    n_before = n_after = 0
    for id_ in [*after, *(i for i in before if i not in after)]:
        e = library.entry(id_)
        known = library.best_known(e)
        bk = library.verify(e, known.path).objective
        b, ok_b = cell(before.get(id_), bk)
        a, ok_a = cell(after.get(id_), bk)
        n_before += ok_b
        n_after += ok_a
        print(f"| {id_} | {bk:.4g} | {b} | {a} |")
    print(f"\n```\nboth targets: before {n_before} of {len(before) or '—'}, "
          f"after {n_after} of {len(after)}\n```")


if __name__ == "__main__":
    main()
