"""Shared test helpers: small random workloads and DAGs."""

from __future__ import annotations

import os

# Two pytest workers share two cores; a BLAS pool of two threads in each made the DNN
# bound's small eigendecompositions spin against each other (the bounds tests ran 50×
# slower in the suite than alone). The workers inherit this from the controller, which
# loads this file before it starts them.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import hypothesis.strategies as st  # noqa: E402 (after the thread limits)
from hypothesis import settings  # noqa: E402

from chipsched.workload import Layer, OpKind, Workload  # noqa: E402

settings.register_profile("chipsched", deadline=None, max_examples=60)
settings.load_profile("chipsched")


@st.composite
def random_dags(draw, min_nodes: int = 1, max_nodes: int = 12) -> Workload:
    """A random DAG workload: layers in topological order, random forward edges."""
    n = draw(st.integers(min_nodes, max_nodes))
    preds: list[list[int]] = [[] for _ in range(n)]
    for d in range(1, n):
        for s in range(d):
            if draw(st.booleans()) and draw(st.booleans()):
                preds[d].append(s)
    layers: list[Layer] = []
    for i in range(n):
        k = draw(st.integers(1, 64))
        # a convolution reads what its inputs deliver: their channels, concatenated
        c = sum(layers[s].K for s in preds[i]) if preds[i] else draw(st.integers(1, 64))
        h = draw(st.integers(1, 16))
        layers.append(Layer(f"l{i}", OpKind.CONV, K=k, C=c, H=h, W=h, R=3, S=3,
                            in_elems=c * h * h, weight_elems=k * c * 9))
    edges = [(s, d, layers[s].out_elems) for d in range(n) for s in preds[d]]
    return Workload("random", tuple(layers), tuple(sorted(edges)))


def chain_workload(n: int, k: int = 8) -> Workload:
    layers = tuple(Layer(f"l{i}", OpKind.CONV, K=k, C=k, H=4, W=4, R=3, S=3, in_elems=k * 16,
                         weight_elems=k * k * 9) for i in range(n))
    edges = tuple((i, i + 1, k * 16) for i in range(n - 1))
    return Workload("chain", layers, edges)


#: Test files that take longest (``pytest --durations=0``, summed per file, 2026-11-28),
#: longest first. ``make test`` hands whole files to two workers (``--dist loadfile``)
#: in collection order; starting with these leaves short files for the end, so both
#: workers finish together (by default pytest-xdist sends files with the most tests
#: first, which left a 30-second file with three tests running alone at the end). A
#: stale list costs only balance, never a test.
LONGEST_FIRST = (
    "test_op_placement_methods.py", "test_tile_groups_methods.py", "test_jit.py",
    "test_library.py", "test_cli.py", "test_conformance.py", "test_core_assignment_exact.py",
    "test_region_split_exact.py", "test_demo.py", "test_tile_groups_full_bound.py",
    "test_region_split_ideals.py", "test_core_assignment_bounds.py", "test_bench.py",
    "test_op_placement_seed003.py", "test_op_placement_windows.py", "test_bad_input.py",
    "test_solvers.py", "test_core_assignment_scotch.py",
)


def pytest_collection_modifyitems(session, config, items) -> None:  # noqa: ARG001
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable
