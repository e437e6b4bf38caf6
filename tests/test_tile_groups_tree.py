"""tile_groups trees: the text form round trip, structural checks, the tree space rules."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from chipsched.errors import InputError
from chipsched.instances.networks import get_network
from chipsched.problems.tile_groups import (
    LEAF,
    SCUT,
    TCUT,
    Node,
    check_structure,
    cut,
    leaf,
    leaf_paths,
    normalize,
    parse_tree,
    replace_at,
    to_text,
)
from chipsched.problems.tile_groups.tree import cut_at, cut_nodes, cut_paths, leaf_starts, n_leaves
from chipsched.workload import Layer, OpKind, Workload

TINY = get_network("tiny")  # conv1 conv2 conv3a conv3b add3 pool fc


def _chain(n: int, names: list[str] | None = None) -> Workload:
    names = names or [f"l{i}" for i in range(n)]
    layers = tuple(Layer(nm, OpKind.CONV, K=8, C=8, H=4, W=4, R=3, S=3, in_elems=128,
                         weight_elems=576) for nm in names)
    return Workload("chain", layers, tuple((i, i + 1, 128) for i in range(n - 1)))


@st.composite
def trees(draw, n: int, batch: int) -> Node:
    """Random valid trees over layers 0..n-1 in order (cuts, unary T cuts, sub-batches)."""

    def build(lo: int, hi: int, b: int, root: bool) -> Node:
        k = hi - lo
        if k == 1:
            ds = [d for d in range(2, b + 1) if b % d == 0]
            if ds and draw(st.booleans()):
                return cut(TCUT, [leaf(lo)], draw(st.sampled_from(ds)))
            return leaf(lo)
        parts = draw(st.integers(2, k))
        cuts_ = sorted(draw(st.lists(st.integers(lo + 1, hi - 1), min_size=parts - 1,
                                     max_size=parts - 1, unique=True)))
        bounds = [lo, *cuts_, hi]
        sb = draw(st.sampled_from([d for d in range(1, b + 1) if b % d == 0]))
        kids = [build(bounds[i], bounds[i + 1], b // sb, False) for i in range(len(bounds) - 1)]
        kind = draw(st.sampled_from([SCUT, TCUT]))
        alloc = None
        if kind == SCUT and draw(st.booleans()):
            alloc = tuple(draw(st.integers(1, 3)) for _ in kids)
        return cut(kind, kids, sb, alloc)

    return build(0, n, batch, True)


@settings(max_examples=80)
@given(st.data())
def test_text_form_round_trip(data):
    n = data.draw(st.integers(1, 7))
    w = _chain(n)
    t = data.draw(trees(n, 4))
    text = to_text(t, [ly.name for ly in w.layers])
    back = parse_tree(text, w)
    assert back == t and hash(back) == hash(t)
    assert to_text(back, [ly.name for ly in w.layers]) == text
    check_structure(t, w, 4)  # generated trees are valid
    assert [lay for _, lay in leaf_paths(t)] == list(range(n))


def test_text_form_example_and_quoting():
    t = parse_tree("T(4)[ S(2)[ conv1 conv2 ] T(2)[conv3a conv3b] add3 pool fc ]", TINY)
    assert t.kind == TCUT and t.sb == 4 and len(t.children) == 5
    assert t.children[0] == cut(SCUT, [leaf(0), leaf(1)], 2)
    assert to_text(t, [ly.name for ly in TINY.layers]) == \
        "T(4)[ S(2)[ conv1 conv2 ] T(2)[ conv3a conv3b ] add3 pool fc ]"
    w = _chain(2, ["a b", 'q"x'])
    t = cut(SCUT, [leaf(0), leaf(1)], 1, (1, 2))
    text = to_text(t, [ly.name for ly in w.layers])
    assert text == 'S(1){1,2}[ "a b" "q\\"x" ]'
    assert parse_tree(text, w) == t


def test_normalize_and_replace_at():
    a = leaf(3)
    assert normalize(cut(TCUT, [a], 1)) == a
    assert normalize(cut(SCUT, [a], 4)) == cut(TCUT, [a], 4)
    t = cut(TCUT, [leaf(0), cut(SCUT, [leaf(1), leaf(2)], 2)], 1)
    t2 = replace_at(t, (1, 0), leaf(5))
    assert to_text(t2) == "T(1)[ #0 S(2)[ #5 #2 ] ]" and to_text(t) == "T(1)[ #0 S(2)[ #1 #2 ] ]"


@pytest.mark.parametrize("text,field,problem", [
    ("T(1)[ conv1 conv2 conv3a conv3b add3 pool ]", "tree leaf 'fc'", "is missing"),
    ("T(1)[ conv1 conv2 conv2 conv3a conv3b add3 pool fc ]", "tree leaf 'conv2'",
     "appears twice"),
    ("T(1)[ conv2 conv1 conv3a conv3b add3 pool fc ]", "tree leaf 'conv2'",
     "comes before its producer 'conv1'"),
    ("T(3)[ conv1 conv2 conv3a conv3b add3 pool fc ]", "tree node root",
     "sub-batch count 3 does not divide its batch 4"),
    ("T(2)[ S(4)[ conv1 conv2 ] conv3a conv3b add3 pool fc ]", "tree node root/0",
     "sub-batch count 4 does not divide its batch 2"),
    ("T(1)[ S(2)[ conv1 ] conv2 conv3a conv3b add3 pool fc ]", "tree node root/0",
     "an S cut needs two or more children"),
    ("T(1)[ T(1)[ conv1 ] conv2 conv3a conv3b add3 pool fc ]", "tree node root/0",
     "T(1) around one leaf does nothing"),
    ("T(1)[ T(2)[ S(1)[ conv1 conv2 ] ] conv3a conv3b add3 pool fc ]", "tree node root/0",
     "a cut with one child must wrap a leaf"),
    ("T(1)[ S(1){1,2,3}[ conv1 conv2 ] conv3a conv3b add3 pool fc ]", "tree node root/0",
     "allocation has 3 entries for 2 children"),
    ("T(1)[ T(1){1,2}[ conv1 conv2 ] conv3a conv3b add3 pool fc ]", "tree node root/0",
     "only S cuts take a tile allocation"),
])
def test_structural_errors_name_the_node_or_layer(text, field, problem):
    with pytest.raises(InputError) as exc:
        check_structure(parse_tree(text, TINY), TINY, 4)
    msg = str(exc.value)
    assert msg.startswith(field) and problem in msg and "\n" not in msg


@pytest.mark.parametrize("text,problem", [
    ("T(1)[ conv1 conv9 ]", "tree leaf 'conv9': no layer of that name"),
    ("T(1)[ conv1 conv2", "expected ']'"),
    ("T(x)[ conv1 ]", "expected the sub-batch count"),
    ("T(1)[ conv1 ] fc", "text after the end of the tree"),
    ("", "tree: is empty"),
    ("T(1)[ ]", "T cut without children"),
])
def test_parse_errors_are_one_line(text, problem):
    with pytest.raises(InputError) as exc:
        parse_tree(text, TINY)
    assert problem in str(exc.value) and "\n" not in str(exc.value)


def test_root_may_hold_a_single_cut():
    t = parse_tree("T(1)[ T(4)[ conv1 conv2 conv3a conv3b add3 pool fc ] ]", TINY)
    check_structure(t, TINY, 4)
    t = parse_tree("T(2)[ conv1 ]", _chain(1, ["conv1"]))
    check_structure(t, _chain(1, ["conv1"]), 4)


def _cuts_by_walk(t: Node, batch: int) -> list[tuple[tuple[int, ...], Node, int]]:
    """Every cut, pre-order, with its path and batch, by a plain walk (the reference)."""
    out = []

    def rec(n: Node, path: tuple[int, ...], b: int) -> None:
        if n.kind == LEAF:
            return
        out.append((path, n, b))
        for i, c in enumerate(n.children):
            rec(c, path + (i,), b // n.sb)

    rec(t, (), batch)
    return out


@settings(max_examples=120)
@given(st.data())
def test_cut_index_and_leaf_counts_match_a_walk(data):
    # the SA draws the k-th cut by descending the per-node offsets (cut_at) instead of
    # listing every path: both must give the walk's list, also on a tree rebuilt from
    # children whose offsets were kept from an earlier tree
    n = data.draw(st.integers(1, 9))
    t = data.draw(trees(n, 8))
    checked = [t]
    if t.kind != LEAF:
        j = data.draw(st.integers(0, len(t.children) - 1))
        checked.append(replace_at(t, (j,), t.children[j]))  # a new root, old children
    for tree in checked:
        want = _cuts_by_walk(tree, 8)
        assert list(cut_nodes(tree)) == [m for _, m, _ in want]
        assert [cut_at(tree, k, 8) for k in range(len(want))] == want
        assert [(p, m, 8 // d) for p, m, d in cut_paths(tree)] == want
        assert n_leaves(tree) == len(tree.layers)
        if tree.kind != LEAF:
            starts = leaf_starts(tree)
            assert [tree.layers[s] for s in starts] == [c.layers[0] for c in tree.children]
