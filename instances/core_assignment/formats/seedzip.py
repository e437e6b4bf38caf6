"""The seed-004 varint + deflate zip with a streaming reader and writer.

Seed-004 zip (``docs/sources.md``; the document fixes the varint coding,
per-vertex edge files and deflate, the member names and the header are ours)::

    header      varints: format version (1), n (vertices), m (undirected edges)
    sizes       n varints: vertex sizes in id order
    edges/<v>   one member per vertex (decimal id): varint edge count, then per edge
                four varints: flag, other vertex id, other vertex's size, weight
                (flag 1 = the edge leaves v, i.e. v < other; 0 = it enters v)

Varints: 7 bits per byte, least significant group first, high bit 1 = more bytes follow
(the document's figure 2 coding). All members are deflate-compressed.
Memory: the streaming reader and writer hold O(n) data (sizes, Python's zip directory —
about 0.3–0.5 KB per vertex), never the edges of more than one batch.
"""

from __future__ import annotations

import itertools
import os
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np

from chipsched.errors import InputError
from chipsched.files import atomic_write
from chipsched.neurongraph import NeuronGraph, index_dtype

from .metis import _metis_header, _metis_lines, _parse_vertex_line


@nb.njit(cache=True)
def encode_varints(values):  # pragma: no cover - numba
    """LEB128-style varints of non-negative int64 values (7 bits per byte, high bit 1 =
    more bytes follow)."""
    out = np.empty(values.shape[0] * 10, np.uint8)
    k = 0
    for i in range(values.shape[0]):
        x = np.uint64(values[i])
        while x >= np.uint64(0x80):
            out[k] = np.uint8((x & np.uint64(0x7F)) | np.uint64(0x80))
            x >>= np.uint64(7)
            k += 1
        out[k] = np.uint8(x)
        k += 1
    return out[:k]


@nb.njit(cache=True)
def decode_varints(buf, count):  # pragma: no cover - numba
    """Decode up to ``count`` varints from ``buf`` (count < 0: all). Returns
    ``(values, bytes_used, ok)``; ``ok`` is False on a truncated or over-long varint."""
    cap = buf.shape[0] if count < 0 else count
    out = np.empty(cap, np.int64)
    k = 0
    i = 0
    while i < buf.shape[0] and (count < 0 or k < count):
        x = np.uint64(0)
        shift = 0
        while True:
            if i >= buf.shape[0] or shift > 63:
                return out[:k], i, False
            b = buf[i]
            i += 1
            x |= np.uint64(b & 0x7F) << np.uint64(shift)
            if b < 0x80:
                break
            shift += 7
        if x > np.uint64(9223372036854775807):
            return out[:k], i, False
        out[k] = np.int64(x)
        k += 1
    return out[:k], i, True


@nb.njit(cache=True)
def _decode_batch(buf, offsets, verts, n, sizes):  # pragma: no cover - numba
    """Decode the edge members of vertices ``verts`` (bytes concatenated, member i at
    buf[offsets[i]:offsets[i+1]]) into CSR rows; check every field. Returns
    (indptr, indices, weights, err_vertex, err_code)."""
    nv = offsets.shape[0] - 1
    total = 0
    # first pass: counts
    counts = np.zeros(nv, np.int64)
    for i in range(nv):
        vals, used, ok = decode_varints(buf[offsets[i]:offsets[i + 1]], 1)
        if not ok or vals.shape[0] != 1:
            return (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                    verts[i], 1)
        # every edge takes four varints of at least one byte: a count the member cannot
        # hold is corrupt, and must not size the allocation below
        if vals[0] < 0 or 1 + 4 * vals[0] > offsets[i + 1] - offsets[i]:
            return (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                    verts[i], 2)
        counts[i] = vals[0]
        total += vals[0]
    indptr = np.zeros(nv + 1, np.int64)
    indices = np.empty(total, np.int64)
    weights = np.empty(total, np.int64)
    for i in range(nv):
        v = verts[i]
        vals, used, ok = decode_varints(buf[offsets[i]:offsets[i + 1]], -1)
        if not ok:
            return indptr, indices, weights, v, 1
        c = counts[i]
        if vals.shape[0] != 1 + 4 * c:
            return indptr, indices, weights, v, 2
        indptr[i + 1] = indptr[i] + c
        for e in range(c):
            flag = vals[1 + 4 * e]
            other = vals[2 + 4 * e]
            osize = vals[3 + 4 * e]
            w = vals[4 + 4 * e]
            if other < 0 or other >= n or other == v:
                return indptr, indices, weights, v, 3
            if flag != (1 if v < other else 0):
                return indptr, indices, weights, v, 4
            if osize != sizes[other]:
                return indptr, indices, weights, v, 5
            if w <= 0:
                return indptr, indices, weights, v, 6
            indices[indptr[i] + e] = other
            weights[indptr[i] + e] = w
    return indptr, indices, weights, -1, 0


