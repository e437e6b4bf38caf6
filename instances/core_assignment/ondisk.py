"""Graphs that never sit in memory whole: writing a generated graph straight into the
seed-004 zip, and the zip store (reader, writer factory) that seed 004's out-of-core
pipeline (``chipsched.heuristics.core_assignment.streaming.seed004_zip``) takes —
heuristics do not import instances, so the caller hands the store over:

    from chipsched.heuristics.core_assignment.streaming import seed004_zip
    from chipsched.instances.core_assignment.ondisk import ZIP_STORE, write_layered_zip
    write_layered_zip("big.zip", 21, 100_000, 50)
    res = seed004_zip("big.zip", chipsched.get_chip("neuro-8x8"), *ZIP_STORE)

The document's storage and scale claim (seed 004 § 24–25, 64: "hundreds of millions of
connections … saved to the file system"); memory is O(vertices) plus one batch of rows
and the coarsest level: ``benchmarks/core_assignment_scale.py --on-disk`` measures it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from chipsched.instances.core_assignment.formats import SeedZipReader, SeedZipWriter
from chipsched.neurongraph import layered_random_batches


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


def _zip_writer(path: Path, sizes: np.ndarray) -> SeedZipWriter:
    return SeedZipWriter(path, sizes)


#: The seed-004 zip as a graph store: (open a reader, open a writer for given sizes).
ZIP_STORE = (SeedZipReader, _zip_writer)
