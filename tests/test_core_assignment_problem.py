"""The core_assignment evaluator on hand-computed numbers, and instance/solution checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipsched.errors import InputError
from chipsched.instances.chips import get_chip
from chipsched.neurongraph import NeuronGraph
from chipsched.problems.core_assignment import Instance, Solution, core_loads, evaluate, link_loads

HW = get_chip("neuro-8x8")  # NoC: 0.7 pJ/bit/hop


def _square() -> Instance:
    g = NeuronGraph.from_edges([1, 1, 1, 1], [0, 0, 1, 2], [1, 2, 3, 3], [3, 2, 5, 1])
    return Instance("sq", g, HW, rows=2, cols=2, capacity=2, weight_bytes=2.0)


def test_evaluator_by_hand():
    inst = _square()
    sol = Solution(np.array([0, 0, 1, 3]))
    obj, m = evaluate(inst, sol)
    # (0,1) on one core; (0,2) 1 hop ×2; (1,3) 2 hops ×5; (2,3) 1 hop ×1
    assert m["cut_weight"] == 8 and m["traffic"] == 13 and obj == 13.0
    assert m["byte_hops"] == 26.0
    assert m["noc_energy_j"] == pytest.approx(26 * 8 * 0.7e-12, rel=1e-12)
    # XY: east (0,0)->(0,1) carries edges (0,2) and (1,3): (2+5)·2 bytes; south
    # (0,1)->(1,1) carries (1,3) and (2,3): (5+1)·2 bytes
    links = link_loads(inst, sol)
    assert links.east[0, 0] == 14 and links.south[0, 1] == 12 and links.west.sum() == 0
    assert m["max_link_bytes"] == 14 and m["busiest_link"] == {"from": [0, 0], "to": [0, 1],
                                                               "bytes": 14.0}
    assert m["cores_used"] == 3 and m["max_core_load"] == 2 and m["mean_hops"] == 13 / 8
    assert core_loads(inst, sol).tolist() == [[2, 1], [0, 1]]
    assert evaluate(inst.with_objective("cut"), sol)[0] == 8.0
    assert evaluate(inst.with_objective("energy"), sol)[0] == m["noc_energy_j"]


def test_multicast_counts_one_packet_per_destination_core():
    """Neuron 0 feeds 1 and 2 (on core 3, 2 hops) and 3 (core 1, 1 hop); 1 feeds 3 (1
    hop). Per synapse: 1·2 + 2·2 + 1·1 + 5·1 = 12 w·hop over 9 synapses; multicast: 0
    sends one packet to core 3 and one to core 1, 1 one to core 1: 3 packets, 4 hops."""
    g = NeuronGraph.from_edges([1, 1, 1, 1], [0, 0, 0, 1], [1, 2, 3, 3], [1, 2, 1, 5])
    inst = Instance("mc", g, HW, rows=2, cols=2, capacity=2)
    obj, m = evaluate(inst, [0, 3, 3, 1])
    assert (m["traffic"], m["cut_weight"]) == (12, 9) and obj == 12.0
    assert (m["multicast_packets"], m["multicast_traffic"]) == (3, 4)
    # everything on one core: nothing leaves
    one = Instance("mc1", g, HW, rows=1, cols=1, capacity=4)
    assert evaluate(one, [0, 0, 0, 0])[1]["multicast_traffic"] == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30), st.integers(0, 2**31 - 1))
def test_multicast_never_exceeds_the_synapse_count(n, seed):
    """Packets ≤ synapses leaving a core (a packet serves ≥ 1 synapse, weights ≥ 1), and
    multicast traffic ≤ per-synapse traffic; equal when every weight is 1 and no neuron
    has two targets on one core."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 3 * n))
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    g = NeuronGraph.from_edges(np.ones(n, dtype=np.int64), u, v, rng.integers(1, 4, m))
    inst = Instance("r", g, HW, rows=3, cols=4, capacity=max(1, -(-n // 12)))
    core = rng.permutation(np.repeat(np.arange(12), inst.capacity))[:n]
    _, met = evaluate(inst, core)
    assert met["multicast_packets"] <= met["cut_weight"]
    assert met["multicast_traffic"] <= met["traffic"]
    if np.all(g.weights == 1):
        pairs = {(min(a, b), core[max(a, b)]) for a, b in zip(u, v, strict=True) if a != b
                 and core[a] != core[b]}
        assert met["multicast_packets"] == len(pairs)


def test_direction_convention_u_to_v():
    g = NeuronGraph.from_edges([1, 1], [1], [0], [4])  # stored either way: flows 0 -> 1
    inst = Instance("d", g, HW, 1, 2, 1)
    assert link_loads(inst, [0, 1]).east[0, 0] == 4
    assert link_loads(inst, [1, 0]).west[0, 0] == 4


def test_infeasible_solutions_are_rejected():
    inst = _square()
    with pytest.raises(InputError, match=r"core 0 \(0, 0\).*holds 3 neurons, over its "
                                         r"capacity 2"):
        evaluate(inst, [0, 0, 0, 1])
    with pytest.raises(InputError, match=r"solution.core\[2\].*not on the 2×2 array"):
        evaluate(inst, [0, 1, 7, 2])
    with pytest.raises(InputError, match="has 3 entries"):
        evaluate(inst, [0, 1, 2])


def test_instance_errors_name_the_problem_and_the_fix():
    g = NeuronGraph.from_edges([3, 1], [0], [1], [1])
    with pytest.raises(InputError, match=r"sizes\[0\].*vertex 0 has 3 neurons, more than a "
                                         r"core's capacity 2.*neuro-RxC-kCAP") as e:
        Instance("x", g, HW, 2, 2, 2)
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match=r"total size 4 exceeds the array's 1×1×3"):
        Instance("x", g, HW, 1, 1, 3)
    with pytest.raises(InputError, match="unknown objective"):
        Instance("x", g, HW, 2, 2, 4, objective="latency")


def test_forced_partition_and_groups():
    g = NeuronGraph.from_edges([2, 2, 3], [0], [1], [1])
    assert Instance("f", g, HW, 2, 2, 3).forced_partition is True  # 2 + 2 > 3
    assert Instance("f", g, HW, 2, 2, 4).forced_partition is False
    group, cores = Solution(np.array([3, 1, 3])).groups()
    assert group.tolist() == [0, 1, 0] and cores.tolist() == [3, 1]


def test_core_ids_must_be_whole_numbers():
    """Review finding: float core ids were truncated silently (0.9 → core 0)."""
    from chipsched.problems.core_assignment import Solution

    with pytest.raises(InputError, match=r"solution.core\[0\]: 0.9 is not a core id"):
        Solution(np.array([0.9, 1.7]))
    assert Solution(np.array([0.0, 1.0])).core.tolist() == [0, 1]


def test_integer_bounds_snap_to_the_nearest_integer_within_tolerance():
    """Review finding: ceil(bound − 1e-6·|bound|) weakened a bound of 10⁷ to 9,999,990;
    a bound within the solver's tolerance of an integer is that integer, else its
    ceiling."""
    from chipsched.formulations.core_assignment import _round_bound
    from chipsched.problems.core_assignment import Instance as CI

    g = NeuronGraph.from_edges([1, 1], [0], [1], [3])
    inst = CI("b", g, get_chip("neuro-2x2"), 1, 2, 4)
    assert _round_bound(inst, 1e7) == 1e7
    assert _round_bound(inst, 1e7 + 1e-3) == 1e7 and _round_bound(inst, 99.9999999) == 100
    assert _round_bound(inst, 100.4) == 101 and _round_bound(inst, 0.0) == 0