@nb.njit(cache=True)
def _encode_rows(indptr, indices, weights, v0, sizes):  # pragma: no cover - numba
    """Encode rows (local CSR of vertices v0..) into member bytes; returns (buf, offsets)."""
    nv = indptr.shape[0] - 1
    vals = np.empty(nv + 4 * indices.shape[0], np.int64)
    voff = np.zeros(nv + 1, np.int64)
    k = 0
    for i in range(nv):
        v = v0 + i
        vals[k] = indptr[i + 1] - indptr[i]
        k += 1
        for j in range(indptr[i], indptr[i + 1]):
            o = indices[j]
            vals[k] = 1 if v < o else 0
            vals[k + 1] = o
            vals[k + 2] = sizes[o]
            vals[k + 3] = weights[j]
            k += 4
        voff[i + 1] = k
    out = np.empty(vals.shape[0] * 10, np.uint8)
    offs = np.zeros(nv + 1, np.int64)
    b = 0
    for i in range(nv):
        for q in range(voff[i], voff[i + 1]):
            x = np.uint64(vals[q])
            while x >= np.uint64(0x80):
                out[b] = np.uint8((x & np.uint64(0x7F)) | np.uint64(0x80))
                x >>= np.uint64(7)
                b += 1
            out[b] = np.uint8(x)
            b += 1
        offs[i + 1] = b
    return out[:b], offs


_ERRORS = {1: "truncated varint", 2: "edge count does not match the data",
           3: "neighbour id out of range or a self-loop", 4: "direction flag inconsistent",
           5: "neighbour size differs from the sizes member", 6: "non-positive weight"}

FORMAT_VERSION = 1


def _corrupt(path: Any, what: str) -> InputError:
    return InputError(str(path), f"corrupt seed-004 zip: {what}",
                      "re-export the graph (chipsched.instances.core_assignment.write_zip)")


@nb.njit(cache=True)
def _le(buf, at, nbytes):  # pragma: no cover - numba
    x = np.int64(0)
    for i in range(nbytes - 1, -1, -1):
        x = (x << 8) | np.int64(buf[at + i])
    return x


