"""The full-space bound of issue 30 (``full_space_bound``: root run count, usable rows,
placement hops, the energy envelope): never above any tree of brute-force enumerations
— on chips with small buffers (spills, pinned weights, forced sub-batching) and with
one DRAM port (tiles several hops from DRAM) as well as SET's — and never below the
per-layer bound it refines."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import chipsched
from chipsched.errors import InputError
from chipsched.formulations import tile_groups as F
from chipsched.instances.chips import get_chip
from chipsched.problems.tile_groups import Infeasible, Instance
from chipsched.problems.tile_groups.bound import (
    ball_mean_hops,
    dram_window_hops,
    energy_floor,
    full_space_bound,
    row_terms,
)
from tests.test_tile_groups_methods import _net

REL = 1e-9


def _chip(name: str, buffer: int | None, one_port: bool):
    hw = get_chip(name)
    if buffer is not None:
        hw = replace(hw, unit=replace(hw.unit, buffer_bytes=buffer))
    if one_port:
        hw = replace(hw, dram=replace(hw.dram, ports=((0, 0),)))
    return hw


@st.composite
def stressed_instances(draw, max_layers: int = 3) -> Instance:
    """Random 1–3-layer networks on 2–4-tile chips whose buffers are small enough that
    rows spill, sub-batches are forced and pinned weights do not fit, or whose only
    DRAM port is in a corner; SET's and per-run weight accounting."""
    n = draw(st.integers(1, max_layers))
    chip = _chip(draw(st.sampled_from(["tiled-1x2", "tiled-1x3", "tiled-2x2"])),
                 draw(st.sampled_from([None, 65536, 16384, 8192, 4096])),
                 draw(st.booleans()))
    try:
        inst = Instance(_net(draw, n), chip, batch=draw(st.sampled_from([1, 2, 4])),
                        objective=draw(st.sampled_from(["latency", "energy", "e2d", "ed2"])),
                        weight_accounting=draw(st.sampled_from(["per_run", "set"])))
        inst.analyzer  # noqa: B018 - a network that cannot run at all is refused here
    except InputError:
        assume(False)
    return inst


def _trees(inst: Instance):
    trees, _ = F.full_space(inst)
    for t in trees:
        try:
            yield t, inst.analyzer.totals(t)
        except Infeasible:
            continue


@settings(max_examples=70, derandomize=True, deadline=None)
@given(stressed_instances())
def test_no_tree_goes_below_the_full_space_bound_or_its_envelope(inst):
    fb = full_space_bound(inst)
    assert fb.objective >= fb.basic.objective * (1 - REL)
    seen = 0
    for _tree, t in _trees(inst):
        seen += 1
        e, d = t.energy.total, t.latency
        assert inst.objective(e, d) >= fb.objective * (1 - REL)
        assert inst.objective(e, d) >= fb.by_root_runs[t.root_runs] * (1 - REL)
        assert e >= fb.energy_j * (1 - REL) and d >= fb.latency_s * (1 - REL)
        for dd, ee in fb.envelope:
            if d <= dd:
                assert e >= ee * (1 - REL), (dd, ee, e, d)
    assume(seen > 0)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(stressed_instances())
def test_each_row_term_is_paid_by_the_tree_that_uses_the_row(inst):
    """Per tree: Σ over its leaves of their rows' terms (with its root run count) is at
    most its energy, its busy time over G at most its latency, its DRAM bytes at least
    the rows' — so a term that overcharges one row fails here even where the bound's
    minimum over rows hides it."""
    an = inst.analyzer
    nb = len(an.table.batches)
    for tree, t in _trees(inst):
        terms = row_terms(inst, t.root_runs)
        segs, b, _runs = an.segments_of(tree)
        e_sum = busy = dbytes = 0.0
        for s in segs:
            leaves: list = []
            an.walk(s, b, 0, an.G, 1, (), leaves, {})
            for lf in leaves:
                col = (lf.hi - lf.lo - 1) * nb + an.bidx[lf.batch]
                assert np.isfinite(terms.energy_j[lf.layer, col]), (tree, lf)
                e_sum += terms.energy_j[lf.layer, col]
                busy += terms.busy_s[lf.layer, col]
                dbytes += terms.dram_bytes[lf.layer, col]
        assert t.energy.total >= e_sum * (1 - REL), tree
        assert t.latency * an.G >= busy * (1 - REL), tree
        assert t.dram_bytes >= dbytes * (1 - REL), tree


def test_hops_of_a_one_port_row_of_tiles():
    """1×3 mesh, the port at column 0: DRAM hops 1, 2, 3 (with the controller link);
    the best window of k tiles starts at the port; a tile's k nearest tiles are itself
    and its neighbours (the middle tile: 0, 1, 1)."""
    inst = Instance(_net_one(), _chip("tiled-1x3", None, True), batch=1)
    an = inst.analyzer
    assert np.allclose(dram_window_hops(an), [1.0, 1.5, 2.0])
    assert np.allclose(ball_mean_hops(an), [0.0, 0.5, 2 / 3])


def _net_one():
    from chipsched.workload import Layer, OpKind, Workload
    return Workload("one", (Layer("A", OpKind.FC, K=128, C=8, in_elems=8,
                                  weight_elems=1024),), ())


