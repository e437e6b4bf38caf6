"""Seed 004 on disk: the whole pipeline for a graph that is not held in memory.

The document keeps every graph in files (§ 64: "a network with hundreds of millions of
connections … is saved to the file system"). One coarsening level needs, per vertex,
only its heaviest edge (§ 67), which one sequential pass over the edge files gives in
O(n) memory; the 4–8 marking tries then run in memory on those O(n) arrays, and the
coarse graph is written vertex by vertex from the members' edge lists
(:func:`coarsen_on_disk`). The refinement reads each level's rows in its random order
(:func:`refine_on_disk`), the groups' quotient and the evaluator's flows are read from
the original file (:func:`contract_on_disk`, :func:`flows_on_disk`);
:func:`seed004_on_disk` chains the steps and :func:`seed004_zip` adds the evaluation.
Memory is O(n) plus one batch of rows, except for the coarsest level, which
:func:`seed004_on_disk` loads whole for the recursive bisection (the document's
coarsening leaves it ~30 % of the edges).

This module works on any *graph store* with the protocol of
:class:`chipsched.instances.core_assignment.SeedZipReader` (``n``, ``m``, ``sizes``,
``batches(size)``, ``read_rows(vertices)``, ``load(check_symmetry=)``) and a writer
factory with the protocol of
:class:`~chipsched.instances.core_assignment.SeedZipWriter` (``add_rows``, context
manager) — the caller hands them over
(``chipsched.instances.core_assignment.ondisk.ZIP_STORE``; heuristics do not import
instances). For the same seed the results are identical to the in-memory steps
(tests).
"""
from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np

from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.neurongraph import NeuronGraph, merge_rows
from chipsched.problems.core_assignment import Instance, chip_capacity, evaluate_flows, fit_mesh

from .multilevel import (
    _EPS,
    MERGE_FRACTION,
    MIN_REDUCTION,
    STARTS,
    TRIES,
    _cmap_from_mate,
    _heaviest_rows,
    _refine_pass,
    match_heavy_edges,
    pack_groups,
    recursive_bisection,
)
from .placement import (
    MAX_ITER,
    TOP_FRACTION,
    fit_to_cores,
    force_directed,
    place_recursive_bisection,
)


