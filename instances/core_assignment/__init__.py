"""core_assignment instances: building them, named instances, and the DecisionSpec.

``--instance`` (``-i``) accepts:

==========================================  ===============================================
``lenet5-neurons``, ``vgg-cifar-neurons``,  named instances: neuron graphs of LeNet-5
``resnet-cifar-neurons``                    (neuron level), VGG-11-CIFAR (8 channels per
                                            vertex) and ResNet-20-CIFAR (4 channels per
                                            vertex) on an array sized to fit (below)
``layered:layers=L,width=W,fanin=F,…``      :func:`chipsched.neurongraph.layered_random`
``stencil:nx=X,ny=Y,nz=Z,radius=R``         :func:`chipsched.neurongraph.stencil`
``file.json``                               the generic JSON instance (schema:
                                            ``docs/schemas/core_assignment.schema.json``)
                                            — or a network file when it has no ``graph``
``file.graph`` / ``file.metis``             a METIS graph file, on the chip's array
``file.zip``                                a seed-004 zip, on the chip's array
``file.dat``                                a QAPLIB grid QAP (nug*, scr*): one facility
                                            per core, the grid read from the distances
a network name or file (``lenet5``, …)      its neuron graph (``channels_per_vertex``,
                                            default 1) on the chip's array
==========================================  ===============================================

Arrays "sized to fit" (named instances and generators): the smallest near-square mesh
with at least ``⌈2 · total size / capacity⌉`` cores — the factor 2 because seed 004's
recursive bisection halves by vertex count and can produce up to twice the minimum
number of parts; the capacity comes from the chip (default ``neuro-8x8``: 256). The
chip also gives the NoC energy per bit and hop.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError, UnknownNameError
from chipsched.hardware import Hardware
from chipsched.instances.core_assignment.formats import (
    JSON_SCHEMA,
    SeedZipReader,
    SeedZipWriter,
    metis_to_zip,
    parse_json,
    read_json,
    read_metis,
    read_qaplib,
    read_qaplib_solution,
    read_zip,
    write_json,
    write_metis,
    write_zip,
    zip_to_metis,
)
from chipsched.neurongraph import (
    NeuronGraph,
    from_workload,
    layered_random,
    spike_weighted,
    stencil,
)
from chipsched.problems.core_assignment import (
    Instance,
    Solution,
    evaluate,
    fit_mesh,
    make_instance,
)
from chipsched.workload import Workload

__all__ = [
    "JSON_SCHEMA", "NAMED", "SeedZipReader", "SeedZipWriter", "fit_mesh",
    "load_instance", "metis_to_zip", "named_instance", "parse_json", "qaplib_solution",
    "read_json", "read_metis", "read_qaplib", "read_qaplib_solution", "read_zip", "render",
    "write_json", "write_metis", "write_zip", "zip_to_metis",
]

#: name → (network, channels per vertex, include input neurons)
NAMED: dict[str, tuple[str, int, bool]] = {
    "lenet5-neurons": ("lenet5", 1, True),
    "vgg-cifar-neurons": ("vgg11-cifar", 8, True),
    "resnet-cifar-neurons": ("resnet20-cifar", 4, True),
}

GENERATORS = {"layered": layered_random, "stencil": stencil}


def _parse_params(name: str, text: str, allowed: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in filter(None, text.split(",")):
        k, eq, v = item.partition("=")
        k = k.strip()
        if not eq or k not in allowed:
            raise InputError(f"instance {name}: parameter {k!r}",
                             "unknown" if eq else "needs a value (k=v)",
                             f"parameters: {', '.join(allowed)}")
        try:
            out[k] = int(v)
        except ValueError:
            raise InputError(f"instance {name}: parameter {k!r}",
                             f"must be an integer, got {v!r}") from None
    return out


def named_instance(name: str, hw: Hardware, objective: str | None = None) -> Instance:
    """A named instance (``NAMED``) on an array sized to fit with the chip's capacity."""
    from chipsched.instances.networks import get_network

    net, g, inp = NAMED[name]
    w = get_network(net)
    graph = from_workload(w, channels_per_vertex=g, include_input=inp, name=name)
    return make_instance(graph, hw, objective=objective, sized_to_fit=True,
                         weight_bytes=float(w.precision_bytes), network=net,
                         channels_per_vertex=g)


