"""core_assignment bounds (issue 27): best known, each bound, the best bound, their ratio
and the seconds each bound takes.

Neuron graphs (``--graphs``, default the library's three neuron graphs, a layered random
graph and a stencil): the best of ``seed004-plus`` (default: tabu placement; and
``place=swaps``), ``tabu`` and ``scotch`` (``--limit`` s each, seed 0) as the best known
of this run, and the
``bound`` method (``--limit`` s): ring capacity, ring + cut, the density and
Donath–Hoffman cut bounds × one hop. QAPLIB
(``--qaplib DIR``: every ``*.dat`` with a ``*.sln``,
grid or not — the bounds take the file's own distance matrix): the optimum or best known
of the ``.sln``, Gilmore–Lawler, projection, RLT-1 (up to ``--rlt1-max`` y variables)
and the DNN bound (up to ``--dnn-max`` locations; its default 1,000 ADMM steps at most).

    python benchmarks/core_assignment_bounds.py --qaplib DIR
    python benchmarks/core_assignment_bounds.py --graphs lenet5-neurons --limit 60
    python benchmarks/core_assignment_bounds.py --library ca-lenet5-c4 --limit 60 \
        --iterations 150

``--library IDS``: chipsched-lib rows, their stored best known (re-verified) against the
``bound`` method run here (``--limit`` s, ``--iterations`` Donath–Hoffman steps).
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.api import make_instance, solve
from chipsched.formulations.core_assignment.bounds import (
    DNN_MAX_CORES,
    RLT1_MAX,
    qap_bounds,
    rlt1_size,
)

GRAPHS = ("lenet5-neurons;vgg-cifar-neurons;resnet-cifar-neurons;"
          "layered:layers=8,width=1000,fanin=24,seed=1;stencil:nx=96,ny=96,radius=2")


def qaplib_rows(data: Path, rlt1_max: int, dnn_max: int) -> None:
    print("| instance | n | optimum / best known | Gilmore–Lawler | projection | RLT-1 | "
          "DNN | best bound | best / optimum | seconds (GL, PB, RLT-1, DNN) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    ratios = []
    for dat in sorted(data.glob("*.dat")):
        sln = dat.with_suffix(".sln")
        if not sln.exists():
            continue
        toks = np.array(dat.read_text().split(), dtype=np.int64)
        n = int(toks[0])
        a = toks[1:1 + n * n].reshape(n, n)
        b = toks[1 + n * n:1 + 2 * n * n].reshape(n, n)
        opt = float(sln.read_text().split()[1])
        # Σ_ij a_ij b_p(i)p(j) = Σ_{i<j} (a_ij + a_ji)·b_p(i)p(j) for symmetric b (the
        # grid instances): a symmetric flow with a zero diagonal
        if not np.array_equal(b, b.T) and np.array_equal(a, a.T):
            a, b = b, a
        if not np.array_equal(b, b.T):
            print(f"| {dat.stem} | {n} | {opt:,.0f} | neither matrix symmetric: skipped |")
            continue
        F = a + a.T
        np.fill_diagonal(F, 0)
        rep = qap_bounds(F, b.astype(float), None, rlt1_max, dnn_max)
        p = rep.parts
        best = rep.value
        ratios.append(best / opt)
        sec = ", ".join(f"{rep.seconds.get(k, 0):.2f}" for k in ("gilmore-lawler",
                                                                "projection", "rlt1",
                                                                "dnn"))
        rl = "—" if p["rlt1"] is None else f"{p['rlt1']:,.1f}"
        if p["rlt1"] is None:
            rl += (f" ({rlt1_size(n, n):,} y > max)" if rlt1_size(n, n) > rlt1_max else
                   " (not solved in time)")
        dn = "—" if p["dnn"] is None else f"{p['dnn']:,.1f}"
        if p["dnn"] is None:
            dn += f" ({n} > {dnn_max} locations)"
        print(f"| {dat.stem} | {n} | {opt:,.0f} | {p['gilmore-lawler']:,.0f} | "
              f"{p['projection']:,.1f} | {rl} | {dn} | {best:,.1f} ({rep.by}) | "
              f"{best / opt:.3f} | {sec} |", flush=True)
    if ratios:
        print(f"\nbest bound / optimum: mean {np.mean(ratios):.3f}, "
              f"least {min(ratios):.3f} over {len(ratios)} instances")


def graph_rows(specs: list[str], limit: float) -> None:
    print("| graph | vertices | synapses | mesh × capacity | best known (method) | ring | "
          "ring + cut | cut (density) | cut (Donath–Hoffman) | best bound | best known / best "
          "bound | bound s |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for spec in specs:
        inst = make_instance("core_assignment", spec)
        found = []
        for m, params, how in (("seed004-plus", {}, "seed004-plus"),
                               ("seed004-plus", {"place": "swaps"}, "seed004-plus, place=swaps"),
                               ("tabu", {}, "tabu"), ("scotch", {}, "scotch")):
            r = solve("core_assignment", inst, m, time_limit=limit, seed=0, **params)
            if r.objective is not None:
                found.append((r.objective, how, r.wall_s))
        best, how, _ = min(found)
        bound_row(spec, inst, best, how, limit)


def bound_row(name: str, inst: Any, best: float, how: str, limit: float,
              iterations: int | None = None) -> None:
    kw = {} if iterations is None else {"iterations": iterations}
    b = solve("core_assignment", inst, "bound", time_limit=limit, threads=1, **kw)
    st = b.metrics["solver"]

    def cell(key: str) -> str:
        v = st.get(key)
        return "—" if v is None else f"{v:,.0f}"

    print(f"| {name} | {inst.n:,} | {inst.graph.m:,} | {inst.rows}×{inst.cols} × "
          f"{inst.capacity} | {best:,.0f} ({how}) | {cell('bound_ring')} | "
          f"{cell('bound_ring + cut')} | {cell('bound_cut (density)')} | "
          f"{cell('bound_cut (Donath–Hoffman)')} | "
          f"{b.bound:,.0f} | {best / b.bound:.3f} | {b.wall_s:.1f} |", flush=True)


def library_rows(ids: list[str], limit: float, iterations: int | None) -> None:
    from chipsched import library

    print("| library row | vertices | synapses | mesh × capacity | best known (how) | ring | "
          "ring + cut | cut (density) | cut (Donath–Hoffman) | best bound | best known / best "
          "bound | bound s |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for id_ in ids:
        e = library.entry(id_)
        inst = library.build_instance(e)
        known = library.best_known(e)
        best = library.verify(e, known.path).objective
        bound_row(id_, inst, best, library.how_found(known.found_by), limit, iterations)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qaplib", type=Path, default=None)
    ap.add_argument("--graphs", default=None,
                    help=f"specs separated by ';' (default: {GRAPHS})")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds per run")
    ap.add_argument("--library", nargs="+", default=None, metavar="ID",
                    help="chipsched-lib core_assignment rows: stored best known / bound")
    ap.add_argument("--iterations", type=int, default=None,
                    help="the bound's Donath–Hoffman steps (default: the method's)")
    ap.add_argument("--rlt1-max", type=int, default=RLT1_MAX)
    ap.add_argument("--dnn-max", type=int, default=DNN_MAX_CORES,
                    help="largest QAP (locations) whose DNN bound runs")
    a = ap.parse_args()
    print(f"machine: {platform.machine()}, python {platform.python_version()}\n")
    if a.library:
        library_rows(a.library, a.limit, a.iterations)
        return
    if a.qaplib is not None:
        qaplib_rows(a.qaplib, a.rlt1_max, a.dnn_max)
        print()
    if a.graphs is not None or a.qaplib is None:
        specs = (a.graphs or GRAPHS).split(";")
        graph_rows(specs, a.limit)


if __name__ == "__main__":
    main()
