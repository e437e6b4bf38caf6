"""METIS graph files (the format of METIS's manual, §4.1.1: header ``n m [fmt [ncon]]``,
one line per vertex): a streaming reader with file:line errors and a chunked writer."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.files import atomic_write
from chipsched.neurongraph import NeuronGraph


def _metis_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-comment lines; empty lines are kept (in METIS an
    empty vertex line is an isolated vertex)."""
    try:
        with open(path, encoding="ascii") as fh:
            for i, line in enumerate(fh, start=1):
                if line.startswith("%"):
                    continue
                yield i, line.rstrip("\r\n")
    except UnicodeDecodeError:
        raise InputError(str(path), "not a METIS graph file (binary data)",
                         "give a text file in METIS format") from None


def _metis_header(path: Path, lines: Iterator[tuple[int, str]]) -> tuple[int, int, bool, bool,
                                                                          bool, int]:
    for ln, text in lines:
        if not text.strip():
            continue
        parts = text.split()
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            raise InputError(f"{path}:{ln}", f"malformed METIS header {text.strip()!r}",
                             "the first line is 'n m [fmt [ncon]]'") from None
        if len(nums) < 2 or len(nums) > 4 or nums[0] < 0 or nums[1] < 0:
            raise InputError(f"{path}:{ln}", f"malformed METIS header {text.strip()!r}",
                             "the first line is 'n m [fmt [ncon]]'")
        fmt = parts[2] if len(parts) > 2 else "0"
        if len(fmt) > 3 or any(ch not in "01" for ch in fmt):
            raise InputError(f"{path}:{ln}", f"unknown METIS fmt {fmt!r}",
                             "fmt is up to three 0/1 digits (vsize, vwgt, ewgt)")
        fmt = fmt.zfill(3)
        has_vsize, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
        ncon = nums[3] if len(nums) > 3 else (1 if has_vw else 0)
        if ncon > 1:
            raise InputError(f"{path}:{ln}", f"{ncon} vertex weights per vertex",
                             "core_assignment reads one vertex weight (the size)")
        if not (0 < nums[0] <= 2**31 and 0 <= nums[1] <= 2**40):
            raise InputError(f"{path}:{ln}", f"implausible METIS header: n = {nums[0]}, "
                             f"m = {nums[1]}", "n is the vertex count (1..2^31), m the "
                             "edge count (0..2^40)")
        return nums[0], nums[1], has_vsize, has_vw, has_ew, ncon
    raise InputError(str(path), "empty METIS file", "the first line is 'n m [fmt [ncon]]'")


def _parse_vertex_line(path: Path, ln: int, text: str, n: int, has_vsize: bool, ncon: int,
                       has_ew: bool) -> tuple[int, np.ndarray, np.ndarray]:
    try:
        vals = np.array(text.split(), dtype=np.int64)
    except (ValueError, OverflowError):
        raise InputError(f"{path}:{ln}", "non-integer entry in a vertex line",
                         "METIS vertex lines hold integers only") from None
    head = int(has_vsize) + ncon
    if vals.shape[0] < head:
        raise InputError(f"{path}:{ln}", "vertex line too short for the header's fmt")
    size = int(vals[int(has_vsize)]) if ncon else 1
    rest = vals[head:]
    if has_ew:
        if rest.shape[0] % 2:
            raise InputError(f"{path}:{ln}", "odd number of entries in (neighbour, weight) "
                             "pairs", "fmt ...1 lists a weight after every neighbour")
        nb_, w = rest[0::2], rest[1::2]
    else:
        nb_, w = rest, np.ones(rest.shape[0], np.int64)
    if size < 0:
        raise InputError(f"{path}:{ln}", f"negative vertex weight {size}")
    if nb_.size and (nb_.min() < 1 or nb_.max() > n):
        raise InputError(f"{path}:{ln}", f"neighbour {int(nb_[(nb_ < 1) | (nb_ > n)][0])} "
                         f"out of range", f"neighbours are 1..{n}")
    if w.size and w.min() <= 0:
        raise InputError(f"{path}:{ln}", f"non-positive edge weight {int(w.min())}",
                         "METIS edge weights are > 0")
    return size, nb_ - 1, w


def read_metis(path: str | os.PathLike[str], name: str | None = None) -> NeuronGraph:
    """Read a METIS graph file (``n m [fmt [ncon]]``, 1-based, both directions listed;
    vertex weights become sizes, default 1; edge weights default 1). Checks counts,
    ranges, self-loops, duplicates and symmetry; errors name the file and line."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "file not found", "check the path")
    lines = _metis_lines(p)
    n, m, has_vsize, _, has_ew, ncon = _metis_header(p, lines)
    sizes = np.ones(n, np.int64)
    counts = np.zeros(n + 1, np.int64)
    nbrs: list[np.ndarray] = []
    wts: list[np.ndarray] = []
    v = 0
    last_ln = 0
    for ln, text in lines:
        last_ln = ln
        if v >= n:
            if text.strip():
                raise InputError(f"{p}:{ln}", f"more than n = {n} vertex lines",
                                 "fix n in the header or remove the extra lines")
            continue
        size, nb_, w = _parse_vertex_line(p, ln, text, n, has_vsize, ncon, has_ew)
        if (nb_ == v).any():
            raise InputError(f"{p}:{ln}", f"self-loop on vertex {v + 1}",
                             "METIS graphs have no self-loops")
        sizes[v] = size
        counts[v + 1] = nb_.shape[0]
        nbrs.append(nb_)
        wts.append(w)
        v += 1
    if v < n:
        raise InputError(f"{p}:{last_ln}", f"only {v} vertex lines, the header says {n}",
                         "the file is truncated or n is wrong")
    indptr = np.cumsum(counts)
    if indptr[-1] != 2 * m:
        raise InputError(str(p), f"{indptr[-1]} adjacency entries, the header's m = {m} "
                         f"needs {2 * m}", "every edge is listed at both of its ends")
    indices = np.concatenate(nbrs) if nbrs else np.zeros(0, np.int64)
    weights = np.concatenate(wts) if wts else np.zeros(0, np.int64)
    g = NeuronGraph(sizes, indptr, indices, weights, name or p.stem, {"source": str(p)})
    return g.validate(str(p))


def write_metis(path: str | os.PathLike[str], graph: NeuronGraph, chunk: int = 65536) -> Path:
    """Write a METIS graph file (fmt 011: sizes and edge weights; 001 when all sizes
    are 1), atomically."""
    unit = bool((graph.sizes == 1).all())

    def write(fh: Any) -> None:
        fh.write(f"{graph.n} {graph.m} {'001' if unit else '011'}\n")
        for v0 in range(0, graph.n, chunk):
            v1 = min(graph.n, v0 + chunk)
            out = []
            for v in range(v0, v1):
                a, b = graph.indptr[v], graph.indptr[v + 1]
                pairs = np.empty(2 * (b - a), np.int64)
                pairs[0::2] = graph.indices[a:b] + 1
                pairs[1::2] = graph.weights[a:b]
                body = " ".join(map(str, pairs.tolist()))
                out.append(body if unit else f"{int(graph.sizes[v])} {body}".rstrip())
            fh.write("\n".join(out) + "\n")

    return atomic_write(path, write)
