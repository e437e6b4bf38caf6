"""op_placement: the instance, the schedule evaluator (hand-computed), bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chipsched.cost import transfer_time_s
from chipsched.errors import InputError
from chipsched.instances.chips import get_chip
from chipsched.problems.op_placement import (
    Instance,
    Solution,
    evaluate,
    identical_processor_groups,
    list_schedule,
    lower_bound,
    objectives_for,
    order_by_start,
    transfer_table,
)


def hand_instance(objective: str = "makespan") -> Instance:
    """A → B, A → C on 'fast' (1 core) and 'slow' (2 cores).

    latency fast→slow 1, slow→fast 2; bandwidth 10 bytes per time unit.
    """
    return Instance(
        name="hand", ops=("A", "B", "C"), op_class=("tensor", "tensor", "scalar"),
        time=np.array([[2, 4], [3, 6], [5, 5]], dtype=float),
        energy=np.array([[1, 2], [1, 3], [2, 1]], dtype=float),
        edges=np.array([[0, 1], [0, 2]]), edge_bytes=np.array([20.0, 10.0]),
        processors=("fast", "slow"), cores=(1, 2),
        latency=np.array([[0, 1], [2, 0]], dtype=float), bandwidth=10.0,
        time_unit="u", objective=objective)


def test_evaluator_by_hand():
    inst = hand_instance()
    # A fast 0–2, B fast 2–5, C slow: arrives 2 + 1 + 10/10 = 4, runs 4–9
    sol = inst.solution([0, 0, 1], [0, 0, 0], [0, 2, 4])
    value, m = evaluate(inst, sol)
    assert value == 9 and m["makespan"] == 9 and m["energy_j"] == 3
    assert m["transfers"] == 1 and m["transfer_time"] == pytest.approx(2.0)
    assert m["transfer_bytes"] == 10
    assert m["processors"]["fast"] == {"ops": 2, "busy": 5.0, "utilization": 5 / 9,
                                       "energy_j": 2.0}
    assert m["processors"]["slow"]["utilization"] == pytest.approx(5 / 18)
    # single processors: fast serial 2+3+5 = 10; slow (2 cores) A 0–4, B 4–10 ∥ C 4–9 = 10
    assert m["best_single_processor"] == "fast" and m["best_single_objective"] == 10
    assert m["gain_vs_best_single"] == pytest.approx(10 / 9)
    single = inst.single_processor_schedules
    assert evaluate(inst, single[1])[0] == 10 and sorted(single[1].core[1:]) == [0, 1]


def test_energy_and_weighted_objectives_by_hand():
    sol = hand_instance().solution([0, 0, 1], [0, 0, 0], [0, 2, 4])
    v, m = evaluate(hand_instance("energy"), sol)
    assert v == 3 and m["best_single_objective"] == 4  # fast: 1+1+2; slow: 2+3+1
    assert m["gain_vs_best_single"] == pytest.approx(4 / 3)
    v, m = evaluate(hand_instance("weighted:1,2"), sol)
    assert v == 9 + 2 * 3
    # weighted single processors: fast 10 + 8 = 18, slow 10 + 12 = 22
    assert m["best_single_objective"] == 18


def test_infeasible_schedules_are_named():
    inst = hand_instance()
    with pytest.raises(InputError, match=r"op 'C'.*before its input from 'A' arrives at 4"):
        evaluate(inst, inst.solution([0, 0, 1], [0, 0, 0], [0, 2, 3.5]))
    # B on slow core 0 arrives at 2 + 1 + 2 = 5, runs 5–11; C on the same core at 6
    with pytest.raises(InputError, match=r"op 'C'.*overlaps 'B' on slow core 0"):
        evaluate(inst, inst.solution([0, 1, 1], [0, 0, 0], [0, 5, 6]))
    evaluate(inst, inst.solution([0, 1, 1], [0, 0, 1], [0, 5, 6]))  # other core: fine
    with pytest.raises(InputError, match=r"op 'B'.*core 2 of slow does not exist"):
        evaluate(inst, inst.solution([0, 1, 1], [0, 2, 0], [0, 5, 6]))
    with pytest.raises(InputError, match=r"op 'A'.*starts at -1"):
        evaluate(inst, inst.solution([0, 0, 1], [0, 0, 0], [-1, 2, 4]))


def test_unrunnable_op_on_its_processor():
    inst = Instance(name="u", ops=("a",), op_class=("task",), time=np.array([[1.0, np.inf]]),
                    edges=np.zeros((0, 2)), edge_bytes=np.zeros(0), processors=("p", "q"),
                    cores=(1, 1), latency=0.0, bandwidth=1.0)
    with pytest.raises(InputError, match="op 'a'.*q cannot run it"):
        evaluate(inst, inst.solution([1], [0], [0]))
    assert evaluate(inst, inst.solution([0], [0], [0]))[0] == 1


@pytest.mark.parametrize("change, match", [
    ({"time": np.array([[2, 4], [3, -6], [5, 5]], float)}, r"op 'B' on 'slow'.*negative"),
    ({"time": np.array([[2, 4], [np.inf, np.inf], [5, 5]], float)},
     r"op 'B'.*no processor can run it"),
    ({"edges": np.array([[0, 1], [1, 0]])}, r"cycle: (A -> B -> A|B -> A -> B)"),
    ({"edges": np.array([[0, 1], [2, 1], [1, 2]]), "edge_bytes": np.ones(3)},
     r"cycle: (B -> C -> B|C -> B -> C)"),
    ({"edge_bytes": np.array([20.0, -1])}, r"edge A -> C.*negative"),
    ({"cores": (1, 0)}, "positive core count"),
    ({"ops": ("A", "A", "C")}, "op 'A'.*defined twice"),
    ({"objective": "edp"}, "unknown objective 'edp'"),
])
def test_bad_instances(change, match):
    kw = {f: getattr(hand_instance(), f) for f in (
        "name", "ops", "op_class", "time", "energy", "edges", "edge_bytes", "processors",
        "cores", "latency", "bandwidth", "objective")}
    kw.update(change)
    with pytest.raises(InputError, match=match) as exc:
        Instance(**kw)
    assert "\n" not in str(exc.value)


def test_edges_must_go_forward_without_a_cycle():
    with pytest.raises(InputError, match="edge C -> B.*goes backwards"):
        Instance(name="h", ops=("A", "B", "C"), op_class=("task",) * 3, time=np.ones((3, 1)),
                 edges=np.array([[0, 2], [2, 1]]), edge_bytes=np.zeros(2), processors=("p",),
                 cores=(1,), latency=0.0, bandwidth=1.0)


def test_objective_parsing():
    parse = objectives_for("s").parse
    assert parse("latency").name == "makespan" and parse("makespan").unit == "s"
    assert parse("energy")(5.0, 2.0) == 2.0 and parse("energy").unit == "J"
    o = parse("weighted:2,0.5")
    assert (o.coefficient("makespan"), o.coefficient("energy_j")) == (2.0, 0.5)
    assert o(3.0, 4.0) == 8.0 and o.name == "weighted:2,0.5"
    assert parse("weighted")(1.0, 1.0) == 2.0
    assert objectives_for("u.t.").parse("makespan").unit == "u.t."
    for bad in ("weighted:1", "weighted:-1,2", "weighted:0,0", "period", "weighted:x,1"):
        with pytest.raises(InputError, match="objective"):
            parse(bad)


def test_transfer_table_is_the_cost_model_formula():
    hw = get_chip("soc-npu-gpu-cpu")
    lat = np.array(hw.interconnect.latency_us) * 1e-6
    bw = np.array(hw.interconnect.bandwidth_gb_s) * 1e9
    np.fill_diagonal(bw, np.inf)
    nbytes = np.array([0.0, 1.0, 4096.0, 3.5e6])
    t = transfer_table(nbytes, lat, bw)
    for k, b in enumerate(nbytes):
        for p in range(3):
            for q in range(3):
                assert t[k, p, q] == pytest.approx(transfer_time_s(hw, p, q, b), rel=1e-15)


def test_list_schedule_appends_and_respects_transfers():
    inst = hand_instance()
    sol = list_schedule(inst, [0, 1, 1], [0, 1, 2])
    # A fast 0–2; B slow core 0 arrives 2+1+2 = 5 → 5–11; C slow core 1 arrives 4 → 4–9
    assert list(sol.start) == [0, 5, 4] and list(sol.core) == [0, 0, 1]
    with pytest.raises(InputError, match="op 'B' comes before its input 'A'"):
        list_schedule(inst, [0, 1, 1], [1, 0, 2])
    assert order_by_start(inst, [0.0, 5.0, 4.0]) == [0, 2, 1]


def test_lower_bound_and_groups():
    inst = hand_instance()
    # critical path at fastest times: A 2 + max(B 3, C 5) = 7; work 2+3+5 = 10 over 3 cores
    assert lower_bound(inst) == 7
    ident = Instance(name="i", ops=("a", "b"), op_class=("task",) * 2, time=np.ones((2, 3)),
                     edges=np.array([[0, 1]]), edge_bytes=np.array([1.0]),
                     processors=("x", "y", "z"), cores=(1, 1, 1), latency=0.0, bandwidth=1.0)
    assert identical_processor_groups(ident) == [[0, 1, 2]]
    lat = np.array([[0, 1, 1], [1, 0, 1], [2, 2, 0]], dtype=float)
    assert identical_processor_groups(Instance(**{**_fields(ident), "latency": lat})) == \
        [[0, 1], [2]]


def _fields(inst: Instance) -> dict:
    return {f: getattr(inst, f) for f in ("name", "ops", "op_class", "time", "edges",
                                          "edge_bytes", "processors", "cores", "latency",
                                          "bandwidth")}


def test_solution_json_round_trip():
    inst = hand_instance()
    sol = inst.solution([0, 0, 1], [0, 0, 1], [0, 2, 4])
    d = sol.to_dict()
    assert d["assignment"] == {"A": "fast", "B": "fast", "C": "slow"}
    assert d["order"] == {"fast:0": ["A", "B"], "slow:1": ["C"]}
    back = Solution.from_dict(inst, d)
    assert evaluate(inst, back)[0] == evaluate(inst, sol)[0] == 9
    assert math.isclose(evaluate(inst, back)[1]["energy_j"], 3)