@nb.njit(cache=True)
def _parse_central(buf, off, csize, usize, crc, method, named):  # pragma: no cover
    """Entries of a chunk of a zip's central directory (APPNOTE 4.3.12, zip64 extra
    4.5.3): ``edges/<v>`` into the arrays at index v, ``header``/``sizes`` into
    ``named[0|1]`` = (offset, compressed, plain, CRC, method). Stops at an entry cut by
    the chunk's end. Returns (bytes consumed, error code, vertex or entry of the error):
    1 bad signature, 2 a bad ``edges/`` name, 3 a vertex out of range, 4 a repeated
    vertex."""
    pos = 0
    end = buf.shape[0]
    cap = off.shape[0]
    while pos + 46 <= end:
        if _le(buf, pos, 4) != 0x02014B50:
            return pos, 1, -1
        meth = _le(buf, pos + 10, 2)
        crcv = _le(buf, pos + 16, 4)
        c = _le(buf, pos + 20, 4)
        u = _le(buf, pos + 24, 4)
        nl = _le(buf, pos + 28, 2)
        xl = _le(buf, pos + 30, 2)
        cl = _le(buf, pos + 32, 2)
        lo = _le(buf, pos + 42, 4)
        total = 46 + nl + xl + cl
        if pos + total > end:
            break
        if c == 0xFFFFFFFF or u == 0xFFFFFFFF or lo == 0xFFFFFFFF:
            q = pos + 46 + nl
            xe = q + xl
            while q + 4 <= xe:
                hid = _le(buf, q, 2)
                hs = _le(buf, q + 2, 2)
                if hid == 1:
                    r = q + 4
                    if u == 0xFFFFFFFF and r + 8 <= q + 4 + hs:
                        u = _le(buf, r, 8)
                        r += 8
                    if c == 0xFFFFFFFF and r + 8 <= q + 4 + hs:
                        c = _le(buf, r, 8)
                        r += 8
                    if lo == 0xFFFFFFFF and r + 8 <= q + 4 + hs:
                        lo = _le(buf, r, 8)
                q += 4 + hs
        nm = pos + 46
        slot = -1
        if nl > 6 and buf[nm] == 101 and buf[nm + 1] == 100 and buf[nm + 2] == 103 and \
                buf[nm + 3] == 101 and buf[nm + 4] == 115 and buf[nm + 5] == 47:  # edges/
            v = np.int64(0)
            for i in range(nm + 6, nm + nl):
                d = np.int64(buf[i]) - 48
                if d < 0 or d > 9 or nl > 6 + 18:
                    return pos, 2, -1
                v = 10 * v + d
            if v >= cap:
                return pos, 3, v
            if off[v] >= 0:
                return pos, 4, v
            off[v] = lo
            csize[v] = c
            usize[v] = u
            crc[v] = crcv
            method[v] = meth
        elif nl == 6 and buf[nm] == 104 and buf[nm + 1] == 101 and buf[nm + 2] == 97:  # hea
            slot = 0
        elif nl == 5 and buf[nm] == 115 and buf[nm + 1] == 105 and buf[nm + 2] == 122:  # siz
            slot = 1
        if slot >= 0:
            named[slot, 0] = lo
            named[slot, 1] = c
            named[slot, 2] = u
            named[slot, 3] = crcv
            named[slot, 4] = meth
        pos += total
    return pos, 0, -1


