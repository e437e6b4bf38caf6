"""Figures of the tile_groups decision: the S-T graph, the Pareto front, method comparisons."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.plots import MARKERS, _figure, save_figure, short_log_ticks
from chipsched.problems.tile_groups import Instance, Solution, analyze


def plot_st_graph(instance: Instance, solution: Solution | Any, path: str | os.PathLike[str],
                  title: str = "", label_min_frac: float = 0.04) -> Path:
    """The S-T graph of a tree (seed 002, the document's Fig. 3; docs/tile_groups.md):
    x = time, y = tile
    (stripe id), one rectangle per layer × sub-batch, labelled ``layer[first,last)`` when
    wide enough; dashed lines mark the segments (root children)."""
    a = analyze(instance, solution)
    names = instance.layer_names
    G = instance.n_tiles
    lat = a.totals.latency
    fig, ax = _figure(9.0, max(3.0, min(9.0, 0.25 * G + 1.5)))
    ncol = max(1, len(names))
    # up to 20 layers: one colour each and a key; more: a sequential map over the file
    # order and a colour bar, so no two layers share a colour unseen
    import matplotlib

    few = ncol <= 20
    cmap = _cmap() if few else matplotlib.colormaps["viridis"]
    if a.jobs:
        from matplotlib.collections import PolyCollection

        x0 = np.array([j.start for j in a.jobs])
        x1 = np.array([j.end for j in a.jobs])
        y0 = np.array([j.lo for j in a.jobs], dtype=float)
        y1 = y0 + np.array([j.used for j in a.jobs])
        verts = np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1),
                          np.stack([x1, y1], 1), np.stack([x0, y1], 1)], axis=1)
        lay = np.array([j.layer for j in a.jobs])
        shade = lay / 20 if few else lay / max(1, ncol - 1)
        ax.add_collection(PolyCollection(verts, facecolors=cmap(shade), edgecolors="k",
                                         linewidths=0.2))
        if few:
            from matplotlib.patches import Patch

            used = sorted(set(lay.tolist()))
            ax.legend([Patch(facecolor=cmap(k / 20), edgecolor="k", linewidth=0.2)
                       for k in used], [names[k] for k in used], fontsize=6,
                      loc="upper left", bbox_to_anchor=(1.005, 1.0), frameon=False)
        else:
            sm = matplotlib.cm.ScalarMappable(
                cmap=cmap, norm=matplotlib.colors.Normalize(0, ncol - 1))
            cb = fig.colorbar(sm, ax=ax, pad=0.01, fraction=0.04)
            ticks = np.linspace(0, ncol - 1, 6).round().astype(int)
            cb.set_ticks(ticks)
            cb.set_ticklabels([f"{k}: {names[k]}" for k in ticks], fontsize=6)
            cb.set_label("layer (file order)", fontsize=7)
    if len(a.jobs) <= 400:
        for j in a.jobs:
            label = f"{names[j.layer]}[{j.samples[0]},{j.samples[1]})"
            # only where the label fits inside its bar (~0.75 % of the width a character)
            if lat > 0 and (j.end - j.start) / lat >= max(label_min_frac,
                                                          0.0075 * len(label)):
                ax.text((j.start + j.end) / 2, j.lo + j.used / 2, label, ha="center",
                        va="center", fontsize=6, clip_on=True)
    t = 0.0
    for _ in range(a.totals.root_runs):
        for c in a.totals.segments:
            t += c.time
            ax.axvline(t, color="k", lw=0.5, ls="--", alpha=0.5)
    ax.set_xlim(0, lat if lat > 0 else 1)
    ax.set_ylim(0, G)
    from matplotlib.ticker import FuncFormatter

    from chipsched.units import unit_scale

    ts, t_unit = unit_scale([lat], "s")
    es, e_unit = unit_scale([a.totals.energy.total], "J")
    # the bars stay in seconds; the axis reads in the prefix the latency needs
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x / ts:g}"))
    ax.set_xlabel(f"time ({t_unit})")
    ax.set_ylabel("hw-tile (stripe id)")
    ax.set_title(title or f"S-T graph: {instance.name}, latency {lat / ts:.4g} {t_unit}, "
                 f"energy {a.totals.energy.total / es:.4g} {e_unit}", fontsize=9)
    return save_figure(fig, path)


def _cmap() -> Any:
    import matplotlib

    return matplotlib.colormaps["tab20"]


def plot_pareto_front(front: Sequence[tuple[float, float]], path: str | os.PathLike[str],
                      marked: Mapping[str, tuple[float, float]] | None = None,
                      title: str = "",
                      envelope: Sequence[tuple[float, float]] | None = None) -> Path:
    """Energy vs latency of the exact front (ε-constraint), with other methods marked and,
    given ``envelope`` (the ``bound`` method's ``metrics.solver.envelope``), the
    full-space lower envelope E*(D): no tree of latency ≤ D has less energy."""
    from chipsched.units import unit_scale

    pts_all = [*front, *(marked or {}).values(), *(envelope or ())]
    ts, t_unit = unit_scale([p[0] for p in pts_all], "s")
    es, e_unit = unit_scale([p[1] for p in pts_all], "J")
    fig, ax = _figure()
    if front:
        pts = np.array(sorted(front))
        ax.step(pts[:, 0] / ts, pts[:, 1] / es, where="post", color="C0", lw=1)
        ax.plot(pts[:, 0] / ts, pts[:, 1] / es, "o", color="C0", ms=3,
                label="exact Pareto front (segmented space)")
    if envelope:
        env = np.array(sorted(envelope))
        # a tree of latency in (d_k, d_k+1] has at least E*(d_k+1): drawn from the right
        # end ('pre'), and past the last point the least energy holds on
        right = max([p[0] for p in pts_all])
        if right > env[-1, 0]:
            env = np.vstack([env, [right, env[-1, 1]]])
        ax.step(env[:, 0] / ts, env[:, 1] / es, where="pre", color="0.4", lw=1, ls="--",
                label="lower envelope E*(D), full space (bound)")
    for i, (name, (d, e)) in enumerate((marked or {}).items()):
        ax.plot([d / ts], [e / es], "s", color=f"C{i + 1}", ms=6, label=name)
    ax.set_xlabel(f"latency ({t_unit})")
    ax.set_ylabel(f"energy ({e_unit})")
    ax.set_title(title or "segmented-space Pareto front", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def plot_comparison(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str],
                    methods: Sequence[str] = ("ls", "lp", "sa"), title: str = "",
                    baselines: Sequence[str] = ("ls", "lp")) -> Path:
    """Grouped bars of normalized latency, energy and objective (each config's best
    of ``baselines`` = 1) per (network, batch, chip): the document's Fig. 10 on our
    model.

    ``rows``: dicts with ``config`` (label) and, per method m, ``m_latency``,
    ``m_energy``, ``m_objective``.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    metrics = ("latency", "energy", "objective")
    fig, axes = plt.subplots(3, 1, figsize=(max(8.0, 0.45 * len(rows) + 2), 8.0),
                             constrained_layout=True, sharex=True)
    x = np.arange(len(rows))
    wdt = 0.8 / len(methods)
    bases = list(baselines)
    for ax, met in zip(axes, metrics, strict=True):
        for k, m in enumerate(methods):
            vals = []
            for r in rows:
                refs = [r[f"{b}_{met}"] for b in bases if r.get(f"{b}_{met}") is not None]
                v = r.get(f"{m}_{met}")
                vals.append(v / min(refs) if v is not None and refs and min(refs) else np.nan)
            ax.bar(x + (k - (len(methods) - 1) / 2) * wdt, vals, wdt,
                   label=m.upper().replace("_", "-"))
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_ylabel(f"{met} / best baseline")
        ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=7, ncol=len(methods))
    axes[0].set_title(title or "SA vs best LS vs best LP (lower is better)", fontsize=9)
    axes[-1].set_xticks(x)
    axes[-1].set_xticklabels([r["config"] for r in rows], rotation=75, fontsize=6)
    return save_figure(fig, path)


def iso_objective(objective: Any, value: float, latencies: Sequence[float]) -> np.ndarray:
    """For each latency D the energy E with ``objective(E, D) == value`` (NaN where no
    energy ≥ 0 reaches it): the curve on which every tree has that objective. The
    objective grows in E (E^n·D^m or a weighted sum), so a bisection on log E finds it."""
    out = np.full(len(latencies), np.nan)
    for i, d in enumerate(latencies):
        if objective(0.0, d) > value:
            continue  # the latency alone is worth more than the value
        lo, hi = 1e-300, 1.0
        while objective(hi, d) < value and hi < 1e300:
            hi *= 1e3
        if objective(hi, d) < value:
            continue
        for _ in range(200):
            mid = np.sqrt(lo * hi)
            if objective(mid, d) < value:
                lo = mid
            else:
                hi = mid
            if hi <= lo * (1 + 1e-12):
                break
        out[i] = hi
    return out


def plot_energy_latency(points: Mapping[str, Sequence[tuple[float, float]]],
                        path: str | os.PathLike[str], objective: Any, *,
                        envelope: Sequence[tuple[float, float]] | None = None,
                        bound: float | None = None, best: float | None = None,
                        title: str = "") -> Path:
    """Energy against latency (log-log) of every method's trees (``points``: method →
    its runs' (D, E)), with, from the ``bound`` method, the full-space lower envelope
    E*(D) (no tree of latency ≤ D has less energy; a staircase drawn from each step's
    right end) and the curve objective = ``bound``: no tree lies below either. The
    dotted curve is objective = ``best`` (the best found): the optimum lies between the
    two curves."""
    fig, ax = _figure(width=6.4, height=5.6)
    ds = [p[0] for pts in points.values() for p in pts] + [p[0] for p in envelope or ()]
    es = [p[1] for pts in points.values() for p in pts] + [p[1] for p in envelope or ()]
    if not ds:
        raise InputError("--plot", "nothing to draw: no run produced a tree or an envelope",
                         "run a method that returns a tree, or the bound method")
    lo_d, hi_d = min(ds) / 1.5, max(ds) * 1.5
    if envelope:
        env = np.array(sorted(envelope))
        # a tree of latency in (d_k, d_k+1] has at least E*(d_k+1): drawn from the right
        # end ('pre'); past the last point the least energy holds on
        env = np.vstack([env, [hi_d, env[-1, 1]]])
        ax.step(env[:, 0], env[:, 1], where="pre", color="0.35", lw=1.2,
                label="lower envelope E*(D) (bound)")
        ax.fill_between(env[:, 0], min(es) / 10, env[:, 1], step="pre", color="0.9",
                        zorder=0, label="no tree (below the envelope or faster than "
                        "its least latency)")
        ax.axvspan(lo_d, env[0, 0], color="0.9", zorder=0)
    grid = np.geomspace(lo_d, hi_d, 200)
    for value, style, name in ((bound, "--", "bound"), (best, ":", "best found")):
        if value is not None and value > 0:
            curve = iso_objective(objective, value, grid)
            ok = np.isfinite(curve)
            if ok.any():
                ax.plot(grid[ok], curve[ok], style, color="0.2", lw=1,
                        label=f"{objective.name} = {name} ({value:.4g})")
    for k, (m, pts) in enumerate(points.items()):
        if pts:
            d, e = zip(*pts, strict=True)
            ax.scatter(d, e, marker=MARKERS[k % len(MARKERS)], color=f"C{k % 10}",
                       label=m, zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    short_log_ticks(ax.xaxis)
    short_log_ticks(ax.yaxis)
    ax.set_xlim(lo_d, hi_d)
    ax.set_ylim(min(es) / 3, max(es) * 3)
    ax.set_xlabel("latency (s)")
    ax.set_ylabel("energy (J)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    return save_figure(fig, path)
