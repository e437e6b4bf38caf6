"""Op-placement instances: from networks (seed 003's expansion), files, names, generators.

``load_instance(spec, hardware, **options)`` resolves ``--instance``:

==================================  ==================================================
spec                                instance
==================================  ==================================================
an :class:`Instance`                itself (``objective`` applied)
a ``Workload``, a library network   the network on the chip's processors, expanded
name, ``.yaml``/``.json`` network   with the compiler's scalar ops (seed 003,
file or ``.onnx``                   ``problems.op_placement.network``); options
                                    ``batch``, ``library`` (a function-library CSV),
                                    ``scalar_ops``, ``block_bytes``, ``static_shapes``,
                                    ``fuse_loops``
``*.json`` with ``ops``             the generic JSON form (:data:`.formats.SCHEMA`)
``*.stg``                           Standard Task Graph Set file; needs ``processors``
                                    (identical, no transfer cost); ``ccr`` adds
                                    transfer costs
``*.tgc``                           task graph with communication costs; needs
                                    ``processors``
``a.csv,b.csv[,c.csv]`` or          HEFT-style matrices
``X_task_exe_time.csv``
``topcuoglu2002``                   the HEFT paper's 10-task example
``random:n=…,p=…,seed=…``           :func:`.generators.random_instance`
==================================  ==================================================

For task graphs (STG, TGC, CSV, JSON, named, random) the chip is not used: the file
defines the processors.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.instances.op_placement.formats import (
    SCHEMA,
    heft_csv_paths,
    instance_from_dict,
    is_instance_json,
    read_heft_csv,
    read_json,
    read_stg,
    read_tgc,
    schema_json,
    write_heft_csv,
    write_json,
    write_tgc,
)
from chipsched.instances.op_placement.generators import (
    NAMED,
    parse_random_spec,
    random_instance,
    topcuoglu2002,
)
from chipsched.problems.op_placement import Instance, evaluate, make_instance
from chipsched.units import si_text
from chipsched.workload import Workload

__all__ = [
    "SCHEMA", "heft_csv_paths", "instance_from_dict", "load_instance", "random_instance",
    "read_heft_csv", "read_json", "read_stg", "read_tgc", "render", "schema_json",
    "topcuoglu2002", "write_heft_csv", "write_json", "write_tgc",
]

#: Folder (relative to the working directory) where ``chipsched solve`` writes Gantt charts.


def load_instance(spec: Any, hardware: Hardware, *, objective: str | None = None,
                  processors: int | None = None, ccr: float | None = None,
                  batch: int | None = None, library: Any = None,
                  scalar_ops: bool | None = None, block_bytes: int | None = None,
                  static_shapes: bool | None = None, fuse_loops: bool | None = None
                  ) -> Instance:
    """Resolve ``spec`` (see the module docstring) into an :class:`Instance`."""
    net_opts = {"batch": batch, "library": library, "scalar_ops": scalar_ops,
                "block_bytes": block_bytes, "static_shapes": static_shapes,
                "fuse_loops": fuse_loops}
    given_net = sorted(k for k, v in net_opts.items() if v is not None)

    def no_network_options(kind: str) -> None:
        if given_net:
            raise InputError(f"op_placement option {given_net[0]!r}",
                             f"applies to networks, not to {kind}")

    def no_processors(kind: str) -> None:
        if processors is not None:
            raise InputError("--processors", f"does not apply to {kind}: it names its "
                             "processors", "use it with .stg/.tgc task graphs")
        if ccr is not None:
            raise InputError("ccr", f"does not apply to {kind}", "use it with .stg files")

    if isinstance(spec, Instance):
        no_network_options("an instance")
        no_processors("an instance")
        return spec.with_objective(objective)
    if isinstance(spec, Workload):
        no_processors("a network")
        return make_instance(spec, hardware, objective=objective, **net_opts)
    s = str(spec).strip()
    low = s.lower()
    if low in NAMED:
        no_network_options(s)
        no_processors(s)
        return NAMED[low](objective)
    if low.startswith("random:") or low == "random":
        no_network_options("a random instance")
        if ccr is not None:
            raise InputError("ccr", "does not apply to random:", "write random:ccr=…")
        if processors is not None:
            s = f"{s},p={processors}" if ":" in s else f"random:p={processors}"
        return parse_random_spec(s, objective)
    if low.endswith(".stg"):
        no_network_options("an STG file")
        return read_stg(s, processors, ccr or 0.0, objective)
    if low.endswith(".tgc"):
        no_network_options("a .tgc task graph")
        if ccr is not None:
            raise InputError("ccr", "does not apply to .tgc files (they give their costs)")
        return read_tgc(s, processors, objective)
    if low.endswith(".csv"):
        no_network_options("HEFT CSV matrices")
        no_processors("HEFT CSV matrices")
        comp, conn, bw = heft_csv_paths(s)
        return read_heft_csv(comp, conn, bw, objective)
    if low.endswith(".json"):
        from chipsched.files import read_data

        data = read_data(s)
        if is_instance_json(data):
            no_network_options("an op_placement JSON instance")
            no_processors("an op_placement JSON instance")
            return instance_from_dict(data, s, objective)
    from chipsched.instances.networks import get_network

    no_processors("a network")
    try:
        w = get_network(s)
    except InputError as exc:
        if re.fullmatch(r"[\w.+-]+", s) and not Path(s).suffix:
            from chipsched.errors import UnknownNameError
            from chipsched.instances.networks import network_names

            raise UnknownNameError("op_placement instance", s,
                                   [*network_names(), *NAMED, "random:n=…,p=…"]) from exc
        raise
    return make_instance(w, hardware, objective=objective, **net_opts)


def _fmt(x: float, unit: str) -> str:
    if unit == "s":
        return si_text(x, "s", 6)
    return f"{x:.6g} {unit}"


def render(instance: Instance, result: Any, plot: str | os.PathLike[str] | None = None
           ) -> Any:
    """Summary, per-processor load, every core's ops in order; with ``plot`` (``--plot``)
    a Gantt chart written there (the path is printed)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from chipsched.plots.op_placement import plot_gantt
    from chipsched.units import si_text, unit_scale

    sol = result.solution
    _, m = evaluate(instance, sol)
    unit = instance.time_unit
    lines = [f"makespan {_fmt(m['makespan'], unit)}, "
             f"energy {si_text(m['energy_j'], 'J', 6)}, "
             f"{m['transfers']} cross-processor transfers, "
             f"{m['control_roundtrips']} control-flow round trips"]
    if m["best_single_processor"] is not None:
        ref = m["best_single_objective"]
        ref_s = _fmt(ref, unit) if instance.objective.name == "makespan" else f"{ref:.6g}"
        lines.append(f"best single processor: {m['best_single_processor']} "
                     f"({instance.objective.name} {ref_s}); gain "
                     f"{m['gain_vs_best_single']:.4g}×")
    t = Table(title="processors", title_justify="left")
    pj, pj_unit = unit_scale([d["energy_j"] for d in m["processors"].values()], "J")
    for col, j in (("processor", "left"), ("cores", "right"), ("ops", "right"),
                   ("busy", "right"), ("utilization", "right"),
                   (f"energy ({pj_unit})", "right")):
        t.add_column(col, justify=j)
    for k, (name, d) in enumerate(m["processors"].items()):
        t.add_row(name, str(instance.cores[k]), str(d["ops"]), _fmt(d["busy"], unit),
                  f"{100 * d['utilization']:.1f} %", f"{d['energy_j'] / pj:.4g}")
    order = Text()
    order.append("assignment (ops of each core in execution order):\n", style="bold")
    for (p, c), ops in sorted(sol.order().items()):
        res = f"{instance.processors[p]}:{c}" if instance.cores[p] > 1 else \
            instance.processors[p]
        order.append(f"{res}: ", style="bold")
        order.append(" → ".join(instance.ops[i] for i in ops) + "\n")
    if plot is None:
        return Group(Text("\n".join(lines)), t, order,
                     Text("draw a Gantt chart with --plot FILE.png", style="dim"))
    plot_gantt(instance, sol, Path(plot), title=f"{instance.name} — {result.method}: "
               f"makespan {_fmt(m['makespan'], unit)}")
    return Group(Text("\n".join(lines)), t, order, Text(f"Gantt chart: {plot}"))


#: the quick heuristics whose best schedule warm-starts CP-SAT and the MILP when no warm
#: start is given (``SolveOptions.auto_warm_start``; ``--no-auto-warm-start`` turns it off)
WARM_START_FROM = ("heft", "cpop", "seed003")
