"""The compiled segment kernel (``segment_kernel.py``) against the analyzer's Python steps
(``Analyzer._segment``): the same costs (to rounding: the Python steps sum some vectors
through BLAS) and the same rejections with the same messages — on every tree of random
small networks, on chips with small buffers (spills, pinned weights, forced
sub-batching), with explicit S-cut allocations, on the long form of the pipeline
simulation, and on the segments an SA visits on a real network."""

from __future__ import annotations

import pickle
from dataclasses import replace
from itertools import islice

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipsched.formulations import tile_groups as F
from chipsched.heuristics import tile_groups as H
from chipsched.instances.chips import get_chip
from chipsched.instances.tile_groups import load_instance
from chipsched.problems.tile_groups import Infeasible, Instance, parse_tree
from chipsched.problems.tile_groups.analyzer import SegmentCost
from chipsched.problems.tile_groups.tree import SCUT, TCUT, Node, cut, iter_nodes, leaf
from chipsched.solvers import SolveOptions
from chipsched.workload import Layer, OpKind, Workload
from tests.test_tile_groups_full_bound import stressed_instances
from tests.test_tile_groups_methods import call, tiny_instances

REL = 1e-12


def _python(an, seg: Node, batch: int) -> SegmentCost | str:
    try:
        return an._segment(seg, batch, (), None)
    except Infeasible as exc:
        return str(exc)


def _compiled(an, seg: Node, batch: int) -> SegmentCost | str:
    try:
        return an._compiled_segment(seg, batch, ())
    except Infeasible as exc:
        return str(exc)


def _agree(an, seg: Node, batch: int) -> bool:
    """Assert that kernel and Python steps agree on ``seg``; True if it is feasible."""
    want, got = _python(an, seg, batch), _compiled(an, seg, batch)
    if isinstance(want, str) or isinstance(got, str):
        assert got == want, (seg, batch)
        return False
    for f in SegmentCost._fields:
        a, b = getattr(want, f), getattr(got, f)
        assert abs(a - b) <= REL * max(abs(a), abs(b)), (f, a, b, seg, batch)
    return True


def _segments(an, tree: Node) -> list[tuple[Node, int]]:
    try:
        segs, b, _ = an.segments_of(tree)
    except Infeasible:
        return []
    return [(s, b) for s in segs]


def test_the_kernel_is_on_by_default():
    inst = Instance(Workload("one", (Layer("fc", OpKind.FC, K=8, C=8, in_elems=8,
                                               weight_elems=64),), ()),
                    get_chip("tiled-1x2"), batch=2)
    assert inst.analyzer.compiled


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.one_of(tiny_instances(max_layers=3), stressed_instances()))
def test_every_tree_of_small_networks_costs_the_same(inst):
    an = inst.analyzer
    trees, _ = F.full_space(inst)
    for i, tree in enumerate(trees):
        if i >= 400:
            break
        for seg, b in _segments(an, tree):
            _agree(an, seg, b)


def _with_allocs(node: Node, draw) -> Node:
    """``node`` with random explicit allocations (some not summing to the tiles)."""
    kids = tuple(_with_allocs(c, draw) for c in node.children)
    if node.kind == SCUT and draw(st.booleans()):
        alloc = tuple(draw(st.integers(0, 4)) for _ in kids)
        return Node(SCUT, -1, kids, node.sb, alloc)
    return Node(node.kind, node.layer, kids, node.sb, node.alloc)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(stressed_instances(), st.data())
def test_explicit_allocations_cost_the_same(inst, data):
    an = inst.analyzer
    trees, _ = F.full_space(inst)
    s_trees = [t for t in islice(trees, 300)
               if any(n.kind == SCUT for _, n in iter_nodes(t))]
    for tree in s_trees[:25]:
        for seg, b in _segments(an, _with_allocs(tree, data.draw)):
            _agree(an, seg, b)


def _chain(n: int) -> Workload:
    layers = tuple(Layer(f"c{i}", OpKind.CONV, K=16, C=16, H=8, W=8, R=3, S=3,
                         in_elems=16 * 64, weight_elems=9 * 256) for i in range(n))
    return Workload("chain", layers, tuple((i, i + 1, 16 * 64) for i in range(n - 1)))


