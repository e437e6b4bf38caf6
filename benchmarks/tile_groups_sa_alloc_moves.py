"""What-if (issue 30): tile-allocation moves inside the annealing, not only after it.

The SA evaluates every tree with NPT allocations and hands its best tree to the
allocation polish and its descents at the end (docs/tile_groups.md §5). This script
tries the other way:
an operator OP10 that moves d tiles (1, 2, 4, …) between two children of a random S cut
during the annealing, as the polish does, drawn like OP3–OP9 (``--weight``, default 20).
Because the other operators rebuild cuts with NPT allocation, every changed root child is
then *settled*: an explicit allocation that no longer fits its cut (child count or tile
count changed) is rescaled in proportion or, when the child count changed, replaced by
the NPT counts, and the explicit allocations below it follow. The operator lives in this
script only: it patches ``chipsched.heuristics.tile_groups`` in this process for the
OP10 runs and restores it after them (both arms end with the default's polish and
descents; in the OP10 arm the descents draw OP10 too, its counts are the tries').
The medians are over the library's best known (over the default's best seed when the
instance has none).

    python benchmarks/tile_groups_sa_alloc_moves.py tg-resnet50-v1-edge-b8 --seeds 3

Per instance: the default SA's objective per seed, the SA with OP10's, the medians over
the library's best known, and OP10's proposed / infeasible / accepted / new-best counts.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _has_explicit(node: Any) -> bool:
    return node.alloc is not None or any(_has_explicit(c) for c in node.children)


def settle(an: Any, node: Any, tiles: int) -> Any:
    """``node`` on ``tiles`` tiles with every explicit allocation below it made to fit:
    NPT cuts above explicit ones stay NPT (their counts are computed to pass down),
    explicit ones whose sum is off are rescaled, those whose child count changed get
    the NPT counts; ``None`` when no allocation fits."""
    from chipsched.problems.tile_groups import LEAF, SCUT, TCUT, Node, least_tiles
    from chipsched.problems.tile_groups.analyzer import Infeasible
    from chipsched.problems.tile_groups.tree import rescaled_counts

    if node.kind == LEAF or not _has_explicit(node):
        return node
    if node.kind == TCUT:
        kids = [settle(an, c, tiles) for c in node.children]
        if any(k is None for k in kids):
            return None
        if all(k is c for k, c in zip(kids, node.children, strict=True)):
            return node
        return Node(TCUT, -1, tuple(kids), node.sb, None)
    n = len(node.children)
    if n > tiles:
        return None
    floors = [least_tiles(c) for c in node.children]
    alloc = node.alloc
    if alloc is None or len(alloc) != n:
        try:
            counts = list(an.allocation(Node(SCUT, -1, node.children, node.sb, None), tiles, ()))
        except Infeasible:
            return None
    elif sum(alloc) != tiles or any(a < f for a, f in zip(alloc, floors, strict=True)):
        counts = rescaled_counts(alloc, tiles, floors)
        if counts is None:
            return None
    else:
        counts = list(alloc)
    kids = [settle(an, c, a) for c, a in zip(node.children, counts, strict=True)]
    if any(k is None for k in kids):
        return None
    new_alloc = None if alloc is None else tuple(counts)
    if new_alloc == alloc and all(k is c for k, c in zip(kids, node.children, strict=True)):
        return node
    return Node(SCUT, -1, tuple(kids), node.sb, new_alloc)


@contextlib.contextmanager
def op10_patched(an: Any, weight: float) -> Iterator[None]:
    """The SA module with OP10 among its extended operators and the settle step after
    every mutation, restored on exit."""
    import chipsched.heuristics.tile_groups as H
    from chipsched.problems.tile_groups import SCUT, TCUT, Node, least_tiles, replace_at
    from chipsched.problems.tile_groups.analyzer import Infeasible

    def op10(tree: Any, rng: random.Random, ctx: Any) -> Any:
        cuts = [c for c in H._cuts_with_batch(tree, ctx.batch, ctx) if c[1].kind == SCUT]
        if not cuts:
            return None
        path, s, _ = cuts[rng.randrange(len(cuts))]
        try:
            tiles, node = an.G, tree
            for d, i in enumerate(path):
                if node.kind == SCUT:
                    tiles = an.allocation(node, tiles, tuple(path[:d]))[i]
                node = node.children[i]
            a = list(an.allocation(s, tiles, path))
        except Infeasible:
            return None
        i, j = rng.sample(range(len(s.children)), 2)
        room = a[i] - least_tiles(s.children[i])
        if room < 1:
            return None
        d = 1 << rng.randrange(room.bit_length())
        a[i] -= d
        a[j] += d
        new = settle(an, Node(SCUT, -1, s.children, s.sb, tuple(a)), tiles)
        return None if new is None else replace_at(tree, path, new)

    plain_mutate = H.mutate

    def mutate(tree: Any, rng: random.Random, ctx: Any, weights: dict[str, float],
               tries: int = 200) -> Any:
        m = plain_mutate(tree, rng, ctx, weights, tries)
        if m is None:
            return None
        new, op = m
        if new.kind == TCUT and tree.kind == TCUT:
            old = {id(c) for c in tree.children}
            kids = list(new.children)
            for k, c in enumerate(kids):
                if id(c) not in old:
                    s = settle(an, c, an.G)
                    if s is None:
                        return new, op  # the analyzer rejects it
                    kids[k] = s
            new = Node(TCUT, -1, tuple(kids), new.sb, None)
        else:
            new = settle(an, new, an.G) or new
        return new, op

    H.OPERATORS["op10"] = op10
    H.EXTENDED_WEIGHTS["op10"] = weight
    H.mutate = mutate
    try:
        yield
    finally:
        H.mutate = plain_mutate
        del H.EXTENDED_WEIGHTS["op10"]
        del H.OPERATORS["op10"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="+", help="chipsched-lib tile_groups instance ids")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--weight", type=float, default=20.0, help="OP10's operator weight")
    args = ap.parse_args()

    from chipsched import library
    from chipsched.api import solve

    print("| instance | default SA per seed | with OP10 per seed | median / best known: "
          "default, OP10 | OP10 proposed / infeasible / accepted / new best | seconds |")
    print("|---|---|---|---:|---|---:|")
    for id_ in args.ids:
        e = library.entry(id_)
        bk = library.best_known(e)
        vals: dict[str, list[float]] = {"default": [], "op10": []}
        counts = [0, 0, 0, 0]
        t = time.perf_counter()
        for seed in range(args.seeds):
            for arm in vals:
                inst = library.build_instance(e)  # fresh: no segment cache across arms
                ctx = op10_patched(inst.analyzer, args.weight) if arm == "op10" \
                    else contextlib.nullcontext()
                with ctx:
                    r = solve("tile_groups", inst, "sa", seed=seed, threads=1)
                vals[arm].append(float(r.objective))
                if arm == "op10":
                    c = r.metrics["solver"]["operators"].get("op10", {})
                    for k, key in enumerate(("proposed", "infeasible", "accepted",
                                             "improved")):
                        counts[k] += c.get(key, 0)
        ref = bk.objective if bk is not None else min(vals["default"])
        med = {k: statistics.median(v) / ref for k, v in vals.items()}
        print(f"| {id_} | {', '.join(f'{v:.4g}' for v in vals['default'])} | "
              f"{', '.join(f'{v:.4g}' for v in vals['op10'])} | {med['default']:.3f}, "
              f"{med['op10']:.3f} | {' / '.join(f'{c:,}' for c in counts)} | "
              f"{time.perf_counter() - t:.0f} |", flush=True)


if __name__ == "__main__":
    main()
