"""tile_groups instances: a network + a tiled chip + a batch + an objective; ``.tree`` files.

``load_instance(spec, chip, objective=…, batch=…)`` takes ``spec`` as
``chipsched solve tile_groups -i …`` gives it:

* a library network name or a network file (``get_network``), or a ``Workload``;
* a ``.tree`` file — YAML with ``network`` (name or file, required), ``tree`` (the
  text form, required) and optionally ``batch``, ``objective``, ``stripe_width``,
  ``weight_accounting``: the
  tree is checked when the file is read (one-line error, exit 2) and evaluated by the
  ``given`` method;
* an :class:`~chipsched.problems.tile_groups.Instance` (returned as is).

Defaults: batch 1; objective E²·D on chips of at most 16 tiles (SET's edge platform)
and E·D² on larger ones (SET's cloud platform).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from chipsched.errors import InputError
from chipsched.files import atomic_write, load_yaml, read_data
from chipsched.hardware import Hardware
from chipsched.instances.networks import get_network
from chipsched.problems.tile_groups import (
    Instance,
    Solution,
    default_objective,
    make_instance,
    parse_tree,
)
from chipsched.workload import Workload

TREE_SUFFIX = ".tree"


def read_tree_file(path: str | os.PathLike[str], hardware: Hardware,
                   objective: str | None = None, batch: int | None = None,
                   weight_accounting: str | None = None) -> Instance:
    """An instance with its ``given`` tree from a ``.tree`` file (YAML mapping)."""
    data = read_data_any(path)
    if not isinstance(data, dict):
        raise InputError(str(path), "a .tree file must be a mapping with 'network' and 'tree'")
    for key in ("network", "tree"):
        if key not in data:
            raise InputError(f"{path}: {key}", "is required",
                             "write network: NAME and tree: T(1)[ … ]")
    keys = ("network", "tree", "batch", "objective", "stripe_width", "weight_accounting")
    unknown = set(data) - set(keys)
    if unknown:
        raise InputError(f"{path}: {sorted(unknown)[0]}", "unknown key",
                         f"keys: {', '.join(keys)}")
    w = get_network(str(data["network"]))
    tree = parse_tree(str(data["tree"]), w)
    return make_instance(w, hardware, batch=batch or data.get("batch", 1),
                         objective=objective or data.get("objective")
                         or default_objective(hardware),
                         stripe_width=data.get("stripe_width"), given=tree,
                         weight_accounting=weight_accounting
                         or data.get("weight_accounting"))


def read_data_any(path: str | os.PathLike[str]) -> Any:
    """Parse a ``.tree`` file as YAML (``read_data`` dispatches on the suffix)."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "file not found", "check the path")
    if p.suffix.lower() in (".json", ".yaml", ".yml"):
        return read_data(p)
    try:
        return load_yaml(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{p}:{mark.line + 1}" if mark is not None else str(p)
        raise InputError(where, "malformed YAML", "fix the syntax at that line") from None


def write_tree_file(path: str | os.PathLike[str], instance: Instance,
                    solution: Solution) -> Path:
    """Write ``solution`` with its network, batch and objective as a ``.tree`` file."""
    import yaml

    data = {"network": instance.workload.name, "batch": instance.batch,
            "objective": instance.objective.name, "stripe_width": instance.stripe_width,
            "weight_accounting": instance.weight_accounting,
            "tree": solution.text}
    return atomic_write(path, lambda fh: yaml.safe_dump(data, fh, sort_keys=False))


def load_instance(spec: Any, hardware: Hardware, objective: str | None = None,
                  batch: int | None = None, stripe_width: int | None = None,
                  weight_accounting: str | None = None) -> Instance:
    """Build a tile_groups :class:`Instance` (see the module docstring)."""
    if isinstance(spec, Instance):
        return make_instance(spec, hardware, objective=objective, batch=batch,
                             stripe_width=stripe_width, weight_accounting=weight_accounting)
    if isinstance(spec, (str, os.PathLike)) and str(spec).lower().endswith(TREE_SUFFIX):
        return read_tree_file(spec, hardware, objective, batch, weight_accounting)
    w = spec if isinstance(spec, Workload) else get_network(spec)
    return make_instance(w, hardware, objective=objective, batch=batch,
                         stripe_width=stripe_width, weight_accounting=weight_accounting)


def _fmt(x: float, unit: str) -> str:
    for p, s in ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"), (1e-6, "µ"),
                 (1e-9, "n"), (1e-12, "p")):
        if abs(x) >= p:
            return f"{x / p:.4g} {s}{unit}"
    return f"{x:.3g} {unit}"


