"""The allocation polish (``allocate``, the SA's last step; docs/tile_groups.md §5) on the
library's best knowns of SET's grid: per configuration the best known tree's objective,
the polished one's, their ratio, the tree's S cuts, the moves tried, the gains kept and
the seconds.

    python benchmarks/tile_groups_allocation_polish.py                 # the 30 rows
    python benchmarks/tile_groups_allocation_polish.py --patience 20000 \
        --only tg-googlenet-cloud-b8
    python benchmarks/tile_groups_allocation_polish.py --keep-better   # write new bests
    python benchmarks/tile_groups_allocation_polish.py --descents 3    # and descents
    python benchmarks/tile_groups_allocation_polish.py --descents 3 --from-git 7153d14

``--descents N`` alternates the polish with up to N zero-temperature descents of the
SA's operators (``allocate -p descents=N``; β × layers rounds each, ``--beta``).

``--from-git REV`` starts from the best known tree stored at git revision REV instead of
today's (rows whose tree is the same, or which had none, are skipped): the descent is
sensitive to its start, and an older best known can polish below a newer one. The
"best known" column is then that tree's objective under today's analyzer.

With ``--keep-better`` a polished tree that beats the stored best known replaces it (as
``python benchmarks/library_build.py --polish --seeds 0`` does, with the same record).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tile_groups_bounds import gm  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="library ids (default: SET's grid)")
    ap.add_argument("--patience", type=int, default=2000,
                    help="draws of a move in a row without a gain before the polish stops")
    ap.add_argument("--descents", type=int, default=0,
                    help="rounds of a zero-temperature descent + polish after the first")
    ap.add_argument("--beta", type=float, default=100, help="rounds per layer of a descent")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--from-git", default=None, metavar="REV",
                    help="start from the best known trees stored at this git revision")
    ap.add_argument("--keep-better", action="store_true",
                    help="write a polished tree that beats the best known into the library")
    args = ap.parse_args()

    from library_build import keep_if_better

    from chipsched import library
    from chipsched.api import solve

    ids = args.only or [e.id for e in library.entries("tile_groups")
                        if not e.id.startswith(("tg-tiny", "tg-lenet"))]
    print("| instance | best known | polished | polished / best known | S cuts | moves | "
          "gains | descents (after each: descent, polish / before) | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    ratios = []
    for id_ in ids:
        e = library.entry(id_)
        bk = library.best_known(e)
        if bk is None:
            continue
        start, origin = dict(bk.solution), library.how_found(bk.found_by)
        if args.from_git:
            old = _tree_at(args.from_git, bk.path)
            if old is None or old["solution"] == start:
                continue
            start = old["solution"]
            origin = library.from_earlier_best(args.from_git, float(old["objective"]),
                                               old["found_by"])
            try:
                v0 = library.verify(e, {"solution": start}).objective
            except Exception as exc:  # a tree today's analyzer refuses is no start
                print(f"{id_}: the tree at {args.from_git} no longer evaluates ({exc})",
                      file=sys.stderr)
                continue
        else:
            v0 = bk.objective
        inst = library.build_instance(e)
        t = time.perf_counter()
        r = solve("tile_groups", inst, "allocate", seed=args.seed, threads=1,
                  warm_start=start, patience=args.patience,
                  descents=args.descents, beta=args.beta)
        secs = time.perf_counter() - t
        st = r.metrics["solver"]
        ratios.append(r.objective / v0)
        before, rounds = st["first_polish"], []
        for d in st["descents"]:
            rounds.append(f"{d['descent'] / before:.4f}, {d['polish'] / before:.4f}")
            before = d["polish"]
        print(f"| {id_} | {v0:.4g} | {r.objective:.4g} | {ratios[-1]:.4f} | "
              f"{st['s_cuts']} | {st['moves']:,} | {st['gains']} | {' · '.join(rounds)} | "
              f"{secs:.1f} |", flush=True)
        if args.keep_better:
            how = {"warm_start": "best known" if not args.from_git
                   else f"the best known at git {args.from_git}",
                   "patience": args.patience,
                   **({"descents": args.descents, "beta": args.beta} if args.descents
                      else {}),
                   "from": origin}
            v = keep_if_better(e, r, how, args.seed, None)
            if v is not None:
                print(f"{id_}: {v:.6g} is the new best known", file=sys.stderr, flush=True)
    if ratios:
        print(f"\n{len(ratios)} rows: polished / best known geometric mean {gm(ratios):.4f}, "
              f"range {min(ratios):.4f}–{max(ratios):.4f}")


def _tree_at(rev: str, path: Path) -> dict | None:
    """The best-known record stored at ``path`` in git revision ``rev`` (None if absent)."""
    import json
    import subprocess

    root = Path(__file__).resolve().parents[1]
    rel = path.resolve().relative_to(root)
    out = subprocess.run(["git", "show", f"{rev}:{rel.as_posix()}"], cwd=root,
                         capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else None


if __name__ == "__main__":
    main()
