"""tile_groups allocation polish (``polish_allocations``, the SA's last step and the
``allocate`` method) and its alternation with zero-temperature descents
(``polish_tree``): rescaled allocations stay valid, written-out NPT allocations cost
what NPT costs, the polish never ends worse than its start, never beats the full-space
optimum, and reports what the analyzer says."""

from __future__ import annotations

import random

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

import chipsched
from chipsched.formulations import tile_groups as F
from chipsched.heuristics import tile_groups as H
from chipsched.instances.chips import get_chip
from chipsched.problems.tile_groups import (
    LEAF,
    SCUT,
    TCUT,
    Instance,
    Node,
    cut,
    leaf,
    least_tiles,
    resized,
)
from chipsched.solvers import SolveOptions
from tests.test_tile_groups_methods import call, tiny_instances
from tests.test_tile_groups_tree import trees


def _allocations_fit(node: Node, tiles: int) -> bool:
    """Every explicit S-cut allocation below ``node`` (on ``tiles`` tiles) splits its
    group into parts of at least the child's least tiles; an S cut with NPT allocation
    has none below it (NPT decides its children's shares)."""
    if node.kind == LEAF:
        return tiles >= 1
    if node.kind == SCUT and node.alloc is not None:
        return (sum(node.alloc) == tiles and len(node.alloc) == len(node.children)
                and all(a >= least_tiles(c) and _allocations_fit(c, a)
                        for c, a in zip(node.children, node.alloc, strict=True)))
    if node.kind == SCUT:
        return len(node.children) <= tiles and not any(_s_cuts_explicit(c)
                                                       for c in node.children)
    return tiles >= least_tiles(node) and all(_allocations_fit(c, tiles)
                                              for c in node.children)


def _s_cuts_explicit(node: Node) -> bool:
    return node.alloc is not None or any(_s_cuts_explicit(c) for c in node.children)


@settings(max_examples=80, derandomize=True)
@given(st.data())
def test_resized_trees_keep_every_allocation_valid(data):
    n = data.draw(st.integers(1, 7))
    tree = data.draw(trees(n, data.draw(st.sampled_from([1, 2, 4]))))
    least = least_tiles(tree)
    tiles = data.draw(st.integers(1, least + 12))
    new = resized(tree, tiles)
    if tiles < least:
        assert new is None
        return
    if new is None:  # only an NPT S cut over explicit allocations refuses
        assert any(nd.alloc is None and _s_cuts_explicit(nd) for nd in _s_cuts(tree))
        return
    assert _allocations_fit(new, tiles)
    assert _shape(new) == _shape(tree)  # only allocations change


def _shape(node: Node) -> tuple:
    return (node.kind, node.layer, node.sb, tuple(_shape(c) for c in node.children))


def test_resized_rescales_in_proportion_and_keeps_the_floors():
    inner = cut(SCUT, [leaf(1), leaf(2)], 1, (3, 1))
    tree = cut(SCUT, [leaf(0), inner], 1, (4, 4))
    assert least_tiles(tree) == 3
    assert resized(inner, 8).alloc == (6, 2)
    assert resized(inner, 2).alloc == (1, 1)
    assert resized(inner, 1) is None
    assert resized(tree, 16).alloc == (8, 8)
    assert resized(tree, 16).children[1].alloc == (6, 2)
    assert resized(tree, 3).alloc == (1, 2)  # the inner cut needs two tiles
    assert resized(tree, 8) == tree
    # under an NPT S cut the inner group's size is NPT's: no rescaling can be right
    npt = cut(SCUT, [leaf(0), inner, leaf(3)], 1)
    assert resized(npt, 16) is None


def test_resizing_a_tree_to_its_own_tiles_never_makes_one_the_analyzer_refuses():
    """A review case: NPT gives ``S[a S{9,1}[b c] d]`` on 16 tiles the shares (2, 10, 4);
    rescaling the inner cut as if it had all 16 made ``{14,2}``, which does not split its
    10 tiles."""
    inst = Instance(_two_branch(), get_chip("edge-4x4"), batch=2, objective="e2d")
    tree = cut(SCUT, [leaf(0), cut(SCUT, [leaf(1), leaf(2)], 1, (9, 1)), leaf(3)], 1)
    assert inst.analyzer.try_objective(tree) is not None
    assert resized(tree, 16) is None
    ex = H.explicit_allocations(inst, tree)
    assert resized(ex, 16) == ex


def small_instances(max_layers: int = 3):
    """2–``max_layers``-layer random networks on 3-, 4- and 16-tile chips."""
    return tiny_instances(max_layers=max_layers, min_layers=2,
                          chips=("tiled-2x2", "tiled-1x3", "edge-4x4"))