def load_instance(spec: Any, hw: Hardware, objective: str | None = None,
                  channels_per_vertex: int = 1, include_input: bool = True,
                  batch: int | None = None) -> Instance:
    """Resolve ``--instance`` (see the module docstring) into an :class:`Instance`."""
    if batch not in (None, 1):
        raise InputError("--batch", "does not apply to core_assignment",
                         "a neuron graph is per inference")
    if isinstance(spec, (Instance, NeuronGraph, Workload)):
        return make_instance(spec, hw, objective=objective,
                             channels_per_vertex=channels_per_vertex,
                             include_input=include_input)
    s = str(spec)
    suffix = Path(s).suffix.lower()
    if suffix == ".json" and Path(s).is_file():
        from chipsched.files import read_data

        data = read_data(s)
        if isinstance(data, dict) and "graph" in data:
            d = parse_json(data, s)
            graph, spikes = d["graph"], d.get("spikes")
            if spikes is not None:
                graph = spike_weighted(graph, spikes)
            return Instance(name=d["name"], graph=graph, hardware=hw, rows=d["rows"],
                            cols=d["cols"], capacity=d["capacity"],
                            objective=objective or d.get("objective", "traffic"),
                            weight_bytes=float(d.get("weight_bytes", 1.0)), spikes=spikes,
                            meta={"source": s, "chip": hw.name})
    if suffix in (".graph", ".metis"):
        return make_instance(read_metis(s), hw, objective=objective, file=s)
    if suffix == ".zip":
        return make_instance(read_zip(s), hw, objective=objective, file=s)
    if suffix == ".dat":
        d = read_qaplib(s)
        return Instance(name=d["name"], graph=d["graph"], hardware=hw, rows=d["rows"],
                        cols=d["cols"], capacity=1, objective=objective or "traffic",
                        meta={"source": s, "qaplib_distance": d["distance"], "chip": hw.name})
    key = s.strip().lower()
    if key in NAMED:
        return named_instance(key, hw, objective)
    gen, _, params = key.partition(":")
    if gen in GENERATORS:
        import inspect

        fn = GENERATORS[gen]
        allowed = {p.name: p.default for p in inspect.signature(fn).parameters.values()
                   if p.name != "name"}
        kwargs = _parse_params(gen, params, allowed)
        if gen == "stencil" and not {"nx", "ny"} <= set(kwargs):
            raise InputError("instance stencil", "needs nx and ny", "e.g. stencil:nx=64,ny=64")
        return make_instance(fn(**kwargs, name=s), hw, objective=objective, sized_to_fit=True)
    from chipsched.instances.networks import get_network

    try:
        w = get_network(s)
    except UnknownNameError as exc:
        raise UnknownNameError("core_assignment instance", s,
                               [*NAMED, *GENERATORS, *exc.known]) from None
    return make_instance(w, hw, objective=objective, channels_per_vertex=channels_per_vertex,
                         include_input=include_input)


def qaplib_solution(instance: Instance, sln_path: str | os.PathLike[str]) -> tuple[Solution,
                                                                                   int]:
    """The stored QAPLIB permutation as a :class:`Solution` of a ``.dat`` instance, with
    the stored optimum. QAPLIB stores p with objective Σ a_ij·b_p(i)p(j); depending on
    the file, p maps locations to facilities or the reverse (QAPLIB's own notes):
    both readings are evaluated and the one that reproduces the optimum is returned
    (if neither does, the first reading, so that the caller sees the mismatch)."""
    n, opt, perm = read_qaplib_solution(sln_path)
    if n != instance.n:
        raise InputError(str(sln_path), f"solution for n = {n}, the instance has {instance.n}")
    inv = np.empty_like(perm)
    inv[perm] = np.arange(n)
    candidates = [Solution(perm), Solution(inv)]
    for sol in candidates:
        if evaluate(instance.with_objective("traffic"), sol)[0] == opt:
            return sol, opt
    return candidates[0], opt


def render(instance: Instance, result: Any, plot: str | os.PathLike[str] | None = None
           ) -> Any:
    """Rich renderable for ``chipsched solve``: key metrics and the core-load map; with
    ``plot`` (``--plot``) the mesh heat map of core loads and traffic drawn there."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    m = result.metrics
    t = Table(title=f"{instance.name}: {instance.n:,} vertices, {instance.graph.m:,} edges "
                    f"on {instance.rows}×{instance.cols} cores of {instance.capacity}",
              title_justify="left")
    for col in ("cut weight", "traffic (w·hops)", "multicast (packet·hops)", "NoC energy",
                "max link", "cores used", "max load"):
        t.add_column(col, justify="right")
    t.add_row(f"{m.get('cut_weight', 0):,}", f"{m.get('traffic', 0):,}",
              f"{m.get('multicast_traffic', 0):,}",
              f"{m.get('noc_energy_j', 0):.4g} J", f"{m.get('max_link_bytes', 0):.4g} B",
              f"{m.get('cores_used', 0)}", f"{m.get('max_core_load', 0)}/{instance.capacity}")
    parts: list[Any] = [t]
    if instance.cols <= 48 and instance.rows <= 48 and result.solution is not None:
        from chipsched.problems.core_assignment import core_loads

        loads = core_loads(instance, result.solution)
        shades = " ░▒▓█"
        lines = ["core load (each cell one core; ' ' empty … '█' full):"]
        for r in range(instance.rows):
            lines.append("".join(
                shades[min(4, int(np.ceil(4 * loads[r, c] / instance.capacity)))] * 2
                for c in range(instance.cols)))
        parts.append(Text("\n".join(lines)))
    if plot is not None and result.solution is not None:
        from chipsched.plots.core_assignment import plot_mesh_heatmap

        plot_mesh_heatmap(instance, result.solution, plot)
        parts.append(Text(f"heat map drawn in {plot}"))
    return Group(*parts)


#: the quick heuristics whose best mapping warm-starts the exact methods (CP-SAT, MILP,
#: branch and bound) when no warm start is given (``SolveOptions.auto_warm_start``)
WARM_START_FROM = ("seed004-plus", "seed004")


def warm_up_kernels() -> None:
    """Compile (or load from numba's cache) the kernels of this decision's readers and
    writers, with the types files give them: a seed-004 zip written from a graph in
    memory and from the layered generator, read back whole and row by row, and a
    graph's checks (``NeuronGraph.validate``). Instance loading is not on a method's
    clock, but a first run in a fresh install would compile them (``chipsched.jit``)."""
    import tempfile

    from chipsched.instances.core_assignment.ondisk import write_layered_zip

    g = layered_random(3, 20, 4, seed=1, name="warm-up")
    g.validate()
    with tempfile.TemporaryDirectory(prefix="chipsched-warm-up-") as d:
        read_zip(write_zip(Path(d) / "g.zip", g, batch=16))
        with SeedZipReader(write_layered_zip(Path(d) / "l.zip", 3, 20, 4, batch=16)) as r:
            r.load(check_symmetry=True)
            r.read_rows(np.arange(r.n)[::-1])
