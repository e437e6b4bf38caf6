"""Gantt chart of an op-placement schedule (PNG/SVG/PDF by the file suffix)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from chipsched.plots import _figure, save_figure
from chipsched.problems.op_placement import Instance, Solution
from chipsched.units import unit_scale

#: Bar colours by op class.
CLASS_COLORS = {"tensor": "#4C72B0", "vector": "#55A868", "scalar": "#DD8452",
                "task": "#8172B2"}


def plot_gantt(instance: Instance, solution: Solution, path: str | os.PathLike[str],
               title: str = "", label_ops: bool | None = None) -> Path:
    """One row per (processor, core), one bar per op from its start to its end, coloured
    by op class; control-flow ops hatched; cross-processor transfers as grey arrows from
    the producer's end to the consumer's start (when there are at most 60 of them).

    ``label_ops`` writes op names in bars wide enough (default: at most 60 ops).
    """
    res = list(instance.resources)
    row = {rc: k for k, rc in enumerate(res)}
    n = instance.n_ops
    idx = np.arange(n)
    start = solution.start
    dur = instance.time[idx, solution.proc]
    end = start + dur
    span = float(end.max()) if n else 1.0
    fig, ax = _figure(8.0, max(2.0, 0.45 * len(res) + 1.2))
    label_ops = n <= 60 if label_ops is None else label_ops
    ys = np.array([row[(int(p), int(c))] for p, c in zip(solution.proc, solution.core,
                                                         strict=True)])
    edge = {"edgecolor": "black", "linewidth": 0.3} if n <= 100 else {"linewidth": 0}
    for cls, color in CLASS_COLORS.items():
        m = np.array([instance.op_class[i] == cls for i in range(n)])
        if m.any():
            ax.barh(ys[m], dur[m], left=start[m], height=0.7, color=color, label=cls, **edge)
    cf = instance.control_flow
    if cf.any():
        ax.barh(ys[cf], dur[cf], left=start[cf], height=0.7, fill=False, hatch="///",
                edgecolor="black", linewidth=0.3, label="control flow")
    if label_ops:
        for i in range(n):
            if dur[i] > 0.04 * span:
                ax.text(start[i] + dur[i] / 2, ys[i], instance.ops[i], ha="center",
                        va="center", fontsize=6, clip_on=True)
    if len(instance.edges):
        a, b = instance.edges[:, 0], instance.edges[:, 1]
        cross = (solution.proc[a] != solution.proc[b]) & (instance.edge_bytes > 0)
        if 0 < cross.sum() <= 60:
            for k in np.flatnonzero(cross):
                ax.annotate("", xy=(start[b[k]], ys[b[k]]), xytext=(end[a[k]], ys[a[k]]),
                            arrowprops={"arrowstyle": "->", "color": "0.5", "lw": 0.5})
    ax.set_yticks(range(len(res)))
    ax.set_yticklabels([f"{instance.processors[p]}:{c}" if instance.cores[p] > 1 else
                        instance.processors[p] for p, c in res])
    ax.invert_yaxis()
    unit = instance.time_unit
    if unit == "s":  # the prefix that reads the makespan as 1–999 (µs, ms, s)
        f, unit_label = unit_scale([span], unit)
        scale = 1.0 / f
    else:
        scale, unit_label = 1.0, unit
    ax.set_xlim(0, span * 1.01 if span > 0 else 1)
    ticks = ax.get_xticks()
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t * scale:g}" for t in ticks])
    ax.set_xlim(0, span * 1.01 if span > 0 else 1)
    # task-graph benchmarks (STG, Topcuoglu) count time in their own abstract units
    ax.set_xlabel(f"time ({unit_label})" if unit_label != "u.t." else
                  "time (u.t. = the task graph's own time units)")
    ax.set_title(title or f"{instance.name}: makespan {span * scale:.4g} {unit_label}")
    handles, names = ax.get_legend_handles_labels()
    if len(set(names)) > 1:  # one class ("task") needs no key
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    return save_figure(fig, path)