class SeedZipReader:
    """Streaming reader of the seed-004 zip: O(n) memory (sizes and where each member
    lies, 33 bytes per vertex), edges read one vertex or one batch at a time.

    ``reader.n``, ``reader.m``, ``reader.sizes``; ``reader.vertex(v)`` → ``(neighbours,
    weights)``; ``reader.batches(size)`` yields ``(v0, indptr, indices, weights)`` for
    consecutive vertex ranges; ``reader.load()`` builds the whole :class:`NeuronGraph`
    (symmetry checked). Use as a context manager.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(str(self.path), "file not found", "check the path")
        self._fh = None
        try:
            self._fh = open(self.path, "rb")  # noqa: SIM115 - closed by close()
            self._directory()
            head = self._named(0, "header")
            vals, _, ok = decode_varints(np.frombuffer(head, np.uint8), -1)
            if not ok or vals.shape[0] != 3 or vals[0] != FORMAT_VERSION:
                raise _corrupt(self.path, "bad header member")
            self.n, self.m = int(vals[1]), int(vals[2])
            if self.n > self._off.shape[0]:  # fewer members than vertices
                gaps = np.flatnonzero(self._off < 0)
                first = int(gaps[0]) if gaps.size else self._off.shape[0]
                raise _corrupt(self.path, f"member 'edges/{first}' missing (the header "
                               f"says n = {self.n})")
            sz, _, ok = decode_varints(np.frombuffer(self._named(1, "sizes"), np.uint8), -1)
            if not ok or sz.shape[0] != self.n:
                raise _corrupt(self.path, f"sizes member holds {sz.shape[0]} values, "
                               f"header says n = {self.n}")
            self.sizes = sz
            extra = np.flatnonzero(self._off[self.n:] >= 0)
            if extra.size:
                raise _corrupt(self.path, f"member 'edges/{self.n + int(extra[0])}' beyond "
                               f"n = {self.n}")
            for k in ("_off", "_csize", "_usize", "_crc", "_method"):
                setattr(self, k, getattr(self, k)[:self.n].copy())
        except InputError:
            self.close()
            raise
        except (zlib.error, EOFError, OSError, ValueError, struct.error) as exc:
            self.close()
            raise _corrupt(self.path, f"{type(exc).__name__}: "
                           f"{str(exc).splitlines()[0] if str(exc) else ''}") from None

    def _directory(self) -> None:
        """Index the zip's central directory without Python's ``zipfile`` (whose
        ``ZipInfo`` per member costs ~0.5 KB): the end record (and the zip64 end record
        it points to), then the directory in 16 MiB chunks parsed by a numba kernel into
        numpy arrays — 33 bytes per member. Named members ``header``/``sizes`` go to
        ``self._named_at``."""
        fh = self._fh
        size = self.path.stat().st_size
        tail_len = min(size, 22 + 65535)
        fh.seek(size - tail_len)
        tail = fh.read(tail_len)
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or at + 22 > len(tail):
            raise _corrupt(self.path, "not a zip archive (no end of central directory)")
        entries, cd_size, cd_off = struct.unpack_from("<HII", tail, at + 10)
        if entries == 0xFFFF or cd_size == 0xFFFFFFFF or cd_off == 0xFFFFFFFF:
            loc = at - 20
            if loc < 0 or tail[loc:loc + 4] != b"PK\x06\x07":
                raise _corrupt(self.path, "zip64 end of central directory locator missing")
            (z64,) = struct.unpack_from("<Q", tail, loc + 8)
            fh.seek(z64)
            rec = fh.read(56)
            if len(rec) < 56 or rec[:4] != b"PK\x06\x06":
                raise _corrupt(self.path, "bad zip64 end of central directory record")
            entries, cd_size, cd_off = struct.unpack_from("<QQQ", rec, 32)
        if cd_off + cd_size > size:
            raise _corrupt(self.path, "central directory runs past the end of the file")
        cap = max(1, int(entries))
        self._off = np.full(cap, -1, np.int64)
        self._csize = np.zeros(cap, np.int64)
        self._usize = np.zeros(cap, np.int64)
        self._crc = np.zeros(cap, np.uint32)
        self._method = np.zeros(cap, np.uint8)
        named = np.full((2, 5), -1, np.int64)
        fh.seek(cd_off)
        left = int(cd_size)
        carry = b""
        while left > 0 or carry:
            chunk = fh.read(min(left, 16 << 20)) if left > 0 else b""
            left -= len(chunk)
            if left > 0 and not chunk:
                raise _corrupt(self.path, "central directory truncated")
            buf = np.frombuffer(carry + chunk, np.uint8)
            used, code, v = _parse_central(buf, self._off, self._csize, self._usize,
                                           self._crc, self._method, named)
            if code:
                what = {1: "bad central directory entry", 2: "bad member name 'edges/…'",
                        3: f"member 'edges/{v}' out of range",
                        4: f"member 'edges/{v}' repeated"}[int(code)]
                raise _corrupt(self.path, what)
            carry = bytes(buf[used:])
            if not chunk and carry:
                raise _corrupt(self.path, "central directory truncated")
        bad = np.flatnonzero((self._off >= 0) & ~np.isin(self._method, (0, 8)))
        if bad.size:
            raise _corrupt(self.path, f"member 'edges/{int(bad[0])}' is neither stored nor "
                           "deflated")
        past = np.flatnonzero((self._off >= 0) & (self._off + 30 + self._csize > size))
        if past.size:  # a directory that lies about a size must not size a read
            raise _corrupt(self.path, f"member 'edges/{int(past[0])}': its size runs past "
                           "the end of the file")
        self._named_at = named

    def _named(self, slot: int, name: str) -> bytes:
        off, cs, us, crc, meth = (int(x) for x in self._named_at[slot])
        if off < 0:
            raise _corrupt(self.path, f"member {name!r} missing")
        self._fh.seek(off)
        buf = self._fh.read(30 + 65535 * 2 + cs)
        return self._unpack(buf, 0, cs, us, crc, meth, name)

    def _members(self, verts: np.ndarray) -> list[bytes]:
        """The uncompressed ``edges/<v>`` members of ``verts`` (in that order), CRC
        and sizes checked. Members are read in file order; members that lie close
        together are fetched with one read."""
        off = self._off[verts]
        if off.size and off.min() < 0:
            v = int(verts[int(np.argmin(off))])
            raise _corrupt(self.path, f"member 'edges/{v}' missing")
        order = np.argsort(off, kind="stable")
        out: list[bytes] = [b""] * verts.shape[0]
        fh = self._fh
        # a member's bytes: 30-byte local header, its name, an extra field, the data
        ends = off + 30 + 64 + self._csize[verts]  # 64: name + extra, checked below
        i = 0
        k = verts.shape[0]
        while i < k:
            j = i + 1
            # one read for a run of members whose gaps are small
            while j < k and off[order[j]] - ends[order[j - 1]] < 4096 and \
                    ends[order[j]] - off[order[i]] < (16 << 20):
                j += 1
            base = int(off[order[i]])
            fh.seek(base)
            buf = fh.read(int(ends[order[j - 1]]) - base)
            for q in range(i, j):
                r = int(order[q])
                v = int(verts[r])
                out[r] = self._member(buf, int(off[r]) - base, v)
            i = j
        return out

    def _member(self, buf: bytes, at: int, v: int) -> bytes:
        return self._unpack(buf, at, int(self._csize[v]), int(self._usize[v]),
                            int(self._crc[v]), int(self._method[v]), f"edges/{v}",
                            int(self._off[v]))

    def _unpack(self, buf: bytes, at: int, csize: int, usize: int, crc: int, method: int,
                name: str, file_off: int | None = None) -> bytes:
        """The plain bytes of the member whose local header starts at ``buf[at]``
        (re-read from ``file_off`` when ``buf`` ends before its data does)."""
        if at + 30 > len(buf) or buf[at:at + 4] != b"PK\x03\x04":
            raise _corrupt(self.path, f"member {name!r}: bad local header")
        nlen, xlen = struct.unpack_from("<HH", buf, at + 26)
        start = at + 30 + nlen + xlen
        if start + csize > len(buf):
            if file_off is None:
                raise _corrupt(self.path, f"member {name!r}: truncated")
            self._fh.seek(file_off)
            buf = self._fh.read(30 + nlen + xlen + csize)
            start = 30 + nlen + xlen
            if len(buf) < start + csize:
                raise _corrupt(self.path, f"member {name!r}: truncated")
        data = buf[start:start + csize]
        try:
            raw = zlib.decompress(data, -15) if method == zipfile.ZIP_DEFLATED else data
        except zlib.error as exc:
            raise _corrupt(self.path, f"member {name!r}: {exc}") from None
        if len(raw) != usize or zlib.crc32(raw) != crc:
            raise _corrupt(self.path, f"member {name!r}: bad CRC or size")
        return raw

    def close(self) -> None:
        fh = getattr(self, "_fh", None)
        if fh is not None:
            fh.close()
            self._fh = None

    def __enter__(self) -> SeedZipReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def read_rows(self, vertices: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR rows ``(indptr, indices, weights)`` of the given vertices (any order)."""
        verts = np.asarray(vertices, dtype=np.int64)
        chunks = self._members(verts)
        offsets = np.zeros(len(chunks) + 1, np.int64)
        offsets[1:] = np.cumsum([len(c) for c in chunks])
        buf = np.frombuffer(b"".join(chunks), np.uint8)
        ptr, idx, w, bad, code = _decode_batch(buf, offsets, verts, self.n, self.sizes)
        if code:
            raise _corrupt(self.path, f"member edges/{bad}: {_ERRORS[int(code)]}")
        return ptr, idx, w

    def vertex(self, v: int) -> tuple[np.ndarray, np.ndarray]:
        """Neighbours and weights of vertex ``v``."""
        if not 0 <= v < self.n:
            raise InputError("vertex", f"{v} is not in 0..{self.n - 1}")
        _, idx, w = self.read_rows([v])
        return idx, w

    def batches(self, size: int = 65536) -> Iterator[tuple[int, np.ndarray, np.ndarray,
                                                          np.ndarray]]:
        """``(v0, indptr, indices, weights)`` for vertices v0..v0+len(indptr)-2."""
        for v0 in range(0, self.n, size):
            v1 = min(self.n, v0 + size)
            ptr, idx, w = self.read_rows(np.arange(v0, v1))
            yield v0, ptr, idx, w

    def load(self, name: str | None = None, check_symmetry: bool = True) -> NeuronGraph:
        """The whole graph in memory. Every field is checked as it is decoded (ids,
        direction flags, sizes, weights) and the edge count against the header;
        ``check_symmetry`` also checks that every edge is listed in both rows with one
        weight (:meth:`NeuronGraph.validate`, 16 transient bytes per edge entry) — the
        level files the out-of-core pipeline writes itself are symmetric by
        construction and skip it. The arrays are allocated once at their final size
        from the header's m (4 + 8 bytes per edge entry), filled batch by batch."""
        nnz = 2 * self.m
        indptr = np.zeros(self.n + 1, np.int64)
        indices = np.empty(nnz, index_dtype(self.n))
        weights = np.empty(nnz, np.int64)
        at = 0
        for v0, ptr, idx, w in self.batches():
            k = idx.shape[0]
            if at + k > nnz:
                raise _corrupt(self.path, f"more than the header's 2·m = {nnz} edge entries")
            indptr[v0 + 1:v0 + ptr.shape[0]] = ptr[1:] + at
            indices[at:at + k] = idx
            weights[at:at + k] = w
            at += k
        if at != nnz:
            raise _corrupt(self.path, f"{at} edge entries, header says m = {self.m}")
        g = NeuronGraph(self.sizes.copy(), indptr, indices, weights,
                        name or self.path.stem, {"source": str(self.path)})
        if not check_symmetry:
            return g
        try:
            return g.validate()
        except InputError as exc:
            raise _corrupt(self.path, exc.problem) from None