def heaviest_on_disk(reader: Any, seed: int, batch: int = 65536
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Heaviest neighbour and weight of every vertex, one sequential pass (§ 67)."""
    heavy = np.empty(reader.n, np.int64)
    hw = np.empty(reader.n, np.int64)
    for v0, ptr, idx, w in reader.batches(batch):
        h, x = _heaviest_rows(ptr, idx, w, v0, seed)
        heavy[v0:v0 + h.shape[0]] = h
        hw[v0:v0 + h.shape[0]] = x
    return heavy, hw


def coarsen_stream_level(reader: Any, make_writer: Callable[[np.ndarray], Any], capacity: int,
                         rng: np.random.Generator, tries: int = TRIES,
                         merge_fraction: float = MERGE_FRACTION, batch: int = 65536
                         ) -> tuple[np.ndarray, int, int] | None:
    """One coarsening level from ``reader`` to a new store made by ``make_writer(sizes)``.
    Returns ``(cmap, coarse vertex count, reduction)`` or ``None`` if nothing merges
    (then nothing is written)."""
    limit = math.floor(capacity * merge_fraction + _EPS)
    seed = int(rng.integers(2**62))
    heavy, hw = heaviest_on_disk(reader, seed, batch)
    best, best_red = None, -1
    for _ in range(tries):
        mate, red = match_heavy_edges(heavy, hw, reader.sizes, limit, rng.permutation(reader.n))
        if red > best_red:
            best, best_red = mate, red
    del heavy, hw
    cmap, nc = _cmap_from_mate(best)
    if nc == reader.n:
        return None
    csizes = np.bincount(cmap, weights=reader.sizes, minlength=nc).astype(np.int64)
    with make_writer(csizes) as out:
        for optr, oi, ow in contracted_rows(reader, cmap, nc, batch):
            out.add_rows(optr, oi, ow)
    return cmap, int(nc), int(best_red)


def contracted_rows(reader: Any, label: np.ndarray, n_labels: int, batch: int = 65536
                    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The quotient graph of the store by ``label`` as CSR row batches (labels in
    order), reading each label's members' rows — at most ``batch`` vertices per read
    (or one label's members, if more), so memory stays O(batch) whatever the label
    sizes: the kernel is :meth:`NeuronGraph.contract`'s, hence the same rows in the same
    edge order as the in-memory quotient."""
    members = np.argsort(label, kind="stable")  # vertices grouped by label
    mstart = np.zeros(n_labels + 1, np.int64)
    np.add.at(mstart, label + 1, 1)
    mstart = np.cumsum(mstart)
    c0 = 0
    while c0 < n_labels:
        # the labels whose members fit in one batch of vertices
        c1 = int(np.searchsorted(mstart, mstart[c0] + batch, side="right")) - 1
        c1 = min(n_labels, max(c1, c0 + 1))
        mem = members[mstart[c0]:mstart[c1]]
        ptr, idx, w = reader.read_rows(mem)
        # the rows come in member order: row i of the batch is mem[i]
        yield merge_rows(ptr, idx, w, np.arange(mem.shape[0]),
                         mstart[c0:c1 + 1] - mstart[c0], label, n_labels, c0,
                         np.empty(0, np.int64))
        c0 = c1


def contract_on_disk(reader: Any, label: np.ndarray, n_labels: int, batch: int = 65536
                     ) -> NeuronGraph:
    """The quotient graph (in memory: it has ``n_labels`` vertices) of a graph on disk;
    equal to ``graph.contract(label, n_labels)`` of the same graph in memory."""
    lab = np.ascontiguousarray(label, dtype=np.int64)
    ptrs, idxs, ws = [np.zeros(1, np.int64)], [], []
    for optr, oi, ow in contracted_rows(reader, lab, n_labels, batch):
        ptrs.append(optr[1:] + ptrs[-1][-1])
        idxs.append(oi)
        ws.append(ow)
    sizes = np.bincount(lab, weights=reader.sizes, minlength=n_labels).astype(np.int64)
    return NeuronGraph(sizes, np.concatenate(ptrs), np.concatenate(idxs),
                       np.concatenate(ws), name="quotient")


def refine_on_disk(reader: Any, part: np.ndarray, nparts: int, capacity: int,
                   rng: np.random.Generator, passes: int = 1, batch: int = 65536
                   ) -> tuple[int, int]:
    """Seed 004's refinement (§ 79–80, :func:`.multilevel.refine`) of a graph on disk:
    the same random visiting order, read in batches of ``batch`` vertices, so the same
    moves as in memory. In place on ``part``; returns (change of the cut, moves)."""
    load = np.bincount(part, weights=reader.sizes, minlength=nparts).astype(np.int64)
    delta = moves = 0
    for _ in range(passes):
        order = rng.permutation(reader.n)
        mv_pass = 0
        for b0 in range(0, reader.n, batch):
            verts = order[b0:b0 + batch]
            ptr, idx, w = reader.read_rows(verts)
            d, mv = _refine_pass(ptr, idx, w, np.arange(verts.shape[0]), verts,
                                 reader.sizes, part, load, capacity, nparts)
            delta += int(d)
            mv_pass += int(mv)
        moves += mv_pass
        if mv_pass == 0:
            break
    return delta, moves


@nb.njit(cache=True)
def _row_flows(ptr, idx, w, v0, label, multicast):  # pragma: no cover - numba
    """Directed flows ``label[u] -> label[v]`` of the edges u < v in rows v0.. (u the
    row's vertex): per edge (or, ``multicast``, once per u and destination label)."""
    nv = ptr.shape[0] - 1
    src = np.empty(idx.shape[0], np.int64)
    dst = np.empty(idx.shape[0], np.int64)
    ww = np.empty(idx.shape[0], np.int64)
    k = 0
    for i in range(nv):
        u = v0 + i
        a = label[u]
        k0 = k
        for j in range(ptr[i], ptr[i + 1]):
            v = idx[j]
            if v <= u:
                continue
            b = label[v]
            if b == a:
                continue
            if multicast:
                seen = False
                for q in range(k0, k):
                    if dst[q] == b:
                        seen = True
                        break
                if seen:
                    continue
            src[k] = a
            dst[k] = b
            ww[k] = 1 if multicast else w[j]
            k += 1
    return src[:k], dst[:k], ww[:k]


def flows_on_disk(reader: Any, label: np.ndarray, n_labels: int, multicast: bool = False,
                  batch: int = 65536) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``neurongraph.directed_flows`` (or ``multicast_flows``) of a graph on disk, one
    sequential pass: ``(src, dst, w)`` aggregated per label pair, sorted by (src, dst)."""
    lab = np.ascontiguousarray(label, dtype=np.int64)
    keys = np.zeros(0, np.int64)
    vals = np.zeros(0, np.int64)
    for v0, ptr, idx, w in reader.batches(batch):
        a, b, x = _row_flows(ptr, idx.astype(np.int64), w, v0, lab, multicast)
        k = np.concatenate([keys, a * n_labels + b])
        x = np.concatenate([vals, x])
        order = np.argsort(k, kind="stable")
        k, x = k[order], x[order]
        if k.size == 0:
            continue
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        keys, vals = k[starts], np.add.reduceat(x, starts)  # int64: exact sums
    src, dst = np.divmod(keys, n_labels)
    return src, dst, vals


def coarsen_on_disk(path: str | os.PathLike[str], workdir: str | os.PathLike[str],
                    capacity: int, open_reader: Callable[[Path], Any],
                    open_writer: Callable[[Path, np.ndarray], Any], seed: int = 0,
                    tries: int = TRIES, merge_fraction: float = MERGE_FRACTION,
                    min_reduction: float = MIN_REDUCTION, max_levels: int = 64,
                    progress: Callable[[str], None] | None = None
                    ) -> tuple[list[Path], list[np.ndarray]]:
    """Seed 004 step 2 entirely on disk: level files ``workdir/level1.zip`` … until a level
    removes less than ``min_reduction`` of the vertices. Returns (paths of the levels,
    original first; cmaps). Same seed ⇒ same levels as :func:`.multilevel.coarsen`."""
    rng = np.random.default_rng(seed)
    wd = Path(workdir)
    wd.mkdir(parents=True, exist_ok=True)
    paths, cmaps = [Path(path)], []
    for lvl in range(1, max_levels + 1):
        dst = wd / f"level{lvl}.zip"
        with open_reader(paths[-1]) as r:
            n = r.n
            got = coarsen_stream_level(r, lambda s, dst=dst: open_writer(dst, s), capacity,
                                       rng, tries, merge_fraction)
        if got is None:
            break
        cmap, nc, _ = got
        paths.append(dst)
        cmaps.append(cmap)
        if progress is not None:
            progress(f"level {lvl}: {nc:,} vertices on disk")
        if 1 - nc / n < min_reduction:
            break
    return paths, cmaps


@dataclass(frozen=True, eq=False)
class DiskMapping:
    """Seed 004 end to end on a graph on disk: ``group[v]`` and ``group_core[g]`` (the
    vertex → core map is ``group_core[group]``), the cut tracked through the steps, the
    quotient graph of the groups, and per-stage statistics."""

    group: np.ndarray
    group_core: np.ndarray
    cut: int
    quotient: NeuronGraph
    stats: dict


def seed004_on_disk(path: str | os.PathLike[str], workdir: str | os.PathLike[str],
                    capacity: int, rows: int, cols: int, open_reader: Callable[[Path], Any],
                    open_writer: Callable[[Path, np.ndarray], Any], seed: int = 0,
                    tries: int = TRIES, merge_fraction: float = MERGE_FRACTION,
                    min_reduction: float = MIN_REDUCTION, starts: int = STARTS,
                    passes: int = 1, top_fraction: float = TOP_FRACTION,
                    max_iter: int = MAX_ITER, keep_levels: bool = False,
                    progress: Callable[[str], None] | None = None,
                    multicast: bool = False) -> DiskMapping:
    """Seed 004 steps 2–8 with every graph of more than the coarsest level kept on disk
    (§ 64: the graph is saved to the file system): coarsening level files
    (:func:`coarsen_on_disk`), the coarsest level loaded for the recursive bisection,
    the refinement before each projection read from each level's file in its random
    order (:func:`refine_on_disk`), surplus groups of a tight mesh dissolved
    (:func:`.placement.fit_to_cores`, reading the rows of their vertices), the groups'
    quotient graph read from the original file (:func:`contract_on_disk`; with
    ``multicast`` the packet graph, from :func:`flows_on_disk`), then the placement and
    force-directed steps on the quotient in memory. Memory: O(n) (the cmaps, the parts
    and the zip directories), one batch of rows, and the coarsest level while it is
    bisected. Same seed ⇒ the same mapping as the ``seed004`` method on the graph in
    memory (tested). Level files are deleted at the end unless ``keep_levels``. Fails
    (one line) only where the in-memory method does: a graph that does not fit
    ``rows × cols`` cores."""
    ss = np.random.SeedSequence(seed).generate_state(2)
    ps = np.random.SeedSequence(int(ss[0])).generate_state(3)
    stats: dict[str, Any] = {"stage_s": {}}
    clock = time.perf_counter()

    def done(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        stats["stage_s"][stage] = round(now - clock, 3)
        clock = now

    paths, cmaps = coarsen_on_disk(path, workdir, capacity, open_reader, open_writer,
                                   int(ps[0]), tries, merge_fraction, min_reduction,
                                   progress=progress)
    done("coarsen")
    try:
        with open_reader(paths[-1]) as r:
            if progress is not None:
                progress(f"loading the coarsest level: {r.n:,} vertices, {r.m:,} edges")
            # a level file is this function's own output, symmetric by construction; the
            # user's file (no level merged anything) is checked
            coarsest = r.load(check_symmetry=len(paths) == 1)
        part, cut = recursive_bisection(coarsest, capacity, int(ps[1]), starts)
        nparts = int(part.max()) + 1
        del coarsest
        if progress is not None:
            progress(f"initial partition: {nparts:,} parts")
        done("initial_partition")
        rng = np.random.default_rng(int(ps[2]))
        delta = 0
        moves = []
        for lvl in range(len(paths) - 1, 0, -1):
            with open_reader(paths[lvl]) as r:
                d, mv = refine_on_disk(r, part, nparts, capacity, rng, passes)
            delta += d
            moves.append(mv)
            part = part[cmaps[lvl - 1]]
            if progress is not None:
                progress(f"refined level {lvl}: {mv:,} moves")
        done("uncoarsen")
        stats["level_bytes"] = [Path(p).stat().st_size for p in paths]
    finally:
        if not keep_levels:
            for p in paths[1:]:
                Path(p).unlink(missing_ok=True)
    group, n_groups = pack_groups(part)
    del part
    cut = int(cut + delta)
    tight = n_groups > rows * cols
    with open_reader(Path(path)) as r:
        if tight:  # as the in-memory method's `_fit`
            group, n_groups, fit = fit_to_cores(r, group, n_groups, capacity, rows * cols)
            stats.update(fit)
            done("fit")
        q = contract_on_disk(r, group, n_groups)
        if tight:
            cut = q.total_weight  # the synapse quotient's edges are the cut
        if multicast:  # place on the packet graph, as every in-memory method does
            src, dst, pk = flows_on_disk(r, group, n_groups, multicast=True)
            q = NeuronGraph.from_edges(q.sizes, src, dst, pk, name="quotient/multicast")
    done("quotient")
    if progress is not None:
        progress(f"placing {n_groups:,} groups on {rows}×{cols}")
    gc = place_recursive_bisection(q, rows, cols, int(ss[1]), starts)
    done("bisection_placement")
    gc, fs = force_directed(q, gc, rows, cols, top_fraction, max_iter)
    done("force_directed")
    stats.update({"levels": len(cmaps), "initial_parts": nparts, "groups": n_groups,
                  "initial_cut": int(cut), "refine_moves": moves, **fs,
                  "level_vertices": [int(c.max()) + 1 for c in cmaps]})
    return DiskMapping(group, gc, cut, q, stats)


@dataclass(frozen=True, eq=False)
class DiskResult:
    """Seed 004 on a graph file: the vertex → core map (``core``), the instance's
    objective and the evaluator's metrics, the mapping's groups and statistics."""

    core: np.ndarray
    objective: float
    metrics: dict
    mapping: DiskMapping
    instance: Instance

    @property
    def stats(self) -> dict:
        return self.mapping.stats


def seed004_zip(path: str | os.PathLike[str], hardware: Hardware,
                open_reader: Callable[[Path], Any],
                open_writer: Callable[[Path, np.ndarray], Any], rows: int | None = None,
                cols: int | None = None, objective: str = "traffic", seed: int = 0,
                workdir: str | os.PathLike[str] | None = None, keep_levels: bool = False,
                progress: Callable[[str], None] | None = None, **params: Any) -> DiskResult:
    """Map the graph in the store ``path`` (``open_reader``/``open_writer``: e.g.
    ``chipsched.instances.core_assignment.ondisk.ZIP_STORE``) with seed 004 without
    loading it:
    the core capacity from ``hardware`` (a neuromorphic chip), the mesh ``rows × cols``
    (default: sized to fit, as the named instances), coarsening levels written to
    ``workdir`` (default: a temporary folder next to ``path``), then the evaluator's
    metrics from flows streamed off the file. ``params``: seed 004's settings
    (``tries``, ``merge_fraction``, ``min_reduction``, ``starts``, ``passes``,
    ``top_fraction``, ``max_iter``)."""
    path = Path(path)
    cap = chip_capacity(hardware)
    with open_reader(path) as r:
        sizes = r.sizes
        n = r.n
    total = int(sizes.sum())
    if rows is None or cols is None:
        rows, cols = fit_mesh(total, cap)
    if total > rows * cols * cap:
        raise InputError("cores", f"total size {total:,} exceeds {rows}×{cols}×{cap}",
                         "use a larger array")
    own_tmp = workdir is None
    wd = Path(tempfile.mkdtemp(prefix=".levels-", dir=path.parent)) if own_tmp \
        else Path(workdir)
    try:
        mapping = seed004_on_disk(path, wd, cap, rows, cols, open_reader, open_writer,
                                  seed, keep_levels=keep_levels, progress=progress,
                                  multicast=objective == "multicast", **params)
    finally:
        if own_tmp and not keep_levels:
            for p in wd.glob("*"):
                p.unlink(missing_ok=True)
            wd.rmdir()
    t = time.perf_counter()
    core = mapping.group_core[mapping.group]
    n_cores = rows * cols
    if progress is not None:
        progress("evaluating from the file")
    with open_reader(path) as r:
        flows = flows_on_disk(r, core, n_cores)
        packets = flows_on_disk(r, core, n_cores, multicast=True)
    loads = np.bincount(core, weights=sizes, minlength=n_cores).astype(np.int64)
    # the group-level instance carries the mesh, the chip and the objective; the flows
    # above are the vertex-level ones (the quotient graph has no edge directions)
    inst = Instance(path.stem, mapping.quotient, hardware, rows, cols, cap,
                    objective=objective, meta={"source": str(path), "vertices": n})
    value, metrics = evaluate_flows(inst, loads, flows, packets)
    mapping.stats["stage_s"]["evaluate"] = round(time.perf_counter() - t, 3)
    return DiskResult(core, value, metrics, mapping, inst)
