"""The window-decomposition bound (formulations/op_placement/windows.py): a theorem —
never above a proven optimum on random small graphs with cut ops (blocks in series,
transfers, two-core processors, ops some processors cannot run, scalar ops left out of
every window) — and what it finds on a real network."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from chipsched.api import make_instance, solve
from chipsched.formulations.op_placement import candidate_count
from chipsched.formulations.op_placement.windows import (
    cut_ops,
    decomposition_bound,
    objective_bound,
    windows,
)
from chipsched.problems.op_placement import Instance, check_schedule, lower_bound
from chipsched.problems.op_placement import makespan_energy as me
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions

DEC = "op_placement"


@st.composite
def windowed_instances(draw):
    """Blocks of 1–3 ops (parallel or a chain) joined in series through single ops (the
    cut ops), scalar ops feeding some data ops (the shape/parameter ops of a network:
    left out of every window), 1–3 processors, transfers."""
    P = draw(st.integers(1, 3))
    cores = [1] * P
    if draw(st.booleans()):
        cores[draw(st.integers(0, P - 1))] = 2
    classes: list[str] = []
    edges: list[tuple[int, int]] = []
    prev_cut: int | None = None
    for _ in range(draw(st.integers(1, 2))):
        block = []
        chain = draw(st.booleans())
        for k in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 3)) == 0:  # a scalar op feeding the next data op
                classes.append("scalar")
                block.append(-(len(classes)))  # marked: feeds the op added next
            classes.append("tensor")
            v = len(classes) - 1
            if block and block[-1] < 0:
                edges.append((-block.pop() - 1, v))
            if prev_cut is not None and (not chain or k == 0):
                edges.append((prev_cut, v))
            if chain and block:
                edges.append((block[-1], v))
            block.append(v)
        classes.append("tensor")
        cut = len(classes) - 1
        for v in (block[-1:] if chain else block):
            edges.append((v, cut))
        prev_cut = cut
    n = len(classes)
    time = np.array([[draw(st.integers(0 if classes[i] == "scalar" else 1, 6))
                      for _ in range(P)] for i in range(n)], float)
    for i in range(n):
        if P > 1 and draw(st.integers(0, 3)) == 0:
            time[i, draw(st.integers(0, P - 1))] = np.inf
    energy = np.array([[draw(st.integers(0, 4)) for _ in range(P)] for _ in range(n)], float)
    transfers = draw(st.booleans())
    eb = [float(draw(st.integers(0, 3))) if transfers else 0.0 for _ in edges]
    lat = np.array([[draw(st.integers(0, 2)) if transfers else 0 for _ in range(P)]
                    for _ in range(P)], float)
    obj = draw(st.sampled_from(["makespan", "makespan", "weighted:1,2", "energy"]))
    return Instance(name="w", ops=tuple(f"o{i}" for i in range(n)), op_class=tuple(classes),
                    time=time, energy=energy, edges=np.array(sorted(set(edges)),
                                                              dtype=np.int64).reshape(-1, 2),
                    edge_bytes=np.array(eb[:len(set(edges))]),
                    processors=tuple(f"p{q}" for q in range(P)), cores=tuple(cores),
                    latency=lat, bandwidth=draw(st.sampled_from([1.0, np.inf])),
                    objective=obj)


@settings(max_examples=80, derandomize=True)
@given(windowed_instances())
def test_the_decomposition_bound_never_exceeds_the_optimum(inst):
    assume(candidate_count(inst) <= 20_000)  # brute force proves the optimum quickly
    bf = solve(DEC, inst, "bruteforce")
    assert bf.status is Status.OPTIMAL
    win = windows(inst)
    assert win.cuts, "the generator builds cut ops"
    d = decomposition_bound(inst, SolveOptions(threads=1), win)
    # a theorem on the makespan of every schedule: below the least makespan
    opt_c = bf.objective if inst.objective.name == "makespan" else \
        solve(DEC, inst.with_objective("makespan"), "bruteforce").objective
    assert d.makespan <= opt_c + 1e-9, (d.makespan, opt_c)
    # and on the objective, as every bound a method reports
    b = solve(DEC, inst, "bound")
    assert b.status is Status.BOUND_ONLY and b.bound <= bf.objective + 1e-9
    assert b.bound >= objective_bound(inst, lower_bound(inst)) - 1e-12
    st_ = d.stitched(inst)
    if st_ is not None:
        check_schedule(inst, st_)
        assert me(inst, st_)[0] >= d.makespan - 1e-9


@settings(max_examples=40, derandomize=True)
@given(windowed_instances())
def test_cpsat_with_the_window_rows_still_finds_the_optimum(inst):
    assume(candidate_count(inst) <= 20_000)
    bf = solve(DEC, inst, "bruteforce")
    cp = solve(DEC, inst, "cpsat", time_limit=20, threads=1)
    assert cp.status is Status.OPTIMAL, cp.message
    assert cp.objective == pytest.approx(bf.objective, rel=1e-9, abs=1e-9)
    assert cp.bound <= bf.objective + 1e-9


def test_cut_ops_are_the_ops_comparable_with_every_data_op():
    # a diamond between two chains: a → {b, c} → d → e; scalar s feeds b
    inst = Instance(name="d", ops=("a", "s", "b", "c", "d", "e"),
                    op_class=("tensor", "scalar", "tensor", "tensor", "tensor", "tensor"),
                    time=np.ones((6, 1)), edges=np.array([[0, 2], [0, 3], [1, 2], [2, 4],
                                                          [3, 4], [4, 5]]),
                    edge_bytes=np.zeros(6), processors=("p",), cores=(1,),
                    latency=np.zeros((1, 1)), bandwidth=np.inf)
    assert cut_ops(inst) == [0, 4, 5]
    w = windows(inst)
    assert w.members == ((), (2, 3), (), ()) and w.dropped == (1,)


def test_bert_base_bound_meets_the_best_schedule():
    """Issue 26: BERT-base on the SoC — the decomposition proves 8.182195 ms, which the
    stitched window schedules (and seed 003 in program order) reach."""
    inst = make_instance(DEC, "bert-base")
    b = solve(DEC, inst, "bound", time_limit=120)
    assert b.bound == pytest.approx(8.182195e-3, rel=1e-6)
    cp = solve(DEC, inst, "cpsat", time_limit=120)
    assert cp.status is Status.OPTIMAL and cp.bound >= b.bound * (1 - 1e-12)
    assert cp.objective - cp.bound <= 1e-6 * cp.objective
    s3 = solve(DEC, inst, "seed003")
    assert (s3.objective - b.bound) / s3.objective <= 0.002  # the "≤ 0.2 %"
    assert math.isfinite(b.metrics["solver"]["decomposition_makespan"])