def test_the_envelope_falls_with_latency_and_meets_the_least_energy():
    inst = chipsched.make_instance("tile_groups", "tiny", "edge-4x4", batch=4)
    fb = full_space_bound(inst)
    es = [e for _, e in fb.envelope]
    assert all(a >= b * (1 - REL) for a, b in zip(es, es[1:], strict=False))
    assert es[-1] == pytest.approx(fb.energy_j, rel=1e-9)
    terms = row_terms(inst, fb.root_runs)
    # below the least latency of every row set no tree exists
    an = inst.analyzer
    bw = an.hw.dram.bytes_per_s
    assert energy_floor(terms, fb.latency_s * 0.5, an.G, bw) == np.inf
    assert energy_floor(terms, fb.latency_s * 2, an.G, bw) < np.inf


def test_the_bound_method_reports_the_full_space_bound():
    inst = chipsched.make_instance("tile_groups", "tiny", "edge-4x4", batch=4)
    r = chipsched.solve("tile_groups", inst, "bound")
    fb = full_space_bound(inst)
    assert r.bound == pytest.approx(fb.objective, rel=1e-12)
    assert r.metrics["solver"]["envelope"] and r.metrics["solver"]["root_runs"] >= 1


def _relaxed_optimum(inst: Instance) -> float:
    """The relaxation ``full_space_bound`` bounds, solved by enumeration: for every root
    run count, one usable row per layer; energy = Σ of the rows' energies, latency =
    max(Σ busy / G, the largest own time, Σ DRAM bytes / bandwidth)."""
    an = inst.analyzer
    bw = an.hw.dram.bytes_per_s
    best = np.inf
    from chipsched.cost import divisors
    for R in divisors(an.B):
        t = row_terms(inst, R)
        ok = [np.flatnonzero(np.isfinite(t.energy_j[i])) for i in range(len(t.energy_j))]
        if any(len(o) == 0 for o in ok):
            continue
        e = busy = own = db = np.zeros(())
        for i, o in enumerate(ok):  # broadcast one axis per layer
            shape = [1] * len(ok)
            shape[i] = len(o)
            e = e + t.energy_j[i, o].reshape(shape)
            busy = busy + t.busy_s[i, o].reshape(shape)
            own = np.maximum(own, t.own_s[i, o].reshape(shape))
            db = db + t.dram_bytes[i, o].reshape(shape)
        d = np.maximum(np.maximum(busy / an.G, own), db / bw)
        best = min(best, float(np.min(np.vectorize(inst.objective)(e, d))))
    return best


@st.composite
def tradeoff_instances(draw) -> Instance:
    """Compute-heavy convolutions on up to 16 tiles: the least-energy rows are slow, so
    the energy-latency envelope, not the least energy, decides the bound."""
    from chipsched.workload import Layer, OpKind, Workload
    n = draw(st.integers(1, 3))
    layers, edges = [], []
    for i in range(n):
        k, c = draw(st.sampled_from([16, 64, 256])), draw(st.sampled_from([16, 64]))
        h = draw(st.sampled_from([8, 32]))
        layers.append(Layer(f"c{i}", OpKind.CONV, K=k, C=c, H=h, W=h, R=3, S=3,
                            in_elems=c * h * h, weight_elems=9 * k * c))
        if i:
            edges.append((i - 1, i, min(layers[i - 1].out_elems, layers[i].in_elems)))
    chip = _chip(draw(st.sampled_from(["tiled-2x2", "edge-4x4"])),
                 draw(st.sampled_from([None, 65536])), draw(st.booleans()))
    try:
        inst = Instance(Workload("heavy", tuple(layers), tuple(edges)), chip,
                        batch=draw(st.sampled_from([1, 4])),
                        objective=draw(st.sampled_from(["e2d", "ed2", "edp", "latency"])))
        inst.analyzer  # noqa: B018
    except InputError:
        assume(False)
    return inst


@settings(max_examples=40, derandomize=True, deadline=None)
@given(tradeoff_instances())
def test_the_bound_never_exceeds_its_relaxation_solved_by_enumeration(inst):
    """The envelope's Lagrangian step and its staircase over latency are each valid only
    if the bound stays below the relaxation's exact optimum."""
    fb = full_space_bound(inst)
    assert fb.objective <= _relaxed_optimum(inst) * (1 + REL)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(1, 3), st.integers(1, 5), st.integers(0, 10_000))
def test_energy_floor_is_below_the_best_row_choice_under_the_latency(L, M, seed):
    rng = np.random.default_rng(seed)
    from chipsched.problems.tile_groups.bound import RowTerms
    e = rng.uniform(1, 10, (L, M))
    busy = rng.uniform(1, 10, (L, M))
    own = busy / rng.integers(1, 4, (L, M))
    db = rng.uniform(0, 5, (L, M))
    e[rng.random((L, M)) < 0.2] = np.inf
    terms = RowTerms(1, e, busy, own, db)
    G, bw = 3, 2.0
    for d in rng.uniform(0.5, 12, 6):
        best = np.inf
        for rows in np.ndindex(*([M] * L)):
            pick = (np.arange(L), np.array(rows))
            if (np.isfinite(e[pick]).all() and own[pick].max() <= d
                    and busy[pick].sum() <= G * d and db[pick].sum() <= bw * d):
                best = min(best, float(e[pick].sum()))
        assert energy_floor(terms, float(d), G, bw) <= best * (1 + REL)
