"""op_placement CP-SAT on identical processors (issue 12): the cumulative reasoning and the
redundant group cumulative change how fast bounds close, never the optimum.

Random task graphs written as Standard Task Graph Set files (the STG sets' format, no
file of the sets themselves), on 2 and 3 identical processors, without and with
transfer costs: CP-SAT with and without ``cumulative_reasoning`` proves the brute-force
optimum; the model holds one cumulative per merged class, or one redundant cumulative
per group of identical processors kept apart by transfer costs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipsched.api import solve
from chipsched.formulations.op_placement import _scaling, build_cpsat, processor_classes
from chipsched.instances.op_placement import read_stg
from chipsched.result import Status


def _stg_text(times: list[int], preds: list[list[int]]) -> str:
    """An STG file: task 0 and n+1 are the zero-time entry and exit dummies."""
    n = len(times)
    lines = [str(n), "0 0 0"]
    for k, (t, ps) in enumerate(zip(times, preds, strict=True), start=1):
        ids = [p + 1 for p in ps] or [0]
        lines.append(" ".join(map(str, [k, t, len(ids), *ids])))
    sinks = [k + 1 for k in range(n) if not any(k in ps for ps in preds)]
    lines.append(" ".join(map(str, [n + 1, 0, len(sinks), *sinks])))
    return "\n".join(lines) + "\n"


@st.composite
def task_graphs(draw):
    n = draw(st.integers(3, 6))
    times = [draw(st.integers(1, 9)) for _ in range(n)]
    preds = [sorted(draw(st.sets(st.integers(0, k - 1), max_size=2))) if k else []
             for k in range(n)]
    return times, preds


@given(task_graphs(), st.sampled_from([2, 3]), st.sampled_from([0.0, 1.0]))
@settings(max_examples=30, deadline=None)
def test_cumulative_reasoning_keeps_the_optimum(tmp_path_factory, graph, procs, ccr):
    path = tmp_path_factory.mktemp("stg") / "g.stg"
    path.write_text(_stg_text(*graph))
    inst = read_stg(path, procs, ccr)
    brute = solve("op_placement", inst, "bruteforce")
    for reasoning in (True, False):
        r = solve("op_placement", inst, "cpsat", time_limit=30, threads=1,
                  cumulative_reasoning=reasoning)
        assert r.status is Status.OPTIMAL, (reasoning, r.status, r.message)
        assert r.objective == pytest.approx(brute.objective, rel=1e-9)


@pytest.mark.parametrize("ccr,expect", [(0.0, [3]), (1.0, [3])])
def test_identical_processors_are_one_resource_of_their_capacity(tmp_path, ccr, expect):
    path = tmp_path / "g.stg"
    path.write_text(_stg_text([3, 2, 4, 1], [[], [0], [0], [1, 2]]))
    inst = read_stg(path, 3, ccr)
    classes, symmetric = processor_classes(inst)
    # free transfers: the three processors merge into one class; with transfers they
    # stay apart (a symmetric group) and the redundant cumulative joins them
    assert (len(classes), len(symmetric)) == ((1, 0) if ccr == 0 else (3, 1))
    tau, eps, w, _ = _scaling(inst, None)
    model, info = build_cpsat(inst, tau, eps, w)
    assert info["cumulatives"] == expect


def test_makespan_rows_for_every_op_hold_the_critical_path(tmp_path):
    """C ≥ e[i] + tail[i] for every op: a chain 4 → 3 → 5 on many processors has
    makespan 12, the model's root bound already."""
    path = tmp_path / "g.stg"
    path.write_text(_stg_text([4, 3, 5, 1], [[], [0], [1], []]))
    inst = read_stg(path, 4)
    r = solve("op_placement", inst, "cpsat", time_limit=10, threads=1)
    assert r.status is Status.OPTIMAL and r.objective == 12 and r.bound == 12
    assert np.isclose(r.metrics["solver"]["lower_bound"], 12)
