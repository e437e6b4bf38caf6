"""The right-nested segment DP (``nested``): the optimum of its own space, checked
against every segmentation of small networks, small buffers included."""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from chipsched.errors import InputError
from chipsched.heuristics import tile_groups as H
from chipsched.problems.tile_groups.segments import assemble
from tests.test_tile_groups_full_bound import stressed_instances
from tests.test_tile_groups_methods import OPTS, _close, call, tiny_instances


@settings(max_examples=30, derandomize=True, deadline=None)
@given(st.one_of(tiny_instances(max_layers=5, min_layers=2), stressed_instances(max_layers=4)))
def test_the_nested_dp_is_the_optimum_of_its_space(inst):
    # every segmentation of the network order into the nested method's segments,
    # evaluated whole by the analyzer: the DP (fronts of 64 points, never full here)
    # finds their least objective; each segment of its tree is one of the options
    try:
        out = call(H.nested, inst, OPTS)
    except InputError:  # no segmentation fits: then none of the enumeration's may
        out = None
    options_of = H.nested_segments(inst)
    L = len(inst.workload)
    best = math.inf
    for mask in range(2 ** (L - 1)):
        cuts = [0, *(i + 1 for i in range(L - 1) if mask >> i & 1), L]
        for segs in itertools.product(*(options_of(a, b) for a, b in itertools.pairwise(cuts))):
            v = inst.analyzer.try_objective(assemble(list(segs)))
            if v is not None:
                best = min(best, v)
    if out is None:
        assert best == math.inf
        return
    assert _close(out.objective, best, 1e-9)
    assert _close(out.objective, inst.analyzer.objective(out.solution.tree), 1e-9)
    segs, _, _ = inst.analyzer.segments_of(out.solution.tree)
    assert all(any(seg == o for a in range(L) for b in range(a + 1, L + 1)
                   for o in options_of(a, b)) for seg in segs)
