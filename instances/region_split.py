"""region_split instances: reading specs and files, generators, rendering.

``load_instance(spec, chip, **options)`` takes a library network name or a network
file (``chipsched.instances.networks.get_network``), a ``Workload``, a ready instance,
or a region_split instance file — YAML/JSON with a top-level ``region_split:`` section::

    region_split:
      network: resnet50          # a library name or a network file (relative to this file)
      objective: period          # cost | period | latency | sync_latency
      batch: 1
      max_regions: 8
      items: groups              # chiplet grids: groups (seed 000's S) or layers
      chain: [npu, gpu, cpu]     # processor chains: processors in chain order
      thresholds: [0.002, 0.002] # seed 001's thresholds 1, 2 (s)
      loads: [0.0, 0.5, 0.0]     # background load per chain processor
      buffers: 3                 # shared frame buffers (default: one per sub-model)
      trace: {times: [0, 0.5], loads: [[0, 0, 0], [0, 0.6, 0]]}

The chip (``--chip``, default ``chiplet-4x4``) decides the platform: a chiplet or tiled
grid gives a seed-000 instance, a SoC with processors a seed-001 instance.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.files import read_data
from chipsched.hardware import Hardware
from chipsched.instances.networks import get_network
from chipsched.problems.region_split import (
    CHIPLET_OPTIONS,
    SOC_OPTIONS,
    ChipletInstance,
    Instance,
    LoadTrace,
    SocInstance,
    describe_regions,
    evaluate,
    make_instance,
    serpentine_placement,
)
from chipsched.workload import Layer, OpKind, Workload

FILE_KEYS = set(CHIPLET_OPTIONS + SOC_OPTIONS) - {"transfer"} | {"network"}


def read_instance_file(path: str | os.PathLike[str]) -> tuple[Workload, dict[str, Any]] | None:
    """A region_split instance file → (workload, options); None if ``path`` is not one
    (e.g. a plain network file)."""
    p = Path(path)
    if p.suffix.lower() not in (".yaml", ".yml", ".json"):
        return None
    data = read_data(p)
    if not isinstance(data, Mapping) or "region_split" not in data:
        return None
    sec = data["region_split"]
    where = f"{p}: region_split"
    if not isinstance(sec, Mapping):
        raise InputError(where, "must be a mapping of options")
    unknown = set(sec) - FILE_KEYS
    if unknown:
        raise InputError(f"{where}.{sorted(unknown)[0]}", "unknown key",
                         f"known: {', '.join(sorted(FILE_KEYS))}")
    if "network" not in sec:
        raise InputError(f"{where}.network", "is required", "a library name or network file")
    net = str(sec["network"])
    if Path(net).suffix and not Path(net).is_absolute():
        cand = p.parent / net
        net = str(cand) if cand.exists() else net
    opts = {k: v for k, v in sec.items() if k != "network"}
    if "trace" in opts and opts["trace"] is not None:
        tr = opts["trace"]
        opts["trace"] = LoadTrace.from_dict(dict(tr) if isinstance(tr, Mapping) else tr,
                                            f"{where}.trace")
    return get_network(net), opts


def load_instance(spec: Any, hardware: Hardware, **options: Any) -> Instance:
    """Build a region_split instance from ``--instance``.

    ``spec``: a library network name (``name[:k=v]``), a network or instance file, a
    ``Workload``, or an instance (returned unchanged when no options are given).
    Options given here override those of an instance file.
    """
    if isinstance(spec, (ChipletInstance, SocInstance, Workload)):
        return make_instance(spec, hardware, **options)
    got = read_instance_file(spec) if isinstance(spec, (str, os.PathLike)) else None
    if got is None:
        return make_instance(get_network(spec), hardware, **options)
    workload, file_opts = got
    return make_instance(workload, hardware, **{**file_opts, **options})


# ---------------------------------------------------------------------------------------
# Generators (tests, benchmarks)


def random_chain(n: int, seed: int, max_channels: int = 64, max_size: int = 16) -> Workload:
    """A chain of n conv layers with random shapes (layer i feeds layer i+1)."""
    return random_dag(n, seed, edge_prob=0.0, max_channels=max_channels, max_size=max_size,
                      name="random-chain")


def random_dag(n: int, seed: int, edge_prob: float = 0.3, max_channels: int = 64,
               max_size: int = 16, name: str = "random-dag", backbone: bool = True
               ) -> Workload:
    """A random DAG of n layers in topological order.

    With ``backbone`` every layer after the first reads its predecessor (so the group
    graph has a backbone and the layer order is the only topological order); without,
    it reads one random earlier layer (branches: many topological orders). Each other
    forward pair (s, d) gets an extra edge with probability ``edge_prob``. Layers are
    convs (random K, C, H = W, 1×1 or 3×3) and now and then an fc or pool, so both
    systolic branches occur.
    """
    if n < 1:
        raise InputError("n", f"must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    layers = []
    for i in range(n):
        k = int(rng.integers(1, max_channels + 1))
        c = int(rng.integers(1, max_channels + 1))
        h = int(rng.integers(1, max_size + 1))
        kind = rng.choice(["conv", "conv", "conv", "fc", "pool"])
        if kind == "fc":
            layers.append(Layer(f"l{i}", OpKind.FC, K=k, C=c, in_elems=c, weight_elems=k * c))
        elif kind == "pool":
            layers.append(Layer(f"l{i}", OpKind.POOL, K=c, C=c, H=h, W=h, R=2, S=2,
                                in_elems=4 * c * h * h, ops=4 * c * h * h))
        else:
            r = int(rng.choice([1, 3]))
            layers.append(Layer(f"l{i}", OpKind.CONV, K=k, C=c, H=h, W=h, R=r, S=r,
                                in_elems=c * h * h, weight_elems=k * c * r * r))
    edges = []
    for d in range(1, n):
        first = d - 1 if backbone else int(rng.integers(0, d))
        for s in range(d):
            if s == first or rng.random() < edge_prob:
                edges.append((s, d, layers[s].out_elems))
    return Workload(name, tuple(layers), tuple(edges))


def step_trace(before: Sequence[float], after: Sequence[float], switch_s: float) -> LoadTrace:
    """Loads ``before`` until ``switch_s`` seconds, then ``after``."""
    return LoadTrace(np.array([0.0, float(switch_s)]), np.array([list(before), list(after)]))


def phase_trace(loads: Sequence[Sequence[float]], phase_s: float) -> LoadTrace:
    """Phases of equal length ``phase_s`` with the given loads (one row per phase)."""
    rows = np.asarray(loads, dtype=float)
    return LoadTrace(np.arange(len(rows)) * float(phase_s), rows)


# ---------------------------------------------------------------------------------------
# Rendering for `chipsched solve`


def _fmt_s(x: float) -> str:
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(x) >= scale:
            return f"{x / scale:.4g} {unit}"
    return f"{x:.3g} s"


def grid_picture(rows: int, cols: int, placement: Sequence[Sequence[int]]) -> str:
    """The grid as text: each sub-chiplet shows its region number (· = unused)."""
    cell = {v: r for r, nodes in enumerate(placement) for v in nodes}
    width = max(2, len(str(len(placement) - 1)) + 1)
    lines = []
    for r in range(rows):
        lines.append(" ".join(f"{cell[r * cols + c]:>{width}}" if r * cols + c in cell
                              else f"{'·':>{width}}" for c in range(cols)))
    return "\n".join(lines)


def placement_label(inst: ChipletInstance, sol: Any, stats: Mapping[str, Any] | None) -> str:
    """Which placement ``sol`` carries, for the grid header: ``serpentine``, ``exact
    bnb-place, optimal``, ``bnb-place best found, gap 12.3 %`` (``stats``: the
    ``placement`` stats of an exact placement run), or ``given`` for any other."""
    if stats:
        m = stats["method"]
        if stats.get("proven"):
            return f"exact {m}, optimal"
        gap = stats.get("gap")
        gap_s = "no bound" if gap is None else f"gap {100 * gap:.1f} %"
        if not stats.get("improved"):
            return f"serpentine, {m} found nothing better ({stats['status']}, {gap_s})"
        return f"{m} best found ({stats['status']}), {gap_s}"
    h = inst.hardware
    if not sol.placement or tuple(sol.placement) == serpentine_placement(h.rows, h.cols,
                                                                         sol.counts):
        return "serpentine"
    return "given"


def render(inst: Instance, result: Any, plot: str | os.PathLike[str] | None = None) -> Any:
    """Regions, their resources and stage times, and the grid placement; with ``plot``
    (``--plot``, chiplet instances) the placement drawn there."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    sol = result.solution
    _, met = evaluate(inst, sol)
    desc = describe_regions(inst, sol)
    t = Table(title=f"regions ({inst.objective.name}; period {_fmt_s(met['period_s'])}, "
                    f"{met['throughput_fps']:.4g} frames/s)", title_justify="left")
    unit = "items" if isinstance(inst, ChipletInstance) else "range"
    cols = ["#", unit, "layers", "first → last"]
    cols += (["chiplets", "D", "C", "T"]
             if isinstance(inst, ChipletInstance) else ["processor", "compute", "handover"])
    cols.append("stage")
    for c in cols:
        t.add_column(c, justify="left" if c in ("first → last", "processor") else "right",
                     no_wrap=c != "first → last")
    for r, d in enumerate(desc):
        row = [str(r), f"{d['items'][0]}..{d['items'][1]}", str(d["layers"]),
               d["first"] if d["first"] == d["last"] else f"{d['first']} → {d['last']}"]
        if isinstance(inst, ChipletInstance):
            row += [str(sol.counts[r]), _fmt_s(met["compute_s"][r]),
                    _fmt_s(met["transfer_within_s"][r]), _fmt_s(met["transfer_out_s"][r])]
        else:
            row += [met["processors"][r], _fmt_s(met["compute_s"][r]),
                    _fmt_s(met["handover_s"][r])]
        row.append(_fmt_s(met["stage_s"][r]))
        t.add_row(*row)
    summary = Text(f"cost Σ {_fmt_s(met['cost_s'])} · period {_fmt_s(met['period_s'])} · "
                   f"latency Σ stages {_fmt_s(met['latency_s'])} · sync_latency R·period "
                   f"{_fmt_s(met['sync_latency_s'])}")
    if getattr(sol, "order", ()):
        summary.append("\nitems = positions in the solution's own topological order "
                       "(the regions are convex sets of the item DAG)")
    if isinstance(inst, ChipletInstance):
        summary.append("\nchiplets = sub-chiplets of the region; stage = D (compute) + C "
                       "(transfer inside, f(M, d, N)) + T (send to later regions, t3)")
    if isinstance(inst, ChipletInstance):
        h = inst.hardware
        how = placement_label(inst, sol, result.metrics.get("solver", {}).get("placement"))
        head = Text(f"placement on the {h.rows}×{h.cols} grid ({how}; region number "
                    f"per sub-chiplet, · unused; {sum(sol.counts)}/{inst.chiplets} used, "
                    f"die-to-die {met['d2d_byte_hops'] / 1e6:.4g} MB·hops):")
        pic = Text(grid_picture(h.rows, h.cols, sol.placement), no_wrap=True)
        if plot is None:  # (the grid stays the last lines: scripts read it)
            return Group(t, summary, Text("draw the placement with --plot FILE.png",
                                          style="dim"), head, pic)
        from chipsched.plots.region_split import plot_placement

        labels = [d["first"] if d["first"] == d["last"] else f"{d['first']} → {d['last']}"
                  for d in desc]
        plot_placement(h.rows, h.cols, sol.placement, plot, labels=labels,
                       title=f"{inst.name}: {result.method}, period "
                             f"{_fmt_s(met['period_s'])}, die-to-die "
                             f"{met['d2d_byte_hops'] / 1e6:.4g} MB·hops")
        return Group(t, summary, Text(f"placement drawn in {plot}"), head, pic)
    loads = ", ".join(f"{inst.proc_name(p)} {inst.loads[p]:.2f}" for p in range(inst.n_procs))
    if plot is not None:
        raise InputError("--plot", "a SoC split has no grid to draw",
                         "leave --plot out for SoC instances")
    return Group(t, summary, Text(f"background loads: {loads}"))
