"""Resource allocation trees (SET, seed 002): nodes, the text form, structural checks.

A tree has three kinds of nodes (seed 002, ``docs/sources.md``):

* a **leaf** ``L`` — one layer; it processes its whole batch at once (``sb = 1``);
* an **S cut** — its children get disjoint tile groups and run in parallel,
  pipelined by sub-batch;
* a **T cut** — its children share the cut's tiles; for each sub-batch they run
  left to right, then the next sub-batch.

Every cut splits its batch ``b`` into ``sb`` sub-batches (``b % sb == 0``); each
child processes sub-batches of ``b / sb`` samples. The leaves, left to right, must be
a topological order of the network.

The **tree space** we use (the SA's, the brute-force oracle's and the text form's) is
the document's with two precise rules where it is silent **[ours]**: a cut has at
least two children, except a *unary* T cut over a single leaf with ``sb ≥ 2``
(``T(4)[conv1]`` runs one layer in four sub-batches — the LS/LP baselines and the
segmented space need it; ``T(1)[x]`` is written ``x``), and the root T cut, which may
hold a single cut (``T(1)[ T(4)[ a b ] ]`` is one segment; ``T(4)[ a b ]`` at the root
would make ``a`` and ``b`` two segments, each reloading its weights per root run).

Text form (prints and parses back)::

    T(1)[ S(2)[ conv1 conv2 ] T(4)[ fc ] ]
    S(2){3,1}[ conv1 conv2 ]          # an explicit tile allocation (3 and 1 tiles)

The number in parentheses is the sub-batch count ``sb``; ``{a,b,…}`` optionally fixes
the tile counts of an S cut's children (otherwise the analyzer allocates by NPT).
Layer names with characters outside ``[A-Za-z0-9_.:/+#@-]`` are double-quoted.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain

from chipsched.errors import InputError, UnknownNameError
from chipsched.workload import Workload

LEAF, SCUT, TCUT = "L", "S", "T"
CUT_KINDS = (SCUT, TCUT)


@dataclass(frozen=True, eq=False)
class Node:
    """One node of a resource allocation tree (immutable, hashable, cheap to compare).

    ``layer`` is the layer index for a leaf (``-1`` for cuts); ``sb`` the sub-batch
    count of a cut (1 for leaves); ``alloc`` an optional explicit tile count per child
    of an S cut. The hash and ``layers`` are computed on first use and kept, so trees can
    key caches, and a search that rebuilds the root on every move (hundreds of children
    on PNASNet-5 Large) does not pay for them on trees it never looks up.
    """

    kind: str
    layer: int = -1
    children: tuple[Node, ...] = ()
    sb: int = 1
    alloc: tuple[int, ...] | None = None
    _hash: int | None = field(init=False, repr=False, default=None)
    _layers: tuple[int, ...] | None = field(init=False, repr=False, default=None)
    _n_leaves: int | None = field(init=False, repr=False, default=None)
    _cut_nodes: tuple[Node, ...] | None = field(init=False, repr=False, default=None)
    _cut_starts: tuple[int, ...] | None = field(init=False, repr=False, default=None)
    _leaf_starts: tuple[int, ...] | None = field(init=False, repr=False, default=None)
    _flat: tuple[int, ...] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        if type(self.children) is not tuple:
            object.__setattr__(self, "children", tuple(self.children))
        if self.alloc is not None:
            object.__setattr__(self, "alloc", tuple(int(a) for a in self.alloc))

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.kind, self.layer, self.sb, self.alloc,
                      tuple([c._hash if c._hash is not None else hash(c)
                             for c in self.children])))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict[str, object]:
        # string hashes differ between processes: a pickled tree recomputes its hash
        # (and its other caches, which only make the pickle larger)
        return {**self.__dict__, "_hash": None, "_layers": None, "_n_leaves": None,
                "_cut_nodes": None, "_cut_starts": None, "_leaf_starts": None,
                "_flat": None}

    @property
    def layers(self) -> tuple[int, ...]:
        """The layers of the leaves below, left to right."""
        v = self._layers
        if v is None:
            if self.kind == LEAF:
                v = (self.layer,)
            else:
                v = tuple(chain.from_iterable([c.layers for c in self.children]))
            object.__setattr__(self, "_layers", v)
        return v

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Node):
            return False
        h, g = self._hash, other._hash
        if h is not None and g is not None and h != g:
            return False
        # children compare by identity first (in C), so a tree that differs from
        # another in one root child costs one child's comparison, not a root hash
        return (self.kind == other.kind and self.layer == other.layer and self.sb == other.sb
                and self.alloc == other.alloc and self.children == other.children)

    @property
    def is_leaf(self) -> bool:
        return self.kind == LEAF

    def __repr__(self) -> str:
        return f"Node({to_text(self)})"


def leaf(layer: int) -> Node:
    """A leaf for layer index ``layer``."""
    return Node(LEAF, int(layer))


def cut(kind: str, children: Sequence[Node], sb: int = 1,
        alloc: Sequence[int] | None = None) -> Node:
    """An S or T cut over ``children`` with ``sb`` sub-batches."""
    if kind not in CUT_KINDS:
        raise InputError("tree", f"unknown cut kind {kind!r}", "use 'S' or 'T'")
    return Node(kind, -1, tuple(children), int(sb), None if alloc is None else tuple(alloc))


def assemble(segments: Sequence[Node]) -> Node:
    """The tree of a segmentation: a root T(1) cut over the segments (one leaf: itself)."""
    if len(segments) == 1 and segments[0].kind == LEAF:
        return segments[0]
    return cut(TCUT, segments, 1)


def normalize(node: Node) -> Node:
    """Canonical form of a one-child cut over a leaf: ``T(1)[x]`` → ``x``, ``S(k)[x]`` →
    ``T(k)[x]`` (an S cut with one child is a T cut). Other nodes are returned as is."""
    if node.kind in CUT_KINDS and len(node.children) == 1 and node.children[0].is_leaf:
        if node.sb == 1:
            return node.children[0]
        if node.kind == SCUT or node.alloc is not None:
            return Node(TCUT, -1, node.children, node.sb, None)
    return node


# ---------------------------------------------------------------------------------------
# traversal


def iter_nodes(node: Node, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Node]]:
    """(path, node) pairs in pre-order; a path is the tuple of child indices from the root."""
    yield path, node
    for i, c in enumerate(node.children):
        yield from iter_nodes(c, path + (i,))


def leaf_paths(node: Node) -> list[tuple[tuple[int, ...], int]]:
    """(path, layer) of every leaf, left to right (in-order)."""
    out: list[tuple[tuple[int, ...], int]] = []

    def rec(n: Node, path: tuple[int, ...]) -> None:
        if n.kind == LEAF:
            out.append((path, n.layer))
        else:
            for i, c in enumerate(n.children):
                rec(c, path + (i,))

    rec(node, ())
    return out


def n_leaves(node: Node) -> int:
    """The number of leaves below ``node`` (kept on the node; ``len(node.layers)``
    without building the layer tuple of a root the SA has just rebuilt)."""
    v = node._n_leaves
    if v is None:
        if node._layers is not None:
            v = len(node._layers)
        elif node.kind == LEAF:
            v = 1
        else:
            v = sum([c._n_leaves or n_leaves(c) for c in node.children])
        object.__setattr__(node, "_n_leaves", v)
    return v


def leaf_starts(node: Node) -> tuple[int, ...]:
    """In-order index of the first leaf below each child of the cut ``node`` (kept on
    the node)."""
    v = node._leaf_starts
    if v is None:
        v = (0, *accumulate([c._n_leaves or n_leaves(c) for c in node.children[:-1]]))
        object.__setattr__(node, "_leaf_starts", v)
    return v


def cut_nodes(node: Node) -> tuple[Node, ...]:
    """Every cut at and below ``node``, pre-order (kept on the node, with the index at
    which each child's cuts start, for :func:`cut_at`). Copying the children's tuples
    is all a rebuilt root costs; the paths are found only for the cut a move draws."""
    v = node._cut_nodes
    if v is None:
        if node.kind == LEAF:
            v = ()
        else:
            # the children's fields read inline: a rebuilt root has hundreds of children
            blocks = [c._cut_nodes if c._cut_nodes is not None else cut_nodes(c)
                      for c in node.children]
            v = (node, *chain.from_iterable(blocks))
            object.__setattr__(node, "_cut_starts",
                               tuple(accumulate(map(len, blocks[:-1]), initial=1)))
        object.__setattr__(node, "_cut_nodes", v)
    return v


def cut_at(node: Node, k: int, batch: int) -> tuple[tuple[int, ...], Node, int]:
    """(path, cut, its batch) of the ``k``-th cut of :func:`cut_nodes` when ``node``
    gets ``batch`` samples: down from ``node``, the child whose block of cuts holds
    ``k``, dividing the batch by each cut's sub-batch count on the way."""
    path: list[int] = []
    while k:
        cut_nodes(node)
        starts = node._cut_starts
        assert starts is not None
        j = bisect_right(starts, k) - 1
        k -= starts[j]
        batch //= node.sb
        path.append(j)
        node = node.children[j]
    return tuple(path), node, batch


def cut_paths(node: Node) -> list[tuple[tuple[int, ...], Node, int]]:
    """(path, cut, divisor) of every cut, pre-order: a cut at ``path`` gets the batch
    ``b // divisor`` when ``node`` gets ``b`` (divisor: the product of the sub-batch
    counts of the cuts above it). A plain walk; the SA draws from :func:`cut_at`."""
    out: list[tuple[tuple[int, ...], Node, int]] = []

    def rec(n: Node, path: tuple[int, ...], d: int) -> None:
        if n.kind == LEAF:
            return
        out.append((path, n, d))
        for i, c in enumerate(n.children):
            rec(c, path + (i,), d * n.sb)

    rec(node, (), 1)
    return out


def get(node: Node, path: Sequence[int]) -> Node:
    """The node at ``path``."""
    for i in path:
        node = node.children[i]
    return node


def replace_at(root: Node, path: Sequence[int], new: Node | Sequence[Node]) -> Node:
    """A copy of ``root`` with the node at ``path`` replaced by ``new`` (path copying).

    ``new`` may be a sequence of nodes, spliced in place of the one node (not at the
    root). Ancestors keep their kind, ``sb`` and ``alloc``.
    """
    if not path:
        if not isinstance(new, Node):
            raise ValueError("cannot splice several nodes in place of the root")
        return new
    parent = get(root, path[:-1])
    i = path[-1]
    repl = (new,) if isinstance(new, Node) else tuple(new)
    kids = parent.children[:i] + repl + parent.children[i + 1:]
    alloc = parent.alloc
    if alloc is not None and len(repl) != 1:
        alloc = None
    return replace_at(root, path[:-1], Node(parent.kind, -1, kids, parent.sb, alloc))


def least_tiles(node: Node) -> int:
    """The fewest tiles the explicit allocations of ``node`` can be scaled to: S-cut
    children get disjoint tiles (at least one each), T-cut children share the cut's
    tiles. Under NPT allocations it is necessary, not sufficient (NPT gives a child at
    least one tile, not its least; the analyzer decides)."""
    if node.kind == LEAF:
        return 1
    if node.kind == TCUT:
        return max(least_tiles(c) for c in node.children)
    return sum(least_tiles(c) for c in node.children)


def _has_explicit(node: Node) -> bool:
    return node.alloc is not None or any(_has_explicit(c) for c in node.children)


def rescaled_counts(alloc: Sequence[int], tiles: int, floors: Sequence[int]
                    ) -> list[int] | None:
    """``alloc`` scaled to ``tiles`` in proportion by largest remainders, every count at
    least its floor; ``None`` when the floors need more than ``tiles``."""
    if sum(floors) > tiles:
        return None
    old = sum(alloc)
    raw = [a * tiles / old for a in alloc]
    new = [max(f, int(r)) for f, r in zip(floors, raw, strict=True)]
    while sum(new) > tiles:  # floors pushed the sum over: take from the most over
        k = max((k for k in range(len(new)) if new[k] > floors[k]),
                key=lambda k: new[k] - raw[k])
        new[k] -= 1
    while sum(new) < tiles:
        k = max(range(len(new)), key=lambda k: raw[k] - new[k])
        new[k] += 1
    return new


def resized(node: Node, tiles: int) -> Node | None:
    """``node`` on ``tiles`` tiles: every explicit S-cut allocation below it rescaled in
    proportion (largest remainders, each child at least :func:`least_tiles`); ``None``
    when ``tiles < least_tiles(node)``, or when an S cut with NPT allocation has explicit
    ones below it (their groups' sizes are NPT's to decide; write the NPT counts out
    first)."""
    if node.kind == LEAF:
        return node
    if node.kind == SCUT and node.alloc is None:
        if any(_has_explicit(c) for c in node.children) or len(node.children) > tiles:
            return None
        return node
    if node.kind == SCUT and node.alloc is not None:
        new = rescaled_counts(node.alloc, tiles, [least_tiles(c) for c in node.children])
        if new is None:
            return None
        kids = [resized(c, a) for c, a in zip(node.children, new, strict=True)]
        alloc: tuple[int, ...] | None = tuple(new)
    else:
        if least_tiles(node) > tiles:
            return None
        kids = [resized(c, tiles) for c in node.children]
        alloc = None
    if any(k is None for k in kids):
        return None
    return Node(node.kind, -1, tuple(kids), node.sb, alloc)  # type: ignore[arg-type]


def path_str(path: Sequence[int]) -> str:
    """``root``, ``root/1``, ``root/1/0`` …"""
    return "/".join(["root", *(str(i) for i in path)])


# ---------------------------------------------------------------------------------------
# text form

_SAFE = re.compile(r"[A-Za-z0-9_.:/+#@\-]+")


def _name_text(name: str) -> str:
    if _SAFE.fullmatch(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _text_parts(node: Node, names: Sequence[str] | None) -> Iterator[str]:
    if node.kind == LEAF:
        yield _name_text(names[node.layer]) if names is not None else f"#{node.layer}"
        return
    yield f"{node.kind}({node.sb})"
    if node.alloc is not None:
        yield "{" + ",".join(str(a) for a in node.alloc) + "}"
    yield "[ "
    for i, c in enumerate(node.children):
        if i:
            yield " "
        yield from _text_parts(c, names)
    yield " ]"


def to_text(node: Node, names: Sequence[str] | None = None) -> str:
    """The compact text form, e.g. ``T(1)[ S(2)[ conv1 conv2 ] fc ]``.

    ``names`` maps layer indices to names (without it leaves print as ``#i``).
    """
    return "".join(_text_parts(node, names))


def short_text(node: Node, names: Sequence[str] | None = None, limit: int = 60) -> str:
    """The text form cut to ``limit`` characters (for one-line messages); it stops
    writing there, so a message about a 500-layer segment costs no more than one about
    a small one."""
    parts: list[str] = []
    n = 0
    for part in _text_parts(node, names):
        parts.append(part)
        n += len(part)
        if n > limit:
            break
    t = "".join(parts)
    return t if len(t) <= limit else t[: limit - 1] + "…"


class _Parser:
    def __init__(self, text: str, workload: Workload):
        self.s = text
        self.i = 0
        self.w = workload

    def error(self, problem: str, fix: str | None = None) -> InputError:
        return InputError(f"tree (character {self.i + 1})", problem, fix)

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def peek(self) -> str:
        self.ws()
        return self.s[self.i] if self.i < len(self.s) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            got = repr(self.s[self.i]) if self.i < len(self.s) else "the end"
            raise self.error(f"expected {ch!r}, found {got}",
                             "the form is T(sb)[ child child … ], S(sb){a,b,…}[ … ] or a layer "
                             "name")
        self.i += 1

    def integer(self, what: str) -> int:
        self.ws()
        m = re.compile(r"\d+").match(self.s, self.i)
        if not m:
            raise self.error(f"expected the {what} (a positive integer)")
        self.i = m.end()
        return int(m.group())

    def name(self) -> str:
        self.ws()
        if self.peek() == '"':
            self.i += 1
            out = []
            while self.i < len(self.s) and self.s[self.i] != '"':
                if self.s[self.i] == "\\" and self.i + 1 < len(self.s):
                    self.i += 1
                out.append(self.s[self.i])
                self.i += 1
            if self.i >= len(self.s):
                raise self.error("unterminated quoted layer name")
            self.i += 1
            return "".join(out)
        m = _SAFE.match(self.s, self.i)
        if not m:
            raise self.error(f"unexpected {self.s[self.i]!r}",
                             "quote layer names with special characters: \"name\"")
        self.i = m.end()
        return m.group()

    def node(self) -> Node:
        self.ws()
        if self.i >= len(self.s):
            raise self.error("unexpected end of the tree")
        ch = self.s[self.i]
        nxt = self.s[self.i + 1:].lstrip()[:1]
        if ch in CUT_KINDS and nxt == "(":
            self.i += 1
            self.expect("(")
            sb = self.integer("sub-batch count")
            self.expect(")")
            alloc = None
            if self.peek() == "{":
                self.i += 1
                alloc = [self.integer("tile count")]
                while self.peek() == ",":
                    self.i += 1
                    alloc.append(self.integer("tile count"))
                self.expect("}")
            self.expect("[")
            kids = []
            while self.peek() not in ("]", ""):
                kids.append(self.node())
            self.expect("]")
            if not kids:
                raise self.error(f"{ch} cut without children")
            return Node(ch, -1, tuple(kids), sb, None if alloc is None else tuple(alloc))
        nm = self.name()
        try:
            return leaf(self.w.index(nm))
        except UnknownNameError as exc:
            raise InputError(f"tree leaf {nm!r}", f"no layer of that name in network "
                             f"{self.w.name!r}", exc.fix) from None

    def parse(self) -> Node:
        n = self.node()
        if self.peek():
            raise self.error("text after the end of the tree",
                             "a tree has one root; wrap several nodes in T(1)[ … ]")
        return n


def parse_tree(text: str, workload: Workload) -> Node:
    """Parse the text form; layer names are resolved in ``workload``."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("tree", "is empty", "give a tree such as T(1)[ conv1 conv2 ]")
    try:
        return _Parser(text, workload).parse()
    except RecursionError:  # cuts nested thousands deep: no network has that many layers
        raise InputError("tree", "cuts nested too deeply",
                         "a tree nests at most as deep as the network has layers") from None


# ---------------------------------------------------------------------------------------
# structural checks (those that need no cost model)


def check_structure(tree: Node, workload: Workload, batch: int) -> None:
    """Raise :class:`InputError` (one line, naming the node or layer) unless ``tree`` is a
    valid tree for ``workload`` with total batch ``batch``.

    Checks: every layer exactly once; leaves in a topological order; cut shapes (two
    or more children, or a unary T cut over a leaf with ``sb ≥ 2``); ``b % sb == 0`` at
    every cut; explicit allocations of the right length and positive. Tile counts
    (S-cut children ≤ tiles, allocations summing to the group) need the allocation
    and are checked by the analyzer.
    """
    names = [ly.name for ly in workload.layers]
    seen: dict[int, int] = {}
    order = leaf_paths(tree)
    for _, lay in order:
        if not 0 <= lay < len(names):
            raise InputError("tree", f"leaf index {lay} out of range")
        if lay in seen:
            raise InputError(f"tree leaf {names[lay]!r}", "appears twice",
                             "every layer must be exactly one leaf")
        seen[lay] = len(seen)
    missing = [names[i] for i in range(len(names)) if i not in seen]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InputError(f"tree leaf {missing[0]!r}", f"is missing{more}",
                         "every layer of the network must be a leaf")
    for _, lay in order:
        for p in workload.preds[lay]:
            if seen[p] > seen[lay]:
                raise InputError(f"tree leaf {names[lay]!r}",
                                 f"comes before its producer {names[p]!r}",
                                 "leaves left to right must be a topological order")

    def rec(n: Node, b: int, path: tuple[int, ...]) -> None:
        if n.kind == LEAF:
            return
        where = f"tree node {path_str(path)} {short_text(n, names, 40)}"
        if n.kind not in CUT_KINDS:
            raise InputError(where, f"unknown node kind {n.kind!r}", "use S, T or a leaf")
        if n.sb < 1:
            raise InputError(where, f"sub-batch count {n.sb} must be >= 1")
        if len(n.children) == 1:
            if not n.children[0].is_leaf and not (not path and n.kind == TCUT):
                raise InputError(where, "a cut with one child must wrap a leaf (only the "
                                 "root T cut may hold a single cut)", "remove the extra cut")
            if n.kind == SCUT:
                raise InputError(where, "an S cut needs two or more children",
                                 f"write T({n.sb})[…] to sub-batch one layer")
            if n.sb == 1 and n.children[0].is_leaf:
                raise InputError(where, "T(1) around one leaf does nothing",
                                 "write the leaf alone")
        if b % n.sb:
            raise InputError(where, f"sub-batch count {n.sb} does not divide its batch {b}",
                             f"use a divisor of {b}")
        if n.alloc is not None:
            if n.kind != SCUT:
                raise InputError(where, "only S cuts take a tile allocation {…}")
            if len(n.alloc) != len(n.children):
                raise InputError(where, f"allocation has {len(n.alloc)} entries for "
                                 f"{len(n.children)} children", "give one tile count per child")
            if min(n.alloc) < 1:
                raise InputError(where, "every child needs at least one tile")
        for i, c in enumerate(n.children):
            rec(c, b // n.sb, path + (i,))

    rec(tree, batch, ())