@settings(max_examples=40, derandomize=True, deadline=None)
@given(small_instances(max_layers=4), st.data())
def test_written_out_npt_allocations_cost_what_npt_costs(inst, data):
    n = len(inst.workload)
    tree = data.draw(trees(n, inst.batch))
    v = inst.analyzer.try_objective(tree)
    if v is None:
        return
    ex = H.explicit_allocations(inst, tree)
    assert all(nd.alloc is not None for nd in _s_cuts(ex))
    assert inst.analyzer.objective(ex) == pytest.approx(v, rel=1e-12)
    # rescaled to its own tiles, a tree the analyzer runs stays one it runs
    G = inst.analyzer.G
    assert resized(ex, G) == ex
    same = resized(tree, G)
    assert same is None or inst.analyzer.objective(same) == pytest.approx(v, rel=1e-12)


def _s_cuts(node: Node) -> list[Node]:
    out = [node] if node.kind == SCUT else []
    for c in node.children:
        out += _s_cuts(c)
    return out


@settings(max_examples=25, derandomize=True, deadline=None)
@given(small_instances(), st.data())
def test_the_polish_never_ends_worse_and_never_beats_the_full_space_optimum(inst, data):
    """From the one-S-cut tree (NPT allocation) or a random tree (segments, nested cuts,
    explicit allocations) of random 2–3-layer networks, with tight 2–4-tile chips and a
    16-tile one: the polished tree is no worse than its start, costs what the polish
    reports, has valid explicit allocations, and is never below the brute-force optimum
    over every tree and allocation."""
    n = len(inst.workload)
    start = cut(SCUT, [leaf(i) for i in range(n)], 1)
    if data.draw(st.booleans()):
        start = data.draw(trees(n, inst.batch))
    v0 = inst.analyzer.try_objective(start)
    if v0 is None:
        return
    tree, v, st_ = H.polish_allocations(inst, (start, v0), random.Random(0), patience=300)
    assert v <= v0
    assert v == pytest.approx(inst.analyzer.objective(tree), rel=1e-12)
    assert _allocations_fit(tree, inst.analyzer.G)
    assert st_["objective"] == v and st_["gains"] <= st_["moves"]
    bf = call(F.bruteforce, inst, SolveOptions(threads=1))
    assert v >= bf.objective * (1 - 1e-9)


@settings(max_examples=25, derandomize=True, deadline=None)
@given(small_instances(), st.data())
def test_descents_and_polishes_never_end_worse_and_never_beat_the_optimum(inst, data):
    """``polish_tree`` from a random tree (explicit allocations included, so descents
    meet trees whose rebuilt S cuts the analyzer refuses) of random 2–3-layer networks
    on 2–4- and 16-tile chips: no worse than its start, no worse than its own first
    polish, what the analyzer says, valid allocations, never below the brute-force
    optimum over every tree and allocation."""
    n = len(inst.workload)
    start = data.draw(trees(n, inst.batch))
    v0 = inst.analyzer.try_objective(start)
    if v0 is None:
        return
    if data.draw(st.booleans()):
        start = H.explicit_allocations(inst, start)
    tree, v, st_ = H.polish_tree(inst, (start, v0), random.Random(0), patience=200,
                                 descents=3, iterations=60)
    assert v <= v0 and v <= st_["first_polish"]
    assert v == pytest.approx(inst.analyzer.objective(tree), rel=1e-12)
    assert _allocations_fit(tree, inst.analyzer.G)
    assert len(st_["descents"]) <= 3
    assert all(r["polish"] <= r["descent"] for r in st_["descents"])
    bf = call(F.bruteforce, inst, SolveOptions(threads=1))
    assert v >= bf.objective * (1 - 1e-9)


def test_a_descent_finds_what_the_allocation_polish_alone_cannot():
    """On some of 40 random two-layer networks on the 16-tile edge chip, from the
    layer-sequential tree ``T(1)[l0 l1]`` (no S cut: nothing to polish), one descent
    finds a better tree; ``descents=0`` must return the start unchanged."""
    rng = random.Random(3)
    found = False
    for _ in range(40):
        inst = _seeded_instance(rng)
        start = cut(TCUT, [leaf(i) for i in range(len(inst.workload))], 1)
        v0 = inst.analyzer.try_objective(start)
        if v0 is None:
            continue
        _, v_alone, _ = H.polish_tree(inst, (start, v0), random.Random(0), patience=100,
                                      descents=0, iterations=200)
        assert v_alone == pytest.approx(v0, rel=1e-12)
        _, v, st_ = H.polish_tree(inst, (start, v0), random.Random(0), patience=100,
                                  descents=1, iterations=200)
        if v < v0 * (1 - 1e-6):
            assert st_["descents"][0]["accepted"] >= 1
            found = True
            break
    assert found


