"""tile_groups heuristics: SET's simulated annealing over resource allocation trees
(operators OP1–OP6), the layer-sequential (LS) and layer-pipelined (LP) baselines as
Tangram-style dynamic programs over segment boundaries, and random search.

Sources: seed 002 (``docs/sources.md``) and the authors' public code
(SET-ISCA2023 ``src/sa.cpp``: the temperature schedule, the acceptance rule, the
operator weights, the restart from the best tree for the last 10 % of the rounds).
Every tree is evaluated by the one analyzer, ``chipsched.problems.tile_groups``; its
segment cache makes a move that changes one root child cost one segment evaluation.

Spaces (``docs/tile_groups.md``): ``sa`` and ``random`` search the full tree space
with SET's NPT tile allocation; ``ls`` and ``lp`` search the segmented LS and LP
subspaces exactly up to their segment-length limit (Pareto DP).
"""

from __future__ import annotations

import math
import random
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

import numpy as np

from chipsched.budget import Budget, BudgetExhausted
from chipsched.cost import divisors
from chipsched.errors import InputError
from chipsched.method import MethodOutput, method, param
from chipsched.problems.tile_groups import (
    LEAF,
    SCUT,
    TCUT,
    Instance,
    Node,
    Solution,
    assemble,
    cut,
    get,
    iter_nodes,
    leaf,
    least_tiles,
    ls_tree,
    normalize,
    replace_at,
    resized,
)
from chipsched.problems.tile_groups.analyzer import Infeasible
from chipsched.problems.tile_groups.segment_kernel import (
    warm_up_kernels as segment_kernels,
)
from chipsched.problems.tile_groups.segments import (
    DPStopped,
    is_ls,
    pareto_dp,
    pareto_points,
    segment_node,
    thin_front,
)
from chipsched.problems.tile_groups.tree import cut_at, cut_nodes, cut_paths, leaf_starts, n_leaves
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions

#: the most SA rounds a run may ask for (a larger count never ends in practice; give a
#: --time-limit for long runs)
MAX_ROUNDS = 100_000_000

#: SET's operator weights (sa.cpp: swap-front 10, swap-back 10, delete 20, add 20,
#: batch down 20, batch up 20, move leaf 40): OP1 (swap) 20, OP2 (move) 40, others 20.
OP_WEIGHTS = {"op1": 20, "op2": 40, "op3": 20, "op4": 20, "op5": 20, "op6": 20}
#: Our three additions (``moves="extended"``), weighted like OP3/OP4: OP7 merges two
#: adjacent sibling cuts of the same type and sub-batch count, OP8 splits a cut in two,
#: OP9 flips a cut between T and S. Without OP7/OP8 ``T(k)[a] T(k)[b]`` cannot become
#: ``T(k)[a b]`` through feasible trees (OP2 moves a leaf only among its parent's
#: children; OP4 on a wrapper puts the layer back at the full batch, which may not fit);
#: without OP9 turning a sub-batched T group into an S group needs OP4 then OP3 through
#: a tree that rarely fits.
EXTENDED_WEIGHTS = {**OP_WEIGHTS, "op7": 20, "op8": 20, "op9": 20}
MOVES = ("extended", "document")
STARTS = ("best", "wrapped", "ls", "dp", "nested")

SPACES = ("full", "ls", "lp")


# ---------------------------------------------------------------------------------------
# tree operators (seed 002 "Search", docs/tile_groups.md; SET sa.cpp)


@dataclass(frozen=True)
class _Ctx:
    """What the operators need to know about the instance (``memo``: traversals of the
    current tree, reused by the operators' tries on it)."""

    edges: frozenset[tuple[int, int]]
    batch: int
    space: str
    memo: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


def _leaf_at(tree: Node, i: int) -> tuple[tuple[int, ...], int]:
    """(path, layer) of the ``i``-th leaf (in-order), found by descending the tree
    (:func:`leaf_starts` at each cut) — the SA draws one or two leaves per move, and
    listing all of them was its largest cost on PNASNet-5 Large's 505 layers."""
    path: list[int] = []
    node = tree
    while node.kind != LEAF:
        starts = leaf_starts(node)
        j = bisect_right(starts, i) - 1
        i -= starts[j]
        path.append(j)
        node = node.children[j]
    return tuple(path), node.layer


def _cuts_with_batch(tree: Node, batch: int, ctx: _Ctx | None = None
                     ) -> list[tuple[tuple[int, ...], Node, int]]:
    """(path, cut, batch of the cut) for every cut, pre-order (memoized per tree in
    ``ctx``). The operators draw from :func:`cut_nodes` instead (:func:`_memo`)."""
    memo = ctx.memo if ctx is not None else {}
    if memo.get("cuts_tree") is tree and memo.get("cuts_batch") == batch:
        return memo["cuts"]
    # (b // x) // y == b // (x·y) for positive integers
    out = [(path, n, batch // d) for path, n, d in cut_paths(tree)]
    memo["cuts_tree"], memo["cuts_batch"], memo["cuts"] = tree, batch, out
    return out


def _memo(ctx: _Ctx, key: str, tree: Node, make: Callable[[], Any]) -> Any:
    """``make()`` for the current tree, kept in ``ctx.memo`` until the tree changes:
    the operators' tries on one tree (every rejected move) share it."""
    hit = ctx.memo.get(key)
    if hit is not None and hit[0] is tree:
        return hit[1]
    v = make()
    ctx.memo[key] = (tree, v)
    return v


def _multi_cuts(tree: Node, ctx: _Ctx, depth_one: bool = False) -> list[int]:
    """Indices (in :func:`cut_nodes`) of the non-root cuts with ≥ 2 children, pre-order;
    ``depth_one``: only the root's children (the LS/LP spaces)."""
    if depth_one:
        def make() -> list[int]:
            if tree.kind == LEAF:
                return []
            cut_nodes(tree)
            return [k for k, c in zip(tree._cut_starts, tree.children, strict=True)
                    if c.kind != LEAF and len(c.children) >= 2]
        return _memo(ctx, "multi1", tree, make)
    return _memo(ctx, "multi", tree, lambda: [
        k for k, c in enumerate(cut_nodes(tree)) if k and len(c.children) >= 2])


def _fits(node: Node, batch: int) -> bool:
    """Every cut below (and at) ``node`` divides its batch."""
    if node.kind == LEAF:
        return True
    if batch % node.sb:
        return False
    return all(_fits(c, batch // node.sb) for c in node.children)


def _rebuilt(kind: str, kids: Sequence[Node], sb: int, is_root: bool) -> Node | None:
    """A cut with new children in the tree space, or ``None``: a non-root cut left
    with one child must wrap a leaf (it becomes ``T(sb)[leaf]`` or the leaf)."""
    if not kids:
        return None
    if len(kids) == 1:
        if kids[0].kind != LEAF:
            return cut(TCUT, kids, sb) if is_root else None
        if sb == 1:
            return kids[0]
        return cut(TCUT, kids, sb)
    return Node(kind, -1, tuple(kids), sb, None)


def op1_swap(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP1: swap two adjacent leaves (in-order) that have no dependency. Adjacent in a
    topological order, they can only depend directly, so the edge check suffices."""
    n = n_leaves(tree)
    if n < 2:
        return None
    i = rng.randrange(n - 1)
    (pa, la), (pb, lb) = _leaf_at(tree, i), _leaf_at(tree, i + 1)
    if (la, lb) in ctx.edges:
        return None
    return replace_at(replace_at(tree, pa, leaf(lb)), pb, leaf(la))


def op2_move(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP2: move a leaf into the adjacent sibling cut before/after it, or out of its
    parent into the grandparent (before the parent if it is the first child, after it
    if the last), so the leaves keep their order (SET sa.cpp case 6)."""
    path, _ = _leaf_at(tree, rng.randrange(n_leaves(tree)))
    if not path:
        return None
    pp, j = path[:-1], path[-1]
    parent = get(tree, pp)
    me = parent.children[j]
    opts = []
    if j > 0 and parent.children[j - 1].kind != LEAF:
        opts.append("before")
    if j + 1 < len(parent.children) and parent.children[j + 1].kind != LEAF:
        opts.append("after")
    if pp and (j == 0 or j == len(parent.children) - 1):
        opts.append("out")
    if not opts:
        return None
    choice = rng.choice(opts)
    if choice in ("before", "after"):
        k = j - 1 if choice == "before" else j + 1
        tgt = parent.children[k]
        kids = tgt.children + (me,) if choice == "before" else (me,) + tgt.children
        kind = {"ls": TCUT, "lp": SCUT}.get(ctx.space, tgt.kind)
        new_t = _rebuilt(kind, kids, tgt.sb, False)
        rest = list(parent.children)
        rest[k] = new_t
        del rest[j]
        new_p = _rebuilt(parent.kind, rest, parent.sb, not pp)
        if new_p is None or new_t is None:
            return None
        return replace_at(tree, pp, new_p)
    # out: into the grandparent next to the parent
    gp, pj = pp[:-1], pp[-1]
    grand = get(tree, gp)
    rest = [c for i, c in enumerate(parent.children) if i != j]
    new_p = _rebuilt(parent.kind, rest, parent.sb, False)
    if new_p is None:
        return None
    kids = list(grand.children)
    kids[pj:pj + 1] = [me, new_p] if j == 0 else [new_p, me]
    new_g = _rebuilt(grand.kind, kids, grand.sb, not gp)
    if new_g is None:
        return None
    return replace_at(tree, gp, new_g)


def op3_group(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP3: pick a cut and group a random run of consecutive children into a new cut of
    random type and random sub-batch count (a divisor of the children's batch that the
    grouped children's own sub-batch counts still divide). A run of one leaf becomes
    ``T(sb)[leaf]``; the whole child list may be grouped only at the root."""
    n_cuts = len(cut_nodes(tree)) if ctx.space == "full" else int(tree.kind != LEAF)
    if not n_cuts:
        return None
    path, node, b = cut_at(tree, rng.randrange(n_cuts), ctx.batch)
    n = len(node.children)
    max_len = n if not path else n - 1
    if max_len < 1:
        return None
    k = rng.randint(1, max_len)
    i = rng.randint(0, n - k)
    run = node.children[i:i + k]
    if ctx.space != "full" and any(c.kind != LEAF for c in run):
        return None
    cb = b // node.sb
    if k == 1:
        if run[0].kind != LEAF:
            return None
        kind = TCUT
        ds = [d for d in divisors(cb) if d > 1]
    else:
        kind = {"ls": TCUT, "lp": SCUT}.get(ctx.space) or rng.choice((SCUT, TCUT))
        ds = [d for d in divisors(cb) if all(_fits(c, cb // d) for c in run)]
    if not ds:
        return None
    new = Node(kind, -1, tuple(run), rng.choice(ds), None)
    kids = node.children[:i] + (new,) + node.children[i + k:]
    # grouping all of a root S cut's children leaves it one cut child: only a root T
    # cut may hold a single cut (``_rebuilt`` makes it one)
    return replace_at(tree, path, _rebuilt(node.kind, kids, node.sb, not path))


def op4_delete(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP4: delete a non-root cut, giving its children to its parent in its place (their
    batch grows by the deleted cut's sub-batch count; their own counts still divide)."""
    n_cuts = len(cut_nodes(tree)) - 1  # the root, when a cut, comes first
    if n_cuts <= 0:
        return None
    path, node, _ = cut_at(tree, 1 + rng.randrange(n_cuts), ctx.batch)
    pp, j = path[:-1], path[-1]
    parent = get(tree, pp)
    kids = parent.children[:j] + node.children + parent.children[j + 1:]
    new_p = _rebuilt(parent.kind, kids, parent.sb, not pp)
    if new_p is None:
        return None
    return replace_at(tree, pp, new_p)


def _resb(tree: Node, rng: random.Random, ctx: _Ctx, up: bool) -> Node | None:
    n_cuts = len(cut_nodes(tree))
    if not n_cuts:
        return None
    path, node, b = cut_at(tree, rng.randrange(n_cuts), ctx.batch)
    ds = [d for d in divisors(b) if (d > node.sb if up else d < node.sb)]
    ds = [d for d in ds if all(_fits(c, b // d) for c in node.children)]
    if not ds:
        return None
    d = min(ds) if up else max(ds)  # the next step, like SET's ×2 / ÷2
    new = normalize(Node(node.kind, -1, node.children, d, node.alloc))
    if new.kind == LEAF and not path and n_leaves(tree) > 1:
        return None
    return replace_at(tree, path, new)


def op5_more_sub_batches(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP5: increase a cut's sub-batch count (its children's batch shrinks)."""
    return _resb(tree, rng, ctx, True)


def op6_fewer_sub_batches(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP6: decrease a cut's sub-batch count (its children's batch grows)."""
    return _resb(tree, rng, ctx, False)


def _mergeable_pairs(tree: Node, ctx: _Ctx) -> list[tuple[int, int]]:
    """(index in :func:`cut_nodes`, i) of every cut whose children i and i + 1 are cuts
    of one type and sub-batch count, pre-order (OP7's choices; the root's only in the
    LS/LP spaces)."""
    def make() -> list[tuple[int, int]]:
        nodes = cut_nodes(tree) if ctx.space == "full" else cut_nodes(tree)[:1]
        return [(k, i) for k, node in enumerate(nodes)
                for i, (a, b) in enumerate(pairwise(node.children))
                if a.kind != LEAF and b.kind == a.kind and a.sb == b.sb]

    return _memo(ctx, "pairs", tree, make)


def op7_merge(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP7 [ours]: merge two adjacent sibling cuts of the same type and sub-batch count
    into one (``T(k)[a] T(k)[b]`` → ``T(k)[a b]``; an S cut's explicit allocation is
    dropped for the NPT one). In the LS/LP spaces only root children merge."""
    pairs = _mergeable_pairs(tree, ctx)
    if not pairs:
        return None
    k, i = pairs[rng.randrange(len(pairs))]
    path, node, _ = cut_at(tree, k, ctx.batch)
    a, b = node.children[i], node.children[i + 1]
    merged = Node(a.kind, -1, a.children + b.children, a.sb, None)
    kids = node.children[:i] + (merged,) + node.children[i + 2:]
    # a non-root cut left with the merged cut alone would hold a single cut
    new = _rebuilt(node.kind, kids, node.sb, not path)
    if new is None:
        return None
    return replace_at(tree, path, new)


def op8_split(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP8 [ours], the inverse of OP7: split a non-root cut with ≥ 2 children into two
    adjacent cuts of its type and sub-batch count (``T(k)[a b]`` → ``T(k)[a] T(k)[b]``;
    a part of one leaf becomes ``T(k)[leaf]``, or the leaf when k = 1)."""
    cuts = _multi_cuts(tree, ctx, depth_one=ctx.space != "full")
    if not cuts:
        return None
    path, node, _ = cut_at(tree, cuts[rng.randrange(len(cuts))], ctx.batch)
    k = rng.randint(1, len(node.children) - 1)
    parts = []
    for kids in (node.children[:k], node.children[k:]):
        part = _rebuilt(node.kind, kids, node.sb, False)
        if part is None:
            return None
        parts.append(part)
    pp, j = path[:-1], path[-1]
    parent = get(tree, pp)
    kids = parent.children[:j] + tuple(parts) + parent.children[j + 1:]
    new_p = _rebuilt(parent.kind, kids, parent.sb, not pp)
    if new_p is None or (parent.kind == SCUT and parent.alloc is not None):
        return None  # an explicit allocation has one count per child: leave it alone
    return replace_at(tree, pp, new_p)


def op9_flip(tree: Node, rng: random.Random, ctx: _Ctx) -> Node | None:
    """OP9 [ours]: turn a cut with ≥ 2 children from T into S or back, same children and
    sub-batch count (an S cut's explicit allocation gives way to NPT). The root stays a T
    cut; in the LS/LP spaces the type is fixed."""
    if ctx.space != "full":
        return None
    cuts = _multi_cuts(tree, ctx)
    if not cuts:
        return None
    path, node, _ = cut_at(tree, cuts[rng.randrange(len(cuts))], ctx.batch)
    kind = SCUT if node.kind == TCUT else TCUT
    return replace_at(tree, path, Node(kind, -1, node.children, node.sb, None))


OPERATORS: dict[str, Callable[[Node, random.Random, _Ctx], Node | None]] = {
    "op1": op1_swap, "op2": op2_move, "op3": op3_group, "op4": op4_delete,
    "op5": op5_more_sub_batches, "op6": op6_fewer_sub_batches, "op7": op7_merge,
    "op8": op8_split, "op9": op9_flip,
}


def mutate(tree: Node, rng: random.Random, ctx: _Ctx, weights: dict[str, float],
           tries: int = 200) -> tuple[Node, str] | None:
    """One random operator application (drawn by ``weights``) that changes the tree;
    up to ``tries`` draws, ``None`` if none applies."""
    names = [k for k, w in weights.items() if w > 0]
    ws = [weights[k] for k in names]
    for _ in range(tries):
        name = rng.choices(names, ws)[0]
        new = OPERATORS[name](tree, rng, ctx)
        if new is not None and new != tree:
            return new, name
    return None


# ---------------------------------------------------------------------------------------
# simulated annealing


def temperature(x: float, t0: float, alpha: float) -> float:
    """SET's schedule at progress x ∈ [0, 1]: T0·(1−x)/(1+α·x) — T0 at the start, exactly
    0 at the end (sa.cpp ``sa_accept``; seed 002, docs/tile_groups.md)."""
    return t0 * (1.0 - x) / (1.0 + alpha * x)


def accept(cur: float, new: float, temp: float, rng: random.Random) -> bool:
    """Metropolis rule on the relative cost change: always accept a tree that is not
    worse; a worse one with probability exp(−((new − cur)/cur)/T) (sa.cpp)."""
    if new <= cur:
        return True
    if temp <= 0 or cur <= 0:
        return False
    return rng.random() < math.exp(-((new - cur) / cur) / temp)


def wrapped_layers(instance: Instance) -> list[Node]:
    """Each layer alone, wrapped in ``T(k)[layer]`` with the smallest sub-batch count k
    (a divisor of the batch) with which it fits the buffers as a segment of its own —
    the bare leaf when k = 1 (:func:`wrapped_start`'s root children)."""
    an = instance.analyzer
    out = []
    for layer in range(len(instance.workload)):
        for k in divisors(instance.batch):
            node = leaf(layer) if k == 1 else cut(TCUT, [leaf(layer)], k)
            try:
                an.segment(node, instance.batch, (layer,))
            except Infeasible:
                continue
            out.append(node)
            break
        else:
            raise InputError(f"layer {instance.layer_names[layer]!r}", "fits the buffers "
                             "with no sub-batch count", "use a chip with more tiles or "
                             "larger buffers")
    return out


def wrapped_start(instance: Instance) -> tuple[Node, float]:
    """The default start [ours]: a root ``T(1)`` whose children are the layers in
    topological order, each wrapped in ``T(k)[layer]`` with the smallest sub-batch count
    k (a divisor of the batch) with which it fits the buffers alone — the bare leaf when
    k = 1.

    SET's start (:func:`initial_tree`) runs every layer at the full batch under one root
    T cut; our buffer rule is stricter than SET's (docs/tile_groups.md), so on real
    networks that tree does not fit and a root sub-batch count k > 1 is taken instead,
    which re-runs the whole network k times and reloads every weight per run — and going
    back to one root run is a global move that is never feasible, so the annealing stays
    near the layer-sequential value. Wrapping each layer alone keeps the root at one
    run and every layer at the largest batch that fits.
    """
    an = instance.analyzer
    tree = assemble(wrapped_layers(instance))
    v = an.try_objective(tree)
    if v is None:  # every segment fits, so the tree does; a failure here is a bug
        raise RuntimeError("the wrapped start does not run although its segments do")
    return tree, v


#: the most (latency, energy) points segment recombination keeps per shared boundary
#: (thinned evenly over latency, extremes kept; the best tree of the pool is kept anyway)
RECOMBINE_FRONT = 256
RECOMBINE = ("reheats", "end", "off")


def _root_of(segments: Sequence[Node], runs: int) -> Node:
    """The tree whose root children are ``segments``, run ``runs`` times (the form
    :meth:`Analyzer.segments_of` reads back: a lone segment that is not a T cut is the
    root itself)."""
    if len(segments) == 1 and runs == 1 and segments[0].kind != TCUT:
        return segments[0]
    return cut(TCUT, segments, runs)


def recombine_segments(instance: Instance, trees: Sequence[Node]
                       ) -> tuple[Node, float, dict[str, Any]]:
    """Segment recombination [ours]: the best tree whose segments (root children) all
    come from ``trees``, where a tree may hand over to another only at a segment
    boundary they share — the same set of layers done before it and the same root
    sub-batch count.

    A segment's cost depends on its own subtree and batch alone (the analyzer caches it
    by them: the maps it reads from earlier segments and writes for later ones are
    fixed by its layer set), and latency and energy add over segments, so a Pareto DP
    over the shared boundaries (``(latency, energy)`` fronts, at most
    :data:`RECOMBINE_FRONT` points each) finds the best splice — an exact recombination
    in the spirit of partition crossover (Whitley, Hains and Howe, "Tunneling between
    optima: partition crossover for the TSP", GECCO 2009), which also splices parents
    where they agree. The result is never worse than the best of ``trees``.

    Returns (tree, objective, stats: pool size, distinct segments, shared boundaries,
    whether the tree is a splice of several trees)."""
    an = instance.analyzer
    obj = instance.objective
    seen: set[Node] = set()
    pool: list[Node] = []
    for t in trees:
        if t not in seen:
            seen.add(t)
            pool.append(t)
    best_tree, best_v = None, math.inf
    for t in pool:
        v = an.try_objective(t)
        if v is not None and v < best_v:
            best_tree, best_v = t, v
    if best_tree is None:
        raise ValueError("segment recombination needs a tree the analyzer can run")
    # (segment batch, runs) → boundary (bit set of the layers done) → next boundary →
    # {segment: (time, energy)}
    graphs: dict[tuple[int, int], dict[int, dict[int, dict[Node, tuple[float, float]]]]] = {}
    n_segments = 0
    for t in pool:
        try:
            segs, b, runs = an.segments_of(t)
            costs = [an.segment(sg, b) for sg in segs]
        except Infeasible:
            continue
        g = graphs.setdefault((b, runs), {})
        done = 0
        for sg, c in zip(segs, costs, strict=True):
            nxt = done
            for x in sg.layers:
                nxt |= 1 << x
            opts = g.setdefault(done, {}).setdefault(nxt, {})
            if sg not in opts:
                opts[sg] = (c.time, c.energy)
                n_segments += 1
            done = nxt
    spliced = False
    boundaries = 0
    full = (1 << len(instance.workload)) - 1
    for (_b, runs), g in graphs.items():
        order = sorted({u for u in g} | {v for u in g for v in g[u]}, key=int.bit_count)
        boundaries += len(order)
        # front[u]: (latency, energy, (previous boundary, its point, segment))
        front: dict[int, list[tuple[float, float, Any]]] = {0: [(0.0, 0.0, None)]}
        for u in order:
            pts = front.get(u)
            if not pts:
                continue
            if u:
                pts = thin_front(pareto_points(pts), RECOMBINE_FRONT)
                front[u] = pts
            for v, opts in g.get(u, {}).items():
                out = front.setdefault(v, [])
                for ts, es, sg in pareto_points([(ts, es, sg)
                                                  for sg, (ts, es) in opts.items()]):
                    out.extend((d + ts, e + es, (u, k, sg))
                               for k, (d, e, _) in enumerate(pts))
        end = pareto_points(front.get(full, []))
        if not end:
            continue
        k = min(range(len(end)), key=lambda i: obj(runs * end[i][1], runs * end[i][0]))
        segs: list[Node] = []
        pts, u = end, full
        while u:
            prev, kk, sg = pts[k][2]
            segs.append(sg)
            u, k, pts = prev, kk, front[prev]
        tree = _root_of(segs[::-1], runs)
        v = an.try_objective(tree)
        if v is not None and v < best_v:
            best_tree, best_v, spliced = tree, v, True
    return best_tree, best_v, {"pool": len(pool), "segments": n_segments,
                               "boundaries": boundaries, "spliced": spliced}


def explicit_allocations(instance: Instance, tree: Node) -> Node:
    """``tree`` with the tile counts of every S cut written out — the explicit ones as
    they are, NPT ones as the analyzer computes them — so it costs exactly what
    ``tree`` costs (NPT depends on the subtree's structure only)."""
    an = instance.analyzer

    def rec(node: Node, tiles: int, path: tuple[int, ...]) -> Node:
        if node.kind == LEAF:
            return node
        if node.kind == TCUT:
            kids = tuple(rec(c, tiles, path + (i,)) for i, c in enumerate(node.children))
            return Node(TCUT, -1, kids, node.sb, None)
        alloc = an.allocation(node, tiles, path)
        kids = tuple(rec(c, a, path + (i,))
                     for i, (c, a) in enumerate(zip(node.children, alloc, strict=True)))
        return Node(SCUT, -1, kids, node.sb, alloc)

    return rec(tree, an.G, ())


def polish_allocations(instance: Instance, start: tuple[Node, float], rng: random.Random, *,
                       patience: int, budget: Budget | None = None,
                       progress: Callable[[float, float | None, str], None] | None = None,
                       ) -> tuple[Node, float, dict[str, Any]]:
    """Allocation polish [ours]: a first-improvement local search over the tile counts
    of every S cut of ``start``'s tree, its structure (order, cuts, sub-batches) fixed.

    NPT allocation (SET's) sizes an S cut's tile groups by compute time alone; it gives
    tiles to a child that the buffers, the NoC or a DRAM-bound segment do not need, and
    cannot trade a little time for less energy. A move takes d tiles (1, 2, 4, … up to
    what the child can give while keeping :func:`least_tiles`) from one child of a
    random S cut to another, rescaling the explicit allocations below both in
    proportion (:func:`resized`), and is kept when the objective falls. The search ends
    after ``patience`` draws in a row without a gain (a draw whose giving child is at its
    least tiles counts), or when ``budget`` is over
    (``stats['stopped']``). The tree's allocations come back explicit (``S(sb){a,…}``);
    never worse than ``start``."""
    an = instance.analyzer
    obj = instance.objective
    t_start = time.perf_counter()
    tree = explicit_allocations(instance, start[0])
    cur_s = an.sums(tree)
    v = cur_s.objective(obj)
    spaths = [p for p, n in iter_nodes(tree) if n.kind == SCUT]
    # the structure is fixed, so each S-cut child's least tiles is too
    floors = {p: [least_tiles(c) for c in get(tree, p).children] for p in spaths}
    draws = moves = gains = fails = 0
    stopped = ""
    # draws that cannot move (the giving child at its least tiles) count as failures, so
    # a tree whose S cuts are all at their floors ends after `patience` draws
    while spaths and fails < patience:
        if budget is not None and budget.exhausted():
            stopped = budget.stop_reason
            break
        if progress is not None and draws % 1000 == 0:
            progress(fails, patience, f"allocation polish {instance.name}: {v:.4g}")
        draws += 1
        path = rng.choice(spaths)
        s = get(tree, path)
        i, j = rng.sample(range(len(s.children)), 2)
        room = s.alloc[i] - floors[path][i]  # type: ignore[index]
        fails += 1
        if room < 1:
            continue
        d = 1 << rng.randrange(room.bit_length())
        a = list(s.alloc)  # type: ignore[arg-type]
        a[i] -= d
        a[j] += d
        ci, cj = resized(s.children[i], a[i]), resized(s.children[j], a[j])
        if ci is None or cj is None:
            continue
        kids = list(s.children)
        kids[i], kids[j] = ci, cj
        new = replace_at(tree, path, Node(SCUT, -1, tuple(kids), s.sb, tuple(a)))
        moves += 1
        try:
            new_s = an.sums(new, cur_s)
        except Infeasible:
            continue
        nv = new_s.objective(obj)
        if nv < v:
            tree, cur_s, v = new, new_s, nv
            gains += 1
            fails = 0
            if budget is not None:
                budget.improved(v)
    v = an.objective(tree)  # the analyzer's own sum, not the incremental one
    if v > start[1]:
        tree, v = start
    return tree, v, {"start_objective": start[1], "objective": v, "s_cuts": len(spaths),
                     "draws": draws, "moves": moves, "gains": gains, "stopped": stopped,
                     "seconds": time.perf_counter() - t_start}


def polish_tree(instance: Instance, start: tuple[Node, float], rng: random.Random, *,
                patience: int, descents: int, iterations: int,
                weights: dict[str, float] | None = None, space: str = "full",
                budget: Budget | None = None,
                progress: Callable[[float, float | None, str], None] | None = None,
                ) -> tuple[Node, float, dict[str, Any]]:
    """Allocation polish alternated with structural descents [ours]:
    :func:`polish_allocations` of ``start``, then up to ``descents`` rounds of a
    descent — :func:`anneal` at zero temperature for ``iterations`` rounds (the SA's
    operators, a tree kept when it is no worse) — each followed by another allocation
    polish; the rounds end early when one brings no gain.

    Why: the annealing ends in a tree no operator improves *under NPT allocations*; once
    the polish has moved tiles between S-cut children, moves that were uphill before
    (regrouping, merging, another sub-batch count next to a re-sized group) can be
    downhill, and the new structure can take another allocation. Operators that rebuild
    an S cut give it NPT allocation again (and a tree the analyzer refuses, dropped,
    when explicit allocations lie below it). ``stats``: the start tree's S cuts, the
    polish's draws, moves and gains summed over every polish, and per round the
    objective after the descent and after its polish, the descent's accepted moves and
    the round's seconds. Never worse than
    ``start``; ``descents=0`` is :func:`polish_allocations` alone."""
    t_start = time.perf_counter()
    tree, v, first = polish_allocations(instance, start, rng, patience=patience,
                                        budget=budget, progress=progress)
    totals = {k: first[k] for k in ("s_cuts", "draws", "moves", "gains")}
    stopped = first["stopped"]
    rounds: list[dict[str, Any]] = []
    for k in range(descents):
        if stopped or (budget is not None and budget.exhausted()):
            stopped = stopped or (budget.stop_reason if budget is not None else "")
            break
        t0 = time.perf_counter()
        d_tree, d_v, ds = anneal(instance, rng, start=(tree, v), iterations=iterations,
                                 t0=0.0, alpha=0.0, restart_frac=1.0,
                                 weights=weights if weights is not None else EXTENDED_WEIGHTS,
                                 space=space, progress=progress, budget=budget,
                                 label=f"descent {k + 1}/{descents}")
        stopped = ds["stopped"]
        p_tree, p_v, ps = polish_allocations(instance, (d_tree, d_v), rng, patience=patience,
                                             budget=budget, progress=progress)
        stopped = stopped or ps["stopped"]
        for key in ("draws", "moves", "gains"):
            totals[key] += ps[key]
        rounds.append({"descent": d_v, "polish": p_v, "accepted": ds["accepted"],
                       "seconds": time.perf_counter() - t0})
        gained = p_v < v * (1 - 1e-9)
        tree, v = p_tree, p_v
        if not gained:
            break
    return tree, v, {"start_objective": start[1], "objective": v, **totals,
                     "first_polish": first["objective"], "descents": rounds,
                     "stopped": stopped, "seconds": time.perf_counter() - t_start}


def initial_tree(instance: Instance) -> tuple[Node, float]:
    """SET's start (``start="ls"``): all leaves under a root T cut in topological order
    (layer-sequential); of the root sub-batch counts that fit the buffers, the one with
    the best objective."""
    an = instance.analyzer
    best: tuple[Node, float] | None = None
    for sb in divisors(instance.batch):
        t = ls_tree(len(instance.workload), sb)
        v = an.try_objective(t)
        if v is not None and (best is None or v < best[1]):
            best = (t, v)
    if best is None:
        raise InputError(f"network {instance.workload.name!r}",
                         "no layer-sequential tree fits the buffers", "use a larger chip")
    return best


def anneal(instance: Instance, rng: random.Random, *, start: tuple[Node, float],
           iterations: int, t0: float, alpha: float, restart_frac: float,
           weights: dict[str, float], space: str, greedy_random: bool = False,
           progress: Callable[[float, float | None, str], None] | None = None,
           budget: Budget | None = None,
           label: str = "sa",
           on_best: Callable[[Node], None] | None = None) -> tuple[Node, float, dict[str, Any]]:
    """The SA loop (SET sa.cpp ``SA_search``): mutate, evaluate (invalid trees are
    dropped), accept by :func:`accept` at :func:`temperature`, keep the best, switch to
    the best tree at ``restart_frac`` of the rounds. ``greedy_random=True`` accepts every
    valid tree (random search). ``progress(done, total, note)`` hears of every 1 % of
    the rounds; ``budget`` is polled every round (the loop ends when it is over:
    ``stats['stopped']`` says why) and hears of every new best tree, as does
    ``on_best(tree)`` (the SA's pool for :func:`recombine_segments`)."""
    an = instance.analyzer
    ctx = _Ctx(frozenset((s, d) for s, d, _ in instance.workload.edges), instance.batch, space)
    w = dict(weights)
    if instance.batch == 1:
        w["op5"] = w["op6"] = 0
    cur, cur_v = start
    best, best_v = start
    obj = instance.objective
    # incremental sums: a move that changes one root child looks up one segment
    cur_s = best_s = an.sums(cur)
    valid = accepted = improved = 0
    # per operator: trees proposed, of which infeasible, accepted, new best
    per_op = {k: {"proposed": 0, "infeasible": 0, "accepted": 0, "improved": 0}
              for k in w if w[k] > 0}
    t_start = time.perf_counter()
    step = max(1, iterations // 100)
    rounds = 0
    stopped = ""
    for r in range(iterations):
        if progress is not None and r % step == 0:
            progress(r, iterations, f"{label} {instance.name}: best {best_v:.4g}")
        if budget is not None and budget.exhausted():
            stopped = budget.stop_reason
            break
        rounds = r + 1
        if not greedy_random and r == int(restart_frac * iterations):
            cur, cur_v, cur_s = best, best_v, best_s
        m = mutate(cur, rng, ctx, w)
        if m is None:
            continue
        new, op = m
        po = per_op[op]
        po["proposed"] += 1
        try:
            new_s = an.sums(new, cur_s)
        except Infeasible:
            po["infeasible"] += 1
            continue
        v = new_s.objective(obj)
        valid += 1
        if v < best_v:
            best, best_v, best_s = new, v, new_s
            improved += 1
            po["improved"] += 1
            if budget is not None:
                budget.improved(v)
            if on_best is not None:
                on_best(new)
        temp = math.inf if greedy_random else temperature(r / iterations, t0, alpha)
        if greedy_random or accept(cur_v, v, temp, rng):
            cur, cur_v, cur_s = new, v, new_s
            accepted += 1
            po["accepted"] += 1
    # the reported value is the analyzer's own sum, not the incremental one (they differ
    # by float rounding only); never return worse than the start
    best_v = an.objective(best)
    if best_v > start[1]:
        best, best_v = start
    wall = time.perf_counter() - t_start
    stats = {"iterations": rounds, "valid": valid, "accepted": accepted, "improved": improved,
             "operators": per_op, "start_objective": start[1],
             "iterations_per_s": rounds / wall if wall > 0 else None, "loop_s": wall,
             "segment_cache": len(an._seg), "stopped": stopped}
    return best, best_v, stats


#: share of what is left of a limited budget that the 'best' start's DP trees may take
#: (on PNASNet-5 Large cloud-12x12 b64 the LS and LP DPs take 16 s and 17 s)
DP_START_SHARE = 0.5
#: the DP trees a start may take: (mode, longest segment) — the ``ls``/``lp`` defaults
DP_STARTS = (("ls", 16), ("lp", 12))


def _best_start(instance: Instance, budget: Budget, space: str = "full"
                ) -> tuple[Node, float]:
    """The best of the wrapped start and the DP trees of ``space`` (LS, LP and the
    right-nested segment DP's for the full space, else the one DP whose trees the
    restricted space holds), the DPs given at most :data:`DP_START_SHARE` of what is
    left; a DP that the budget or its memory cap stops is skipped. The nested DP joined
    on 2026-12-08: its tree is below the others on 21 of SET's 30 configurations, and
    an SA from it did 1.1–1.8× better than from them on PNASNet-5 Large."""
    best = wrapped_start(instance)
    step = budget.share(DP_START_SHARE)
    for mode, max_segment in (*DP_STARTS, ("nested", NestedParams.max_segment)):
        if space not in ("full", mode):
            continue
        try:
            out = _dp_method(instance, mode, max_segment, 64, step)
        except (BudgetExhausted, DPStopped, InputError):
            continue
        if out.objective < best[1]:
            best = (out.solution.tree, out.objective)
    return best


def _start(instance: Instance, options: SolveOptions, start: str = "wrapped",
           space: str = "full") -> tuple[Node, float]:
    """The SA's first tree: the warm start if given (checked by the face); else
    ``start='best'`` (the best of the wrapped start, the LS/LP DP trees and the
    right-nested DP's, the SA's default), ``'wrapped'`` (:func:`wrapped_start`),
    ``'ls'`` (SET's layer-sequential start, :func:`initial_tree`), ``'dp'`` (the better
    of the LS and LP dynamic programs — SET's commented-out "SA-min" start) or
    ``'nested'`` (the right-nested segment DP's tree, :func:`nested`)."""
    if options.warm is not None:
        tree = options.warm_solution.tree
        return tree, instance.analyzer.objective(tree)
    if start == "best":
        return _best_start(instance, options.budget, space)
    if start == "wrapped":
        return wrapped_start(instance)
    if start == "ls":
        return initial_tree(instance)
    if start == "dp":
        outs = [_dp_method(instance, m, cap, 64, options.budget)
                for m, cap in DP_STARTS if space in ("full", m)]
        best = min(outs, key=lambda o: o.objective)
        return best.solution.tree, best.objective
    if start == "nested":
        out = nested(instance, options, NestedParams())
        return out.solution.tree, out.objective
    raise InputError("start", f"unknown start {start!r}", f"use one of {', '.join(STARTS)}")


@dataclass(frozen=True)
class SAParams:
    beta: float = param(400, "rounds per layer of each try (SET's β = 100; 400 by default, "
                        "ours: a slower anneal, 200 before): β × layers rounds a try",
                        gt=0)
    t0: float = param(0.07, "initial temperature T0 of SET's schedule T0·(1−x)/(1+α·x)",
                      gt=0)
    alpha: float = param(8, "α of SET's temperature schedule", ge=0)
    iterations: int | None = param(None, "rounds (at most 10⁸: ~14 h at 2,000 rounds/s)", ge=0,
                                   le=MAX_ROUNDS, none="β × layers")
    restart_frac: float = param(0.9, "fraction of the rounds after which the search "
                                "restarts from the best tree", ge=0, le=1)
    space: str = param("full", "trees searched: 'full', or only LS ('ls') / LP ('lp') root "
                       "children (the authors' restricted searches)", choices=SPACES)
    start: str = param("best", "first tree: the best of 'wrapped', 'dp' and 'nested' "
                       "('best', ours; the DPs get at most half of a time limit), every "
                       "layer alone at the largest batch that fits under a root T(1) "
                       "('wrapped', ours), SET's layer-sequential start ('ls'), the "
                       "better LS/LP DP tree ('dp') or the right-nested DP's tree "
                       "('nested', the nested method); a warm start overrides it",
                       choices=STARTS)
    moves: str = param("extended", "operators: OP1–OP6 of the document plus OP7 merge / "
                       "OP8 split of adjacent cuts and OP9 T↔S flip ('extended', ours), or "
                       "OP1–OP6 only ('document')", choices=MOVES)
    tries: int = param(8, "anneals of β × layers rounds each, the best kept (SET's "
                       "experiment runs 4 tries per search; 8 since issue 30)", ge=1)
    independent: int = param(4, "the first N tries start from the same first tree (SET's "
                             "independent tries); every later try starts from the best "
                             "tree so far (a reheat; ours). 4 (default): four draws, then "
                             "four reheats of the best; 1: every try after the first "
                             "chained; ≥ tries: SET's setup", ge=1)
    recombine: str = param("reheats", "segment recombination of the trees the tries "
                           "found (ours): the best splice at their shared segment "
                           "boundaries, before every reheat and at the end ('reheats'), "
                           "at the end only ('end'), or never ('off': the default until "
                           "2026-12-06)", choices=RECOMBINE)
    polish: int = param(2000, "allocation polish of the best tree at the end (ours): "
                        "moves of tiles between S-cut children, kept when the objective "
                        "falls, until this many draws in a row bring nothing; 0: none (NPT "
                        "allocations only, the SA before the polish)", ge=0)
    descents: int = param(1, "rounds of a structural descent (β × layers rounds of the "
                          "operators at zero temperature) each followed by another "
                          "allocation polish, after the first polish (ours; none when "
                          "polish=0); they end early when a round gains nothing; 0: the "
                          "polish alone (the SA until 2026-12-07)", ge=0)


@method("tile_groups", "sa", "heuristic",
        "SET simulated annealing over RA trees (OP1-OP6 + OP7-OP9, T0=0.07, α=8, β=400, "
        "best of 4 draws + 4 reheats, segment recombination, allocation polish and a "
        "zero-temperature descent)",
        source="seed 002 (SET, ISCA 2023); SET-ISCA2023 sa.cpp, main.cpp", randomized=True,
        space="full tree space, NPT tile allocation (then every allocation of the best "
        "tree's S cuts, by the polish)", params=SAParams, warm_start=True)
def sa(instance: Instance, options: SolveOptions, params: SAParams) -> MethodOutput:
    """SET's SA: ``tries`` anneals of ``iterations`` (default β × layers) rounds each, the
    best tree kept. The first try starts from ``start`` (by default the best of the
    wrapped layers, the LS/LP DP trees and the right-nested DP's; or any one, or SET's
    LS start; a warm start overrides it). The first ``independent`` tries (default 4 of
    8) start from it, as SET's tries do (``main.cpp`` runs its 4 in parallel threads, we
    run them one after another); every later try starts from the best tree so far, a
    reheat (ours) — SET's independent draws followed by as many reheats of the best
    (``independent ≥ tries``: SET's setup). With ``recombine='reheats'`` (default, ours)
    every reheat starts from the better of that tree and the best splice of every tree
    the tries so far made their best (:func:`recombine_segments`), and the run ends with
    one more such splice; 'end' splices once at the end (the tries are those of 'off'),
    'off' never. Last, ``polish`` > 0 (default 2000) hands the best tree to
    :func:`polish_allocations`, which moves tiles between S-cut children beyond what NPT
    allocates, and ``descents`` (default 1) rounds of a zero-temperature descent and
    another polish follow (:func:`polish_tree`).
    ``space`` 'full' (default), or 'ls'/'lp' to search only
    trees whose root children are T cuts / S cuts of leaves (the authors' LS-only and
    LP-only searches).
    Never returns a tree worse than its start.

    Try i draws from its own stream (``numpy.random.SeedSequence(seed).spawn``), so the
    tries of seeds 0 and 1 are 16 distinct anneals (SET seeds try i with seed + i)."""
    n = params.iterations if params.iterations is not None else \
        int(round(params.beta * len(instance.workload)))
    n = max(0, n)
    start = _start(instance, options, params.start, params.space)
    weights = EXTENDED_WEIGHTS if params.moves == "extended" else OP_WEIGHTS
    # one stream per try and one for the polish (spawn keys are positional: the tries'
    # streams are those of a run without the polish)
    *streams, extra = np.random.SeedSequence(options.seed).spawn(params.tries + 1)
    t_start = time.perf_counter()
    best: tuple[Node, float] | None = None
    runs: list[dict[str, Any]] = []
    per_op: dict[str, dict[str, int]] = {}
    totals = {"iterations": 0, "valid": 0, "accepted": 0, "improved": 0}
    stopped = ""
    # every tree a try made its best, for segment recombination
    pool: list[Node] = [start[0]]
    recombined: list[dict[str, Any]] = []

    def recombine() -> None:
        nonlocal best
        assert best is not None
        t0 = time.perf_counter()
        tree, v, st = recombine_segments(instance, pool)
        recombined.append({"before": best[1], "after": min(v, best[1]), **st,
                           "seconds": time.perf_counter() - t0})
        if v < best[1]:
            best = (tree, v)
            options.budget.improved(v)

    for i, stream in enumerate(streams):
        if runs and options.budget.exhausted():
            stopped = options.budget.stop_reason
            break
        if i >= params.independent and params.recombine == "reheats":
            recombine()
        progress = None
        if options.progress is not None:
            def progress(done: float, total: float | None, note: str, _i: int = i) -> None:
                options.progress(_i * n + done, params.tries * n, note)  # type: ignore[misc]
        rng = random.Random(int(stream.generate_state(1)[0]))
        first = best if i >= params.independent and best is not None else start
        tree, v, st = anneal(instance, rng, start=first, iterations=n, t0=params.t0,
                             alpha=params.alpha, restart_frac=params.restart_frac,
                             weights=weights, space=params.space, progress=progress,
                             budget=options.budget, label=f"SA try {i + 1}/{params.tries}",
                             on_best=pool.append if params.recombine != "off" else None)
        stopped = stopped or st["stopped"]
        runs.append({"start_objective": first[1], "objective": v,
                     "iterations": st["iterations"], "loop_s": st["loop_s"]})
        for k in totals:
            totals[k] += st[k]
        for op, counts in st["operators"].items():
            acc = per_op.setdefault(op, dict.fromkeys(counts, 0))
            for k, c in counts.items():
                acc[k] += c
        if best is None or v < best[1]:
            best = (tree, v)
    assert best is not None
    if params.recombine != "off" and not options.budget.exhausted():
        recombine()
    polished: dict[str, Any] | None = None
    if params.polish and not options.budget.exhausted():
        rng = random.Random(int(extra.generate_state(1)[0]))
        tree, v, polished = polish_tree(
            instance, best, rng, patience=params.polish, descents=params.descents,
            iterations=n, weights=weights, space=params.space, budget=options.budget,
            progress=options.progress)
        stopped = stopped or polished["stopped"]
        best = (tree, v)
    wall = time.perf_counter() - t_start
    stats = {**totals, "operators": per_op, "start_objective": start[1], "tries": runs,
             "recombinations": recombined, "polish": polished,
             "best_try": min(range(len(runs)), key=lambda j: runs[j]["objective"]),
             "iterations_per_s": totals["iterations"] / wall if wall > 0 else None,
             "loop_s": wall, "segment_cache": len(instance.analyzer._seg)}
    return _stopped(MethodOutput(Status.FEASIBLE, Solution.of(instance, best[0]), best[1],
                                 stats=stats), stopped, f"{len(runs)} of {params.tries} "
                    f"tries, {totals['iterations']:,} of {params.tries * n:,} rounds")


def _stopped(out: MethodOutput, reason: str, done: str) -> MethodOutput:
    """``out`` as a run the budget cut short (status ``time_limit``, what was done)."""
    if not reason:
        return out
    return replace(out, status=Status.TIME_LIMIT,
                   message=f"stopped ({reason}) after {done}: the best tree so far")


@dataclass(frozen=True)
class RandomParams:
    beta: float = param(100, "rounds per layer: β × layers random moves in all", gt=0)
    iterations: int | None = param(None, "rounds (at most 10⁸: ~14 h at 2,000 rounds/s)", ge=0,
                                   le=MAX_ROUNDS, none="β × layers")
    space: str = param("full", "trees searched (as for sa)", choices=SPACES)


@method("tile_groups", "random", "baseline",
        "random search: a random walk of OP1-OP6 moves (β × layers), keeping the best",
        source="seed 002 (SET: random search over RA trees)", randomized=True,
        space="full tree space, NPT tile allocation", params=RandomParams, warm_start=True)
def random_search(instance: Instance, options: SolveOptions, params: RandomParams
                  ) -> MethodOutput:
    """Every valid random move is taken; the best tree seen is returned."""
    n = params.iterations if params.iterations is not None else \
        int(round(params.beta * len(instance.workload)))
    rng = random.Random(options.seed)
    start = _start(instance, options)
    best, v, stats = anneal(instance, rng, start=start, iterations=max(0, n), t0=0, alpha=0,
                            restart_frac=1.0, weights=OP_WEIGHTS, space=params.space,
                            greedy_random=True, progress=options.progress,
                            budget=options.budget, label="random")
    return _stopped(MethodOutput(Status.FEASIBLE, Solution.of(instance, best), v, stats=stats),
                    stats["stopped"], f"{stats['iterations']:,} of {max(0, n):,} rounds")


# ---------------------------------------------------------------------------------------
# LS and LP: Tangram-style DP over segment boundaries


def _dp_method(instance: Instance, mode: str, max_segment: int, max_front: int,
               budget: Budget | None = None) -> MethodOutput:
    """The Pareto segment DP of ``mode``: LS or LP segments (:func:`segment_node`) or
    right-nested chains (:func:`nested_segments`)."""
    if mode == "nested":
        options_of = nested_segments(instance)
    else:
        sbs = divisors(instance.batch)
        layers = range(len(instance.workload))

        def options_of(i: int, j: int) -> list[Node]:
            return [segment_node(layers[i:j], sb, mode) for sb in sbs]

    tree, v, stats = pareto_dp(instance, options_of, max_segment, max_front,
                               monotone=is_ls if mode == "ls" else None, budget=budget)
    return MethodOutput(Status.FEASIBLE, Solution.of(instance, tree), v, stats=stats)


@dataclass(frozen=True)
class LSParams:
    max_segment: int = param(16, "longest segment (consecutive layers)", ge=1)
    max_front: int = param(64, "Pareto points kept per prefix (exact while no front grows "
                           "past it)", ge=2)


@dataclass(frozen=True)
class LPParams:
    max_segment: int = param(12, "longest segment (consecutive layers)", ge=1)
    max_front: int = param(64, "Pareto points kept per prefix (exact while no front grows "
                           "past it)", ge=2)


@method("tile_groups", "ls", "baseline",
        "best layer-sequential scheme: DP over segments, each a T cut on all tiles",
        source="seed 002 (LS in the RA-tree notation); Tangram-style DP",
        space="LS segments of the network order", params=LSParams)
def ls(instance: Instance, options: SolveOptions, params: LSParams) -> MethodOutput:
    """Segments of at most ``max_segment`` consecutive layers, each T(sb)[…] with sb a
    divisor of the batch. Lengthening a segment never frees a tile's buffer, so the
    scan stops at the first length where no sb fits."""
    return _dp_method(instance, "ls", params.max_segment, params.max_front, options.budget)


@method("tile_groups", "lp", "baseline",
        "best layer-pipelined scheme: DP over segments, each an S cut (NPT allocation)",
        source="seed 002 (LP in the RA-tree notation); Tangram-style DP",
        space="LP segments of the network order, NPT tile allocation", params=LPParams)
def lp(instance: Instance, options: SolveOptions, params: LPParams) -> MethodOutput:
    """Segments of at most ``max_segment`` consecutive layers, each S(sb)[…] pipelining
    its layers over tile groups sized by the optimal NPT allocation."""
    return _dp_method(instance, "lp", params.max_segment, params.max_front, options.budget)


def right_nested(items: Sequence[Node], sb: int = 1) -> Node:
    """``T(sb)[ x1 T(1)[ x2 T(1)[ … xn ] ] ]``: at every cut the first item is followed
    by the cut over the rest, so each map between two items passes at their lowest
    common ancestor from one child to the next — over the NoC (waiting on the
    consumer's tiles unless the two are neighbours), never through DRAM."""
    node = items[-1]
    for x in reversed(items[1:-1]):
        node = Node(TCUT, -1, (x, node), 1, None)
    return Node(TCUT, -1, (items[0], node), sb, None)


def nested_segments(instance: Instance) -> Callable[[int, int], list[Node]]:
    """The segments :func:`nested` chooses from for layers i..j−1 of the network order:
    the leaf or ``T(sb)[leaf]`` for one layer; for more, the right-nested chain of the
    layers each wrapped at the smallest sub-batch count it fits with alone, and of the
    bare layers under every sub-batch count sb > 1."""
    wraps = wrapped_layers(instance)
    sbs = divisors(instance.batch)
    layers = range(len(instance.workload))

    def options_of(i: int, j: int) -> list[Node]:
        if j - i == 1:
            return [segment_node(layers[i:j], sb, "ls") for sb in sbs]
        bare = [leaf(x) for x in layers[i:j]]
        return [right_nested(wraps[i:j])] + [right_nested(bare, sb) for sb in sbs if sb > 1]

    return options_of


@dataclass(frozen=True)
class NestedParams:
    max_segment: int = param(30, "longest segment (consecutive layers)", ge=1)
    max_front: int = param(64, "Pareto points kept per prefix (exact while no front grows "
                           "past it)", ge=2)


@method("tile_groups", "nested", "baseline",
        "best right-nested scheme: DP over segments, each a right-nested chain of T cuts "
        "(the maps inside a segment over the NoC), layers wrapped at the largest batch "
        "that fits or the segment under one sub-batch count",
        source="ours (issue 30's right-nested segment DP); Tangram-style DP",
        space="right-nested segments of the network order", params=NestedParams)
def nested(instance: Instance, options: SolveOptions, params: NestedParams) -> MethodOutput:
    """Segments of at most ``max_segment`` consecutive layers of the network order. A
    segment of one layer is the leaf or ``T(sb)[leaf]``; a longer one is the
    right-nested chain of its layers (:func:`right_nested`), either each layer wrapped
    at the smallest sub-batch count it fits with alone (:func:`wrapped_layers`, one run
    per segment run where it fits) or all of them bare under one sub-batch count sb > 1
    (every layer pinned). Where LS segments send every skip connection through DRAM, a
    chain keeps it on chip at the cost of its consumer's buffer for the whole segment;
    the DP finds where that pays."""
    return _dp_method(instance, "nested", params.max_segment, params.max_front,
                      options.budget)


def _has_tree(instance: Instance, params: Any, warm: bool = False) -> str | None:
    if instance.given is None:
        return "the instance has no given tree (pass a .tree file: network: NAME, tree: …)"
    return None


@method("tile_groups", "given", "baseline",
        "evaluate the tree given with the instance (a .tree file)", source="chipsched",
        applies=_has_tree)
def given(instance: Instance, options: SolveOptions) -> MethodOutput:
    """The tree of a ``.tree`` instance file, evaluated as is (its objective is the
    analyzer's incremental, segment-cached value)."""
    v = instance.analyzer.objective(instance.given)
    return MethodOutput(Status.FEASIBLE, Solution.of(instance, instance.given), v)


@dataclass(frozen=True)
class AllocateParams:
    patience: int = param(2000, "draws of a move in a row without a gain before the polish "
                          "stops", ge=1)
    descents: int = param(0, "rounds of a structural descent (the SA's operators at zero "
                          "temperature, β × layers rounds) each followed by another "
                          "polish; they end early when a round gains nothing; 0 "
                          "(default): the tree's structure is kept", ge=0)
    beta: float = param(100, "rounds per layer of each descent", gt=0)


def _has_start_tree(instance: Instance, params: Any, warm: bool = False) -> str | None:
    if warm or instance.given is not None:
        return None
    return "needs a tree to polish: --warm-start (a method or a result file) or a .tree " \
           "instance file"


@method("tile_groups", "allocate", "heuristic",
        "allocation polish of a given tree: the tile counts of its S cuts by local "
        "search, its structure kept (with descents > 0 alternated with zero-temperature "
        "SA descents)", source="chipsched", randomized=True,
        space="the given tree's order, cuts and sub-batches; every S-cut allocation "
        "(descents > 0: trees the SA's operators reach downhill)",
        params=AllocateParams, applies=_has_start_tree, warm_start=True)
def allocate(instance: Instance, options: SolveOptions, params: AllocateParams
             ) -> MethodOutput:
    """:func:`polish_tree` of the warm start's tree (else the ``.tree`` file's): the
    allocation polish, and with ``descents`` > 0 rounds of a zero-temperature descent
    and another polish, e.g. ``chipsched solve tile_groups -i lib:ID -m allocate
    --warm-start sa -p descents=3``."""
    tree = options.warm_solution.tree if options.warm is not None else instance.given
    start = (tree, instance.analyzer.objective(tree))
    rng = random.Random(int(np.random.SeedSequence(options.seed).generate_state(1)[0]))
    n = int(round(params.beta * len(instance.workload)))
    tree, v, st = polish_tree(instance, start, rng, patience=params.patience,
                              descents=params.descents, iterations=n,
                              budget=options.budget, progress=options.progress)
    return _stopped(MethodOutput(Status.FEASIBLE, Solution.of(instance, tree), v, stats=st),
                    st["stopped"], f"{st['moves']:,} moves, {st['gains']} gains")


def warm_up_kernels() -> None:
    """Compile the analyzer's segment kernel, which every method here evaluates trees
    with (``chipsched.jit``)."""
    segment_kernels()
