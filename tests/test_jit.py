"""Compiled kernels off the clock (chipsched.jit): after a decision's warm-up, no run of
any of its methods compiles a numba kernel — so the first run of a method in a process
reports the same time as the second, whatever paths and types it takes."""

from __future__ import annotations

import numba
import pytest
from numba.core import event

from chipsched import jit
from chipsched.api import make_instance, solve
from chipsched.registry import registry

#: (instance spec, chip, objective, method, params): every method with default
#: parameters on three instances, plus the variants whose paths differ
VARIANTS = [
    ("seed004-plus", {"refinement": "greedy", "parts": "per-split",
                      "coarsening": "capacity"}),
    ("seed004-plus", {"place": "tabu", "tabu_variant": "sparse"}),
    ("seed004-plus", {"place": "force", "vcycles": 2}),
    ("tabu", {"variant": "sparse"}),
    ("metis", {"placement": "tabu", "recursive": True}),
    ("kahip", {"placement": "rowmajor", "mode": "fast"}),
]
INSTANCES = [("layered:layers=3,width=30,fanin=4,seed=2", "neuro-3x3-k16", "traffic"),
             ("layered:layers=3,width=30,fanin=4,seed=2", "neuro-3x3-k16", "multicast"),
             ("stencil:nx=12,ny=12", "neuro-4x4-k12", "cut")]


def test_the_recorder_sees_a_compilation():
    # the test below would pass vacuously if compilations were not recorded
    with event.install_recorder("numba:compile") as rec:
        numba.njit(lambda x: x + 1)(1)
    assert rec.buffer


@pytest.mark.parametrize("spec,chip,objective", INSTANCES)
def test_no_run_compiles_a_kernel_after_the_warm_up(spec, chip, objective):
    dec = registry().decision("core_assignment")
    assert dec.warm_ups, "core_assignment's kernels have a warm-up"
    jit.warm_up("core_assignment", dec.warm_ups)
    assert "core_assignment" in jit.warmed()
    inst = make_instance("core_assignment", spec, chip, objective=objective)
    runs = [(m, {}) for m in dec.methods] + VARIANTS
    with event.install_recorder("numba:compile") as rec:
        for name, params in runs:
            m = dec.method(name)
            if m.not_applicable(inst, m.default_params(), "", str) is not None:
                continue
            # the exact models have no kernels of their own: a second is enough for them
            solve("core_assignment", inst, name, time_limit=1, threads=1, **params)
    compiled = sorted({getattr(e.data.get("dispatcher"), "py_func", None).__qualname__
                       for e in rec.buffer if isinstance(e.data, dict)
                       and e.data.get("dispatcher") is not None})
    assert not rec.buffer, compiled