@pytest.mark.parametrize("sb", [4, 64])
def test_long_pipelines_use_both_forms_of_the_simulation(sb):
    # 12 children × 64 sub-batches > 512: the unrolled form of pipeline_finish
    inst = Instance(_chain(12), get_chip("edge-4x4"), batch=64)
    an = inst.analyzer
    chain = cut(SCUT, [leaf(i) for i in range(12)], sb)
    branches = cut(SCUT, [cut(TCUT, [leaf(0), leaf(1)], 1),
                          *[leaf(i) for i in range(2, 12)]], sb)
    assert _agree(an, chain, 64) and _agree(an, branches, 64)


def test_each_rejection_has_the_python_steps_message():
    inst = Instance(_chain(4), get_chip("tiled-1x3"), batch=4)
    an = inst.analyzer
    cases = {
        "sub-batch": cut(TCUT, [leaf(0), leaf(1)], 3),
        "children": cut(TCUT, [leaf(0), cut(SCUT, [leaf(1), leaf(2), leaf(3), leaf(0)], 1)], 1),
        "allocation": Node(SCUT, -1, (leaf(0), leaf(1)), 1, (1, 1)),
    }
    for name, seg in cases.items():
        got = _compiled(an, seg, 4)
        assert isinstance(got, str) and got == _python(an, seg, 4), name
    # on 3,000 B buffers: a tile over its buffer, a spilling layer that runs four times
    # per segment run, a spilling layer whose activations exceed half the buffer
    small = get_chip("tiled-1x3")
    small = replace(small, unit=replace(small.unit, buffer_bytes=3000))
    an = Instance(_chain(3), small, batch=4).analyzer
    w = an.inst.workload
    for text, words in (("T(4)[ c0 c1 c2 ]", "tile 0 (row 0, col 0) needs"),
                        ("S(4)[ c0 c1 c2 ]", "runs 4 times per segment run"),
                        ("T(1)[ c0 c1 c2 ]", "of activations per tile")):
        got = _compiled(an, parse_tree(text, w), 4)
        assert isinstance(got, str) and words in got, (text, got)
        assert got == _python(an, parse_tree(text, w), 4)


def test_a_cached_rejection_reads_as_the_python_steps_message():
    # segment() caches a segment the kernel rejects without building its message (the
    # SA drops thousands unread); whoever reads it, first or from the cache, pickled or
    # not, reads the Python steps' words
    small = get_chip("tiled-1x3")
    small = replace(small, unit=replace(small.unit, buffer_bytes=3000))
    an = Instance(_chain(3), small, batch=4).analyzer
    w = an.inst.workload
    for text in ("T(4)[ c0 c1 c2 ]", "S(4)[ c0 c1 c2 ]", "T(1)[ c0 c1 c2 ]",
                 "S(4){1,1,2}[ c0 c1 c2 ]", "T(3)[ c0 c1 c2 ]"):
        seg = parse_tree(text, w)
        want = _python(an, seg, 4)
        assert isinstance(want, str), text
        with pytest.raises(Infeasible) as first:
            an.segment(seg, 4)
        assert an._seg[(seg, 4)]._fields is None, text  # not built yet
        assert str(first.value) == want, text
        with pytest.raises(Infeasible) as again:
            an.segment(seg, 4)
        e = again.value
        assert str(e) == want and e.args == (want,), text
        assert want == f"{e.field}: {e.problem}" + (f"; {e.fix}" if e.fix else ""), text
        assert str(pickle.loads(pickle.dumps(e))) == want, text


def test_the_segments_an_sa_visits_on_googlenet_cost_the_same():
    inst = load_instance("googlenet", get_chip("edge-4x4"), batch=8)
    an = inst.analyzer
    call(H.sa, inst, SolveOptions(seed=3), beta=2, tries=2)
    keys = list(an._seg)
    assert len(keys) > 200
    feasible = sum(_agree(an, seg, b) for seg, b in keys[:600])
    assert 0 < feasible < min(600, len(keys))  # both kinds were compared


def test_the_python_steps_give_the_same_sa_objective_on_a_small_network():
    # with the kernel off, the analyzer reports the same objective for the SA's tree
    inst = Instance(_chain(5), get_chip("tiled-2x2"), batch=4)
    sa = call(H.sa, inst, SolveOptions(seed=1), beta=10, tries=1)
    ref = Instance(_chain(5), get_chip("tiled-2x2"), batch=4)
    ref.analyzer.compiled = False
    want = ref.analyzer.objective(sa.solution.tree)
    assert abs(sa.objective - want) <= REL * want