class _ZipOut:
    """A minimal zip writer for the seed-004 archive: deflated members written straight
    to the file, their directory kept as numpy arrays (28 bytes per member instead of
    Python's ~0.4 KB ``ZipInfo``), the central directory written at the end — with the
    zip64 records (APPNOTE 4.3.14–4.3.16) when there are more than 65,535 members or the
    archive passes 4 GiB — and a fixed timestamp (1980-01-01), so the same graph gives
    the same bytes. Members are named ``edges/<i>`` for i = 0, 1, … in order, then the
    named ones (``header``, ``sizes``)."""

    _LOCAL = struct.Struct("<IHHHHHIIIHH")
    _CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
    _TIME, _DATE = 0, (1 << 5) | 1  # 1980-01-01 00:00

    def __init__(self, fh: Any, compresslevel: int, force_zip64: bool = False):
        self.fh = fh
        self.level = compresslevel
        self.force_zip64 = force_zip64
        self.pos = 0
        self.count = 0
        cap = 1024
        self.off = np.zeros(cap, np.int64)
        self.csize = np.zeros(cap, np.int64)
        self.usize = np.zeros(cap, np.int64)
        self.crc = np.zeros(cap, np.uint32)
        self.named: list[tuple[bytes, int, int, int, int]] = []

    def _grow(self, need: int) -> None:
        cap = self.off.shape[0]
        if need <= cap:
            return
        new = max(need, 2 * cap)
        for k in ("off", "csize", "usize", "crc"):
            a = getattr(self, k)
            b = np.zeros(new, a.dtype)
            b[:a.shape[0]] = a
            setattr(self, k, b)

    def _write_member(self, name: bytes, raw: bytes) -> tuple[int, int, int, int]:
        # a member is a few hundred bytes: a 512-byte window and the smallest hash
        # state compress it as well and set the stream up 4x faster than the defaults
        c = zlib.compressobj(self.level, zlib.DEFLATED, -9, 1)
        data = c.compress(raw) + c.flush()
        crc = zlib.crc32(raw)
        head = self._LOCAL.pack(0x04034B50, 20, 0, 8, self._TIME, self._DATE, crc,
                                len(data), len(raw), len(name), 0)
        off = self.pos
        self.fh.write(head + name + data)
        self.pos += len(head) + len(name) + len(data)
        return off, len(data), len(raw), crc

    def add_edges(self, raws: list[bytes]) -> None:
        """The next ``edges/<i>`` members."""
        i0 = self.count
        self._grow(i0 + len(raws))
        for k, raw in enumerate(raws):
            i = i0 + k
            off, cs, us, crc = self._write_member(f"edges/{i}".encode(), raw)
            self.off[i], self.csize[i], self.usize[i], self.crc[i] = off, cs, us, crc
        self.count += len(raws)

    def add_named(self, name: str, raw: bytes) -> None:
        b = name.encode()
        self.named.append((b, *self._write_member(b, raw)))

    def _central(self, name: bytes, off: int, cs: int, us: int, crc: int) -> bytes:
        extra = b""
        if off >= 0xFFFFFFFF or self.force_zip64:
            extra = struct.pack("<HHQ", 0x0001, 8, off)
            off = 0xFFFFFFFF
        return self._CENTRAL.pack(0x02014B50, 20 | (3 << 8), 45 if extra else 20, 0, 8,
                                  self._TIME, self._DATE, crc, cs, us, len(name),
                                  len(extra), 0, 0, 0, 0o100644 << 16, off) + name + extra

    def close(self) -> None:
        cd_start = self.pos
        buf: list[bytes] = []
        size = 0
        for i in range(self.count):
            rec = self._central(f"edges/{i}".encode(), int(self.off[i]),
                                int(self.csize[i]), int(self.usize[i]), int(self.crc[i]))
            buf.append(rec)
            size += len(rec)
            if len(buf) >= 65536:
                self.fh.write(b"".join(buf))
                buf = []
        for name, off, cs, us, crc in self.named:
            rec = self._central(name, off, cs, us, crc)
            buf.append(rec)
            size += len(rec)
        self.fh.write(b"".join(buf))
        entries = self.count + len(self.named)
        end = cd_start + size
        zip64 = self.force_zip64 or entries >= 0xFFFF or cd_start >= 0xFFFFFFFF or \
            size >= 0xFFFFFFFF
        if zip64:
            self.fh.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, entries,
                                      entries, size, cd_start))
            self.fh.write(struct.pack("<IIQI", 0x07064B50, 0, end, 1))
        self.fh.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(entries, 0xFFFF),
                                  min(entries, 0xFFFF), min(size, 0xFFFFFFFF),
                                  min(cd_start, 0xFFFFFFFF), 0))