def render(instance: Instance, result: Any, plot: str | os.PathLike[str] | None = None
           ) -> Any:
    """The tree, the metrics and the segments for ``chipsched solve``; with ``plot`` (a
    .png/.svg/.pdf path, ``--plot``) also the S-T graph there."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from chipsched.plots.tile_groups import plot_st_graph

    m = result.metrics
    parts: list[Any] = [Text("tree: ", style="bold") + Text(m["tree"])]
    if result.message:
        parts.append(Text(f"note: {result.message}", style="yellow"))
    t = Table(title="metrics", title_justify="left")
    t.add_column("metric")
    t.add_column("value", justify="right")
    e = m["energy"]
    rows = [("objective", f"{result.objective:.6g} ({m['objective_name']})"),
            ("latency", _fmt(m["latency_s"], "s")), ("energy", _fmt(m["energy_j"], "J")),
            ("  DRAM", _fmt(e["dram_j"], "J")), ("  NoC", _fmt(e["noc_j"], "J")),
            ("  MAC", _fmt(e["mac_j"], "J")), ("  buffer", _fmt(e["buffer_j"], "J")),
            ("DRAM bytes", _fmt(m["dram_bytes"], "B")),
            ("NoC hop-bytes", _fmt(m["noc_byte_hops"], "B·hop")),
            ("utilization", f"{100 * m['utilization']:.2f} %"),
            ("segments", f"{len(m['segments'])} × {m['root_runs']} root run(s)")]
    for k, v in rows:
        t.add_row(k, v)
    parts.append(t)
    s = Table(title="segments (root children)", title_justify="left")
    for col, j in (("#", "right"), ("tree", "left"), ("time", "right"), ("bound", "left"),
                   ("energy", "right"), ("DRAM", "right")):
        s.add_column(col, justify=j)
    segs = m["segments"]
    shown = segs if len(segs) <= 20 else segs[:10] + segs[-5:]
    for sg in shown:
        s.add_row(str(sg["index"]), sg["tree"], _fmt(sg["time_s"], "s"), sg["bound"],
                  _fmt(sg["energy_j"], "J"), _fmt(sg["dram_bytes"], "B"))
    if len(segs) > len(shown):
        s.caption = f"{len(segs) - len(shown)} more segments in --json"
    parts.append(s)
    if plot is not None:
        plot_st_graph(instance, result.solution, Path(plot))
        parts.append(Text(f"S-T graph written to {plot}"))
    else:
        parts.append(Text("draw the S-T graph with --plot FILE.png", style="dim"))
    return Group(*parts)


def _envelope(result: Any) -> list[tuple[float, float]]:
    """The (D, E*(D)) points of a ``bound`` result's lower envelope (none for others)."""
    solver = (result.metrics or {}).get("solver") or {}
    return [(float(d), float(e)) for d, e in solver.get("envelope") or ()]


def plot_compare(instance: Instance, results: Any, path: str | os.PathLike[str], *,
                 best_bound: float | None = None, best_found: float | None = None) -> Path:
    """``chipsched compare tile_groups --plot`` (and ``solve -m bound --plot``): energy
    against latency of every run's tree, over the full-space lower envelope E*(D) of a
    ``bound`` run, with the curves objective = ``best_bound`` and objective =
    ``best_found`` (the face's ``best_bound`` / ``best_found`` of the runs) — no tree
    lies below the envelope or the bound's curve, and the optimum lies between the two
    curves."""
    from chipsched.plots.tile_groups import plot_energy_latency

    points: dict[str, list[tuple[float, float]]] = {}
    envelope: list[tuple[float, float]] = []
    for r in results:
        m = r.metrics or {}
        if r.solution is not None and "latency_s" in m:
            points.setdefault(r.method, []).append((float(m["latency_s"]),
                                                   float(m["energy_j"])))
        elif not r.space and _envelope(r):
            envelope = _envelope(r)
    name = f"{instance.workload.name} on {instance.hardware.name}, batch {instance.batch}"
    return plot_energy_latency(points, path, instance.objective, envelope=envelope or None,
                               bound=best_bound, best=best_found,
                               title=f"tile_groups: {name}")