def test_the_polish_moves_tiles_npt_gives_to_the_wrong_child():
    """Two-layer networks on the 16-tile edge chip: NPT splits ``S(1)[l0 l1]`` by
    compute time alone; on some of 40 random ones another split has a lower E²·D, and
    the polish must find one."""
    rng = random.Random(1)
    found = False
    for _ in range(40):
        inst = _seeded_instance(rng)
        start = cut(SCUT, [leaf(i) for i in range(len(inst.workload))], 1)
        v0 = inst.analyzer.try_objective(start)
        if v0 is None:
            continue
        _, v, st_ = H.polish_allocations(inst, (start, v0), random.Random(0), patience=300)
        if v < v0 * (1 - 1e-6):
            assert st_["gains"] >= 1
            found = True
            break
    assert found


def _seeded_instance(rng: random.Random) -> Instance:
    from chipsched.workload import Layer, OpKind, Workload

    layers = []
    for i in range(2):
        k, c, h = rng.choice([8, 32, 128]), rng.choice([8, 64]), rng.choice([1, 4, 8])
        layers.append(Layer(f"l{i}", OpKind.CONV, K=k, C=c, H=h, W=h, R=3, S=3,
                            in_elems=c * h * h, weight_elems=k * c * 9))
    w = Workload("two", tuple(layers), ((0, 1, min(layers[0].out_elems,
                                                    layers[1].in_elems)),))
    return Instance(w, get_chip("edge-4x4"), batch=1, objective="e2d")


def test_the_sa_polishes_its_best_tree_after_the_same_tries():
    inst = Instance(_two_branch(), get_chip("edge-4x4"), batch=2, objective="e2d")
    plain = call(H.sa, inst, SolveOptions(seed=5), beta=20, polish=0)
    polished = call(H.sa, inst, SolveOptions(seed=5), beta=20)
    # the polish has its own stream: the tries are those of the run without it
    def objectives(r):
        return [t["objective"] for t in r.stats["tries"]]

    assert objectives(polished) == objectives(plain)
    assert plain.stats["polish"] is None and polished.stats["polish"]["moves"] >= 0
    assert polished.objective <= plain.objective
    assert polished.objective == pytest.approx(
        inst.analyzer.objective(polished.solution.tree), rel=1e-9)
    # the descents come after the same first polish (the same stream, drawn on)
    alone = call(H.sa, inst, SolveOptions(seed=5), beta=20, descents=0)
    assert alone.stats["polish"]["descents"] == []
    assert polished.stats["polish"]["first_polish"] == alone.objective
    assert polished.objective <= alone.objective


def _two_branch():
    from chipsched.workload import Layer, OpKind, Workload

    layers = (Layer("a", OpKind.CONV, K=32, C=8, H=8, W=8, R=3, S=3, in_elems=512,
                    weight_elems=2304),
              Layer("b", OpKind.CONV, K=64, C=32, H=8, W=8, R=3, S=3, in_elems=2048,
                    weight_elems=18432),
              Layer("c", OpKind.CONV, K=8, C=32, H=8, W=8, R=3, S=3, in_elems=2048,
                    weight_elems=2304),
              Layer("d", OpKind.FC, K=10, C=4608, in_elems=4608, weight_elems=46080))
    return Workload("branch", layers, ((0, 1, 2048), (0, 2, 2048), (1, 3, 4096),
                                       (2, 3, 512)))


def test_allocate_polishes_a_warm_start_through_the_face():
    inst = Instance(_two_branch(), get_chip("edge-4x4"), batch=2, objective="e2d")
    start = chipsched.solve("tile_groups", inst, "sa", seed=0, threads=1, beta=10, polish=0)
    r = chipsched.solve("tile_groups", inst, "allocate", seed=0, threads=1,
                        warm_start=start.solution.to_dict())
    assert r.success and r.objective <= start.objective * (1 + 1e-12)
    assert r.objective == pytest.approx(inst.analyzer.objective(r.solution.tree), rel=1e-9)
    d = chipsched.solve("tile_groups", inst, "allocate", seed=0, threads=1,
                        warm_start=start.solution.to_dict(), descents=2, beta=20)
    assert d.success and d.objective <= r.objective * (1 + 1e-12)
    assert 1 <= len(d.metrics["solver"]["descents"]) <= 2  # the descents ran
    assert d.objective == pytest.approx(inst.analyzer.objective(d.solution.tree), rel=1e-9)