class SeedZipWriter:
    """Streaming writer of the seed-004 zip: vertices are added in id order (one call per
    vertex or per batch of rows); the archive is written to a temporary file in the
    target folder and renamed into place by :meth:`close` — an exception inside the
    ``with`` block (or a missing vertex) deletes it, so nothing half-written remains."""

    def __init__(self, path: str | os.PathLike[str], sizes: Any, compresslevel: int = 6,
                 force_zip64: bool = False):
        self.path = Path(path)
        self.sizes = np.ascontiguousarray(sizes, dtype=np.int64)
        if self.sizes.ndim != 1 or (self.sizes.size and self.sizes.min() < 0):
            raise InputError("sizes", "must be a list of non-negative integers")
        self.n = int(self.sizes.shape[0])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        self._fh = os.fdopen(fd, "wb", buffering=1 << 20)
        self._zf = _ZipOut(self._fh, compresslevel, force_zip64)
        self._next = 0
        self._entries = 0

    def add_rows(self, indptr: Any, indices: Any, weights: Any) -> None:
        """Add the next ``len(indptr) - 1`` vertices (their neighbours and weights)."""
        # contiguous: the kernel is compiled for one layout (a strided slice would compile
        # a second signature on a first run)
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        weights = np.ascontiguousarray(weights, dtype=np.int64)
        nv = indptr.shape[0] - 1
        v0 = self._next
        if v0 + nv > self.n:
            raise InputError("SeedZipWriter", f"more than n = {self.n} vertices added")
        if indices.size and (indices.min() < 0 or indices.max() >= self.n):
            raise InputError("SeedZipWriter", "neighbour id out of range")
        if weights.size and weights.min() <= 0:
            raise InputError("SeedZipWriter", "edge weights must be > 0")
        buf, offs = _encode_rows(indptr, indices, weights, v0, self.sizes)
        raw = buf.tobytes()
        self._zf.add_edges([raw[offs[i]:offs[i + 1]] for i in range(nv)])
        self._next += nv
        self._entries += int(indptr[-1] - indptr[0])

    def add_vertex(self, neighbors: Any, weights: Any) -> None:
        """Add the next vertex."""
        nbr = np.asarray(neighbors, dtype=np.int64)
        self.add_rows(np.array([0, nbr.shape[0]]), nbr, weights)

    def close(self) -> Path:
        if self._zf is None:
            return self.path
        try:
            if self._next != self.n:
                raise InputError("SeedZipWriter", f"only {self._next} of {self.n} vertices "
                                 "were added")
            if self._entries % 2:
                raise InputError("SeedZipWriter", "odd number of edge entries: the graph "
                                 "is not symmetric")
            self._zf.add_named("header", encode_varints(
                np.array([FORMAT_VERSION, self.n, self._entries // 2], np.int64)).tobytes())
            self._zf.add_named("sizes", encode_varints(self.sizes).tobytes())
            self._zf.close()
            self._zf = None
            self._fh.close()
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        return self.path

    def abort(self) -> None:
        self._zf = None
        try:
            self._fh.close()
        except Exception:  # noqa: BLE001 - best effort before deleting the file
            pass
        Path(self._tmp).unlink(missing_ok=True)

    def __enter__(self) -> SeedZipWriter:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()


def write_zip(path: str | os.PathLike[str], graph: NeuronGraph, batch: int = 65536) -> Path:
    """Write a graph as a seed-004 zip (streamed in batches of vertices)."""
    with SeedZipWriter(path, graph.sizes) as w:
        for v0 in range(0, graph.n, batch):
            v1 = min(graph.n, v0 + batch)
            a, b = graph.indptr[v0], graph.indptr[v1]
            w.add_rows(graph.indptr[v0:v1 + 1] - a, graph.indices[a:b], graph.weights[a:b])
    return Path(path)


def read_zip(path: str | os.PathLike[str], name: str | None = None) -> NeuronGraph:
    """Read a whole seed-004 zip into memory."""
    with SeedZipReader(path) as r:
        return r.load(name)


def metis_to_zip(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> Path:
    """Convert a METIS file to a seed-004 zip without holding the edges in memory: one
    pass for the sizes (O(n)), one pass writing vertex by vertex."""
    p = Path(src)
    if not p.is_file():
        raise InputError(str(p), "file not found", "check the path")
    lines = _metis_lines(p)
    n, m, has_vsize, _, has_ew, ncon = _metis_header(p, lines)
    sizes = np.ones(n, np.int64)
    v = 0
    for ln, text in lines:
        if v >= n:
            if text.strip():
                raise InputError(f"{p}:{ln}", f"more than n = {n} vertex lines")
            continue
        size, _, _ = _parse_vertex_line(p, ln, text, n, has_vsize, ncon, has_ew)
        sizes[v] = size
        v += 1
    if v < n:
        raise InputError(str(p), f"only {v} vertex lines, the header says {n}")
    lines = _metis_lines(p)
    _metis_header(p, lines)
    with SeedZipWriter(dst, sizes) as w:
        for v, (ln, text) in enumerate(itertools.islice(lines, n)):
            _, nb_, wt = _parse_vertex_line(p, ln, text, n, has_vsize, ncon, has_ew)
            if (nb_ == v).any():
                raise InputError(f"{p}:{ln}", f"self-loop on vertex {v + 1}")
            w.add_vertex(nb_, wt)
        if w._entries != 2 * m:
            raise InputError(str(p), f"{w._entries} adjacency entries, the header's m = {m} "
                             f"needs {2 * m}")
    return Path(dst)


def zip_to_metis(src: str | os.PathLike[str], dst: str | os.PathLike[str],
                 batch: int = 65536) -> Path:
    """Convert a seed-004 zip to a METIS file, streaming batch by batch."""
    with SeedZipReader(src) as r:
        unit = bool((r.sizes == 1).all())

        def write(fh: Any) -> None:
            fh.write(f"{r.n} {r.m} {'001' if unit else '011'}\n")
            for v0, ptr, idx, w in r.batches(batch):
                out = []
                for i in range(ptr.shape[0] - 1):
                    pairs = np.empty(2 * (ptr[i + 1] - ptr[i]), np.int64)
                    pairs[0::2] = idx[ptr[i]:ptr[i + 1]] + 1
                    pairs[1::2] = w[ptr[i]:ptr[i + 1]]
                    body = " ".join(map(str, pairs.tolist()))
                    out.append(body if unit else f"{int(r.sizes[v0 + i])} {body}".rstrip())
                fh.write("\n".join(out) + "\n")

        return atomic_write(dst, write)
