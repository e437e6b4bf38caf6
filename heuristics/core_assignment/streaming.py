"""Seed 004 step 2 on disk: coarsening a graph that is not held in memory.

The document keeps every graph in files (§ 64: "a network with hundreds of millions of
connections … is saved to the file system"). One coarsening level needs, per vertex,
only its heaviest edge (§ 67), which one sequential pass over the edge files gives in
O(n) memory; the 4–8 marking tries then run in memory on those O(n) arrays, and the
coarse graph is written vertex by vertex from the members' edge lists. Memory is O(n)
(plus one batch of edges), never O(edges).

This module works on any *graph store* with the protocol of
:class:`chipsched.instances.core_assignment.SeedZipReader` (``n``, ``sizes``,
``batches(size)``, ``read_rows(vertices)``) and a writer factory with the protocol of
:class:`~chipsched.instances.core_assignment.SeedZipWriter` (``add_rows``, context
manager) — the face wires them (heuristics do not import instances). For the same
generator state the result is identical to :func:`.multilevel.coarsen_level` in memory
(a test checks it).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.neurongraph import merge_rows

from .multilevel import (
    _EPS,
    MERGE_FRACTION,
    MIN_REDUCTION,
    TRIES,
    _cmap_from_mate,
    _heaviest_rows,
    match_heavy_edges,
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
    members = np.argsort(cmap, kind="stable")  # fine vertices grouped by coarse id
    mstart = np.zeros(nc + 1, np.int64)
    np.add.at(mstart, cmap + 1, 1)
    mstart = np.cumsum(mstart)
    with make_writer(csizes) as out:
        for c0 in range(0, nc, batch):
            c1 = min(nc, c0 + batch)
            mem = members[mstart[c0]:mstart[c1]]
            ptr, idx, w = reader.read_rows(mem)
            # the rows come in member order, so row i of the batch is mem[i]; the kernel is
            # NeuronGraph.contract's, hence the same edge order as the in-memory coarsening
            optr, oi, ow = merge_rows(ptr, idx, w, np.arange(mem.shape[0]),
                                      mstart[c0:c1 + 1] - mstart[c0], cmap, nc, c0,
                                      np.empty(0, np.int64))
            out.add_rows(optr, oi, ow)
    return cmap, int(nc), int(best_red)


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
