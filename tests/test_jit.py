"""Compiled kernels off the clock (chipsched.jit): after the warm-up, no run of any
method needs a numba kernel signature the warm-up did not compile or load — so the
first run of a method reports the same time as the second, whatever paths and types it
takes. Checked in a fresh process (a kernel another test loaded earlier would hide a
gap), by the dispatchers' signatures, which grow whether a signature is compiled or
loaded from numba's disk cache (so the check does not depend on the cache's state)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numba
from numba.core import event

#: (decision, instance spec, chip, instance options): the instances the fresh process runs
#: every method of the decision on (plus the path variants of ``VARIANTS``)
INSTANCES = [
    ("core_assignment", "layered:layers=3,width=30,fanin=4,seed=2", "neuro-3x3-k16",
     {"objective": "traffic"}),
    ("core_assignment", "layered:layers=3,width=30,fanin=4,seed=2", "neuro-3x3-k16",
     {"objective": "multicast"}),
    ("core_assignment", "stencil:nx=12,ny=12", "neuro-4x4-k12", {"objective": "cut"}),
    # a network's neuron graph, as the library's are built
    ("core_assignment", "lenet5", "neuro-8x8", {"channels_per_vertex": 8}),
    ("region_split", "tiny", "chiplet-2x2", {}),
    ("region_split", "tiny", "soc-npu-gpu-cpu", {}),
    ("tile_groups", "tiny-chain", "tiled-2x2", {"batch": 2}),
    ("op_placement", "random:n=8,p=3,seed=1", "soc-npu-gpu-cpu", {}),
]
VARIANTS = {
    "core_assignment": [
        ("seed004-plus", {"refinement": "greedy", "parts": "per-split",
                          "coarsening": "capacity"}),
        ("seed004-plus", {"place": "tabu", "tabu_variant": "sparse"}),
        ("seed004-plus", {"place": "force", "vcycles": 2}),
        ("seed004-plus", {"place": "swaps"}),
        ("tabu", {"variant": "sparse"}),
        ("metis", {"placement": "tabu", "recursive": True}),
        ("kahip", {"placement": "rowmajor", "mode": "fast"}),
    ],
    "region_split": [("dp", {"placement": "bnb"}), ("seed000", {"placement": "cpsat"})],
}

SCRIPT = textwrap.dedent("""
    import json, sys
    import chipsched
    from chipsched import jit
    from chipsched.api import make_instance, registry, solve
    cases, variants = json.loads(sys.argv[1])
    chipsched.warm_up()

    def signatures():
        return {k: set(map(str, d.signatures)) for k, d in jit.dispatchers().items()}

    added = []
    for decision, spec, chip, opts in cases:
        inst = make_instance(decision, spec, chip, **opts)
        dec = registry().decision(decision)
        runs = [(m, {}) for m in dec.methods] + [tuple(v) for v in variants.get(decision, [])]
        for name, params in runs:
            m = dec.method(name)
            if m.not_applicable(inst, m.default_params(), dec.problem.platform(inst),
                                dec.problem.describe_platform) is not None:
                continue
            before = signatures()
            # a fraction of a second reaches every kernel path: exact models have no
            # kernels of their own (their warm starts are the heuristics, run here on
            # their own too), and the heuristics' first pass calls all of theirs
            # (measured without the warm-up: 0.3 s and 1 s compile the same 50
            # signatures)
            limit = 0.3
            try:
                solve(decision, inst, name, time_limit=limit, threads=1, **params)
            except chipsched.InputError:
                continue
            # a signature a run added — compiled, or loaded from numba's disk cache — is
            # one the warm-up missed: on a fresh install it compiles on the run's clock
            for k, sigs in signatures().items():
                for sig in sigs - before.get(k, set()):
                    added.append(f"{decision}/{name}: {k}{sig}")
    print(json.dumps(sorted(set(added))))
""")


def test_the_recorder_sees_a_compilation():
    # the test below would pass vacuously if compilations were not recorded
    with event.install_recorder("numba:compile") as rec:
        numba.njit(lambda x: x + 1)(1)
    assert rec.buffer


def test_no_run_compiles_a_kernel_after_the_warm_up():
    arg = json.dumps([INSTANCES, VARIANTS])
    out = subprocess.run([sys.executable, "-c", SCRIPT, arg], capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    added = json.loads(out.stdout.strip().splitlines()[-1])
    assert not added, added


FILES_SCRIPT = textwrap.dedent("""
    import json, sys, tempfile
    from pathlib import Path
    import numpy as np
    import chipsched
    from chipsched import jit
    from chipsched.instances.chips import get_chip
    from chipsched.heuristics.core_assignment.streaming import seed004_zip
    from chipsched.instances.core_assignment import SeedZipReader, read_zip, write_zip
    from chipsched.instances.core_assignment.ondisk import ZIP_STORE, write_layered_zip
    from chipsched.problems.core_assignment import Solution, evaluate, make_instance
    chipsched.warm_up(["core_assignment"])
    before = {k: set(map(str, d.signatures)) for k, d in jit.dispatchers().items()}
    with tempfile.TemporaryDirectory() as d:
        hw = get_chip("neuro-4x4-k16")
        zp = write_layered_zip(Path(d) / "l.zip", 4, 50, 5, max_weight=3, seed=3, batch=40)
        for objective in ("traffic", "multicast"):
            seed004_zip(zp, hw, *ZIP_STORE, objective=objective, seed=1)
        g = read_zip(write_zip(Path(d) / "g.zip", read_zip(zp), batch=64))
        with SeedZipReader(zp) as r:
            r.read_rows(np.arange(r.n)[::-3])
        inst = make_instance(g, hw, objective="multicast",
                             spikes=np.arange(g.n) % 3)
        evaluate(inst, Solution(np.arange(g.n) % inst.n_cores))
    added = [f"{k}{s}" for k, d in jit.dispatchers().items()
             for s in set(map(str, d.signatures)) - before.get(k, set())]
    print(json.dumps(sorted(added)))
""")


def test_no_file_reader_or_on_disk_step_compiles_after_the_warm_up():
    # files are read before a run's clock starts, but a first read in a fresh install
    # would compile there (and the out-of-core pipeline is called from the API)
    out = subprocess.run([sys.executable, "-c", FILES_SCRIPT], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    added = json.loads(out.stdout.strip().splitlines()[-1])
    assert not added, added
