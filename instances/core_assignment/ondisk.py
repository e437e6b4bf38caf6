"""Graphs that never sit in memory whole: writing a generated graph straight into the
seed-004 zip, and seed 004 end to end on such a zip (``streaming.seed004_on_disk``)
with the shared evaluator's metrics computed from flows streamed off the file.

The document's storage and scale claim (seed 004 § 24–25, 64: "hundreds of millions of
connections … saved to the file system"); memory is O(vertices), never O(edges):
``benchmarks/core_assignment_scale.py --on-disk`` measures it.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.heuristics.core_assignment.streaming import (
    DiskMapping,
    flows_on_disk,
    seed004_on_disk,
)
from chipsched.instances.core_assignment.formats import SeedZipReader, SeedZipWriter
from chipsched.neurongraph import layered_random_batches
from chipsched.problems.core_assignment import Instance, chip_capacity, evaluate_flows, fit_mesh


def write_layered_zip(path: str | os.PathLike[str], layers: int, width: int, fanin: int,
                      window: int | None = None, max_weight: int = 1, seed: int = 0,
                      batch: int = 65536, progress: Callable[[str], None] | None = None
                      ) -> Path:
    """:func:`chipsched.neurongraph.layered_random`'s graph written straight into a
    seed-004 zip, batch by batch (:func:`chipsched.neurongraph.layered_random_batches`):
    the same graph as ``write_zip(path, layered_random(...))`` without holding it —
    memory O(vertices + batch·fanin). Atomic (a temporary file renamed on success)."""
    n = int(layers) * int(width)
    with SeedZipWriter(path, np.ones(n, np.int64)) as out:
        for v0, ptr, idx, w in layered_random_batches(layers, width, fanin, window,
                                                      max_weight, seed, batch):
            out.add_rows(ptr, idx, w)
            if progress is not None and (v0 // batch) % 64 == 0:
                progress(f"writing vertex {v0:,} of {n:,}")
    return Path(path)


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


def seed004_zip(path: str | os.PathLike[str], hardware: Hardware, rows: int | None = None,
                cols: int | None = None, objective: str = "traffic", seed: int = 0,
                workdir: str | os.PathLike[str] | None = None, keep_levels: bool = False,
                progress: Callable[[str], None] | None = None, **params: Any) -> DiskResult:
    """Map the graph in the seed-004 zip ``path`` with seed 004 without loading it:
    the core capacity from ``hardware`` (a neuromorphic chip), the mesh ``rows × cols``
    (default: sized to fit, as the named instances), coarsening levels written to
    ``workdir`` (default: a temporary folder next to ``path``), then the evaluator's
    metrics from flows streamed off the file. ``params``: seed 004's settings
    (``tries``, ``merge_fraction``, ``min_reduction``, ``starts``, ``passes``,
    ``top_fraction``, ``max_iter``)."""
    path = Path(path)
    cap = chip_capacity(hardware)
    with SeedZipReader(path) as r:
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
        mapping = seed004_on_disk(path, wd, cap, rows, cols, SeedZipReader,
                                  lambda p, s: SeedZipWriter(p, s), seed,
                                  keep_levels=keep_levels, progress=progress, **params)
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
    with SeedZipReader(path) as r:
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
