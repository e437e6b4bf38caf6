"""Seed 003's op analysis and its "function library": op-placement instances of networks.

Source: seed 003 (``docs/sources.md``; the NN-compilation patent: tensor/scalar op
split and cost/profit assignment), steps 1 and 2.

Step 1 — :func:`expand_scalar_ops`: the compiler's view of a network
---------------------------------------------------------------------
The document's compiler analyses the graph IR into tensor ops and the scalar ops that
shape inference, tiling and kernel launches create ([0043]–[0049]). Our generator
adds, for every tensor op ``L`` of a :class:`~chipsched.workload.Workload` (in
topological order, before ``L``):

=============  ===========================================================  ============
op             what / size                                                  inputs
=============  ===========================================================  ============
``L.shape``    shape inference of L's output ([0043]–[0045]; the           the ``.shape``
               document's variable-shape network, so it runs at run time):  ops of L's
               ``ops`` = 4 per output dim (N, C, H, W: an add, a subtract,  producers
               a divide, an increment as in ``(H + 2p − R)/s + 1``) = 16;
               output 4 scalars
``L.tile``     loop control of tiling L into on-chip blocks ([0046]):       ``L.shape``
               ``blocks = ⌈footprint / block_bytes⌉`` with footprint =
               (input + weight + output elements) × bytes × batch;
               ``ops`` = 4 per block (index update, bound compare, two
               address computations); **control flow** (a ``for`` loop);
               output 2 scalars. Only when ``blocks > 1``.
``L.param``    the kernel's launch parameters ([0028], [0031]: computed     ``L.shape``
               before the launch and passed as kernel arguments):
               ``ops`` = 8 + 4 per input tensor; output 6 + 2 per input
               scalars (addresses, strides, quantization scale)
=============  ===========================================================  ============

``L`` then also depends on ``L.tile`` and ``L.param``. ``block_bytes`` defaults to
512 KiB [ours: a typical NPU on-chip buffer]. ``static_shapes=True`` applies the
document's scalar optimisation ([0049], constant propagation + dead-code elimination)
to a fixed-shape network: the shape ops fold away and the other scalar ops lose their
inputs. Existing scalar ops of the workload are kept as they are. All op counts are
our choices (the document gives none); they matter little, since a scalar op's time
is dominated by its launch overhead.

``fuse_loops=True`` adds the scalar work of the optimizer's fusion ([0047]: merging
the ``for`` loops of a producer's and a consumer's tiling "determines how many data
blocks there are and where they are moved"). A pair is fused when the consumer ``L``
is an element-wise, pooling, normalisation or softmax op whose only data input is a
non-scalar op ``Q`` whose only consumer is ``L`` (a chain, as conv → ReLU or matmul →
softmax). For such an ``L`` the merged loop is ``Q``'s, so ``L.tile`` is not generated;
instead

=============  ===========================================================  ============
``L.fuse``     block count and destination of every block of the merged    ``L.shape``,
               loop: ``ops`` = 4 (two block counts, a compare, a min) + 2   ``Q.tile``
               per block of L (destination address, buffer index); output   (when they
               2 scalars per block, at least 4                              exist)
=============  ===========================================================  ============

and ``L`` depends on ``L.fuse`` and ``L.param``. The tensor ops stay separate ops: the
shared cost model has no price for a fused kernel (it charges every op its launch),
so only the scalar work fusion creates is modelled.

Every added op's role (``shape``, ``tile``, ``param``, ``fuse``) is its ``op_kind`` in
the instance and the first key the function library is searched by.

Step 2 — :class:`FunctionLibrary`
---------------------------------
The document looks cost and profit values up in a "function library" keyed by op,
data type and size, holding measured or empirical values ([0052]–[0053]). Ours is a
table ``(op kind, data type, size bucket, processor) → (launch overhead, seconds per
op, joules per op)``; an op's time on a processor is ``launch + work · s_per_op`` (plus
seed 003's control-flow round trip on a processor without native control flow) and
its energy ``work · j_per_op``. :meth:`FunctionLibrary.from_hardware` fills it from the
shared cost model (``docs/cost-model.md`` §6) with one row per op kind (the workload
kinds and the scalar roles above, the fusion-created ``fuse`` ops included), data
type (int8, fp16, fp32) and size bucket (the decades 1e0 … 1e12), plus a catch-all
row per op class; it then reproduces ``chipsched.cost.processor_time_s`` — a test
checks it. The shared cost model prices the three data types alike and is affine in
an op's work, so its rows differ only by class: the keys are there for measurements
(:meth:`FunctionLibrary.from_csv`), and the cost and profit values derived from a row
do depend on the size (the launch overhead dominates small ops; :meth:`FunctionLibrary.table`
prints them).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.cost import (
    _op_work,
    control_roundtrip_s,
    op_class,
    processor_energy_j,
    processor_time_s,
)
from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.workload import Layer, OpKind, Workload, check_batch

from .instance import Instance

#: Default size of an on-chip block for tiling (bytes) [ours].
BLOCK_BYTES = 512 * 1024

#: Scalar ops per output dim of shape inference, per block of loop control, and the
#: kernel-parameter ops (base + per input) — our numbers, see the module docstring.
SHAPE_OPS_PER_DIM = 4
LOOP_OPS_PER_BLOCK = 4
PARAM_OPS_BASE, PARAM_OPS_PER_INPUT = 8, 4

DTYPES = {1: "int8", 2: "fp16", 4: "fp32", 8: "fp64"}

#: Roles of the scalar ops :func:`expand_scalar_ops` adds (their ``op_kind``).
SCALAR_ROLES = ("shape", "tile", "param", "fuse")

#: Scalar ops of a fused pair's merged loop ([0047]): base + per block of the consumer.
FUSE_OPS_BASE, FUSE_OPS_PER_BLOCK = 4, 2

#: Consumer kinds a compiler fuses into their producer's loop nest [ours].
FUSABLE_KINDS = frozenset({OpKind.ELTWISE, OpKind.POOL, OpKind.NORM, OpKind.SOFTMAX})

#: Data types and size buckets (decades of work) of the cost model's library.
LIBRARY_DTYPES = ("int8", "fp16", "fp32")
LIBRARY_BUCKETS = tuple(range(13))


# ---------------------------------------------------------------------------------------
# Step 1: tensor ops and the scalar ops the compiler creates


def tile_blocks(layer: Layer, precision_bytes: int, batch: int = 1,
                block_bytes: int = BLOCK_BYTES) -> int:
    """Blocks a tensor op is tiled into: ⌈((in + out) · batch + weights) · bytes / block⌉;
    an embedding lookup counts the rows it gathers per sample, not its table."""
    if block_bytes <= 0:
        raise InputError("block_bytes", f"must be positive, got {block_bytes}")
    acts = (layer.in_elems + layer.out_elems + layer.gathered_elems) * batch
    footprint = (acts + layer.resident_weight_elems) * precision_bytes
    return max(1, math.ceil(footprint / block_bytes))


def fused_pairs(workload: Workload) -> dict[int, int]:
    """Consumer → producer of the chains the optimizer fuses ([0047]; module docstring):
    ``L`` of a fusable kind whose only input is a non-scalar ``Q`` with ``L`` its only
    consumer."""
    out = {}
    for i, ly in enumerate(workload.layers):
        preds = workload.preds[i]
        if ly.kind in FUSABLE_KINDS and len(preds) == 1:
            q = preds[0]
            if workload.layers[q].kind is not OpKind.SCALAR and workload.succs[q] == (i,):
                out[i] = q
    return out


def expand_scalar_ops(workload: Workload, *, batch: int = 1, block_bytes: int = BLOCK_BYTES,
                      static_shapes: bool = False, control_flow: bool = True,
                      fuse_loops: bool = False) -> Workload:
    """Seed 003, step 1: the workload with the compiler's scalar ops added (see the module
    docstring for what is added and why). ``control_flow=False`` marks the loop-control
    ops as ordinary scalar ops (for a chip with no processor that has control flow, where
    no round trip to a host is possible). ``fuse_loops`` adds the scalar ops of loop
    fusion ([0047]). The added ops' roles are in ``meta["scalar_roles"]`` (op name →
    role)."""
    layers: list[Layer] = []
    edges: list[tuple[int, int, int]] = []
    roles: dict[str, str] = {}
    new_index: dict[int, int] = {}
    shape_of: dict[int, int] = {}  # original layer -> index of the op carrying its shape
    tile_of: dict[int, int] = {}  # original layer -> its loop-control op
    fused = fused_pairs(workload) if fuse_loops else {}

    def add(layer: Layer, inputs: Iterable[tuple[int, int]], role: str = "") -> int:
        idx = len(layers)
        layers.append(layer)
        if role:
            roles[layer.name] = role
        for src, elems in inputs:
            edges.append((src, idx, elems))
        return idx

    for i, ly in enumerate(workload.layers):
        preds = workload.preds[i]
        data_in = [(new_index[p], workload.edge_elems[(p, i)]) for p in preds]
        if ly.kind is OpKind.SCALAR:
            new_index[i] = add(ly, data_in)
            shape_of[i] = new_index[i]
            continue
        ctrl: list[tuple[int, int]] = []
        shape_idx = None
        if not static_shapes:
            shape_in = sorted({shape_of[p] for p in preds})
            shape_idx = add(Layer(f"{ly.name}.shape", OpKind.SCALAR, K=4, ops=4 *
                                  SHAPE_OPS_PER_DIM, in_elems=max(1, 4 * len(shape_in))),
                            [(s, layers[s].out_elems) for s in shape_in], "shape")
        sdep = [(shape_idx, 4)] if shape_idx is not None else []
        blocks = tile_blocks(ly, workload.precision_bytes, batch, block_bytes)
        if i in fused:
            # the merged loop is the producer's: this op's block bookkeeping instead of
            # a loop of its own
            loop = [(tile_of[fused[i]], 2)] if fused[i] in tile_of else []
            f = add(Layer(f"{ly.name}.fuse", OpKind.SCALAR, K=max(4, 2 * blocks),
                          ops=FUSE_OPS_BASE + FUSE_OPS_PER_BLOCK * blocks,
                          in_elems=4 + 2 * len(loop)), sdep + loop, "fuse")
            ctrl.append((f, max(4, 2 * blocks)))
        elif blocks > 1:
            t = add(Layer(f"{ly.name}.tile", OpKind.SCALAR, K=2, ops=LOOP_OPS_PER_BLOCK *
                          blocks, in_elems=4, control_flow=control_flow), sdep, "tile")
            ctrl.append((t, 2))
            tile_of[i] = t
        n_in = max(1, len(preds))
        p = add(Layer(f"{ly.name}.param", OpKind.SCALAR, K=6 + 2 * n_in,
                      ops=PARAM_OPS_BASE + PARAM_OPS_PER_INPUT * n_in, in_elems=4), sdep,
                "param")
        ctrl.append((p, 6 + 2 * n_in))
        new_index[i] = add(ly, data_in + ctrl)
        shape_of[i] = shape_idx if shape_idx is not None else new_index[i]
    meta = {**dict(workload.meta), "expanded": "seed 003 scalar ops",
            "block_bytes": block_bytes, "static_shapes": static_shapes,
            "fuse_loops": fuse_loops, "scalar_roles": roles}
    return Workload(workload.name, tuple(layers), tuple(edges), workload.precision_bytes, meta)


# ---------------------------------------------------------------------------------------
# Step 2: the function library


def size_bucket(work: float) -> str:
    """Decade of an op's work (MACs or ops): ``"1e3"`` holds 1,000 ≤ work < 10,000."""
    return f"1e{max(0, int(math.floor(math.log10(max(work, 1.0)))))}"


@dataclass(frozen=True)
class LibraryEntry:
    """Launch overhead (s), seconds per op (``inf``: cannot run) and joules per op."""

    launch_s: float
    s_per_op: float
    j_per_op: float


@dataclass(frozen=True)
class FunctionLibrary:
    """Seed 003's function library: ``(kind, dtype, size bucket, processor) → entry``.

    A key part may be ``*`` (any). :meth:`lookup` tries the op's kind, then its class
    (``tensor``/``vector``/``scalar``), then ``*``; within each, the exact dtype before
    ``*`` and the exact bucket before ``*``.
    """

    entries: Mapping[tuple[str, str, str, str], LibraryEntry]
    source: str = "cost model"
    processors: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        procs = tuple(dict.fromkeys(k[3] for k in self.entries))
        object.__setattr__(self, "processors", procs)
        object.__setattr__(self, "entries", dict(self.entries))

    @classmethod
    def from_hardware(cls, hardware: Hardware) -> FunctionLibrary:
        """The shared cost model's library (``docs/cost-model.md`` §6): one row per (op
        kind, data type, size bucket, processor) for every workload kind and scalar role,
        :data:`LIBRARY_DTYPES` and :data:`LIBRARY_BUCKETS`, plus a catch-all row per (op
        class, processor) for anything outside them (fp64, work ≥ 1e13)."""
        _need_processors(hardware)
        kinds = [(k.value, _kind_class(k)) for k in OpKind] + [(r, "scalar")
                                                               for r in SCALAR_ROLES]
        entries = {}
        for p in hardware.processors:
            by_class = {}
            for c in ("tensor", "vector", "scalar"):
                thr = p.throughput_gops[c] * 1e9
                by_class[c] = LibraryEntry(p.launch_overhead_us * 1e-6,
                                           math.inf if thr <= 0 else 1.0 / thr,
                                           p.energy_pj_per_op[c] * 1e-12)
            for kind, c in kinds:
                for d in LIBRARY_DTYPES:
                    for b in LIBRARY_BUCKETS:
                        entries[(kind, d, f"1e{b}", p.name)] = by_class[c]
            for c, e in by_class.items():
                entries[(c, "*", "*", p.name)] = e
        return cls(entries, f"cost model of {hardware.name}")

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str]) -> FunctionLibrary:
        """Measurements: columns ``kind,dtype,size_bucket,processor,launch_us,gops,
        pj_per_op`` (``gops`` = 10⁹ ops or MACs per second, 0 = cannot run; ``*`` allowed
        in kind, dtype and size_bucket). Errors name the line."""
        p = Path(path)
        if not p.is_file():
            raise InputError(str(p), "file not found", "check the path")
        need = ["kind", "dtype", "size_bucket", "processor", "launch_us", "gops", "pj_per_op"]
        entries: dict[tuple[str, str, str, str], LibraryEntry] = {}
        with p.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        if not rows or [h.strip() for h in rows[0]] != need:
            raise InputError(f"{p}:1", "malformed function library header",
                             f"the header must be {','.join(need)}")
        for n, row in enumerate(rows[1:], start=2):
            if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            if len(row) != len(need):
                raise InputError(f"{p}:{n}", f"expected {len(need)} fields, got {len(row)}")
            kind, dtype, bucket, proc = (x.strip() for x in row[:4])
            try:
                launch, gops, pj = (float(x) for x in row[4:])
            except ValueError:
                raise InputError(f"{p}:{n}", "launch_us, gops and pj_per_op must be numbers"
                                 ) from None
            if min(launch, gops, pj) < 0 or not all(map(math.isfinite, (launch, gops, pj))):
                raise InputError(f"{p}:{n}", "negative or non-finite value",
                                 "times, throughputs and energies are >= 0")
            if bucket != "*" and not (bucket.startswith("1e") and bucket[2:].isdigit()):
                raise InputError(f"{p}:{n}", f"size_bucket {bucket!r}", "use 1eK or *")
            entries[(kind, dtype, bucket, proc)] = LibraryEntry(
                launch * 1e-6, math.inf if gops == 0 else 1e-9 / gops, pj * 1e-12)
        if not entries:
            raise InputError(str(p), "has no entries")
        return cls(entries, str(p))

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        """Write the library in the form :meth:`from_csv` reads."""
        from chipsched.files import atomic_write

        def write(fh: Any) -> None:
            w = csv.writer(fh)
            w.writerow(["kind", "dtype", "size_bucket", "processor", "launch_us", "gops",
                        "pj_per_op"])
            for (k, d, b, p), e in self.entries.items():
                gops = 0.0 if math.isinf(e.s_per_op) else 1e-9 / e.s_per_op
                w.writerow([k, d, b, p, f"{e.launch_s * 1e6:.12g}", f"{gops:.12g}",
                            f"{e.j_per_op * 1e12:.12g}"])

        return atomic_write(path, write)

    def check_processors(self, names: Sequence[str]) -> None:
        """Every processor of the chip must have entries."""
        for n in names:
            if n not in self.processors:
                raise InputError(f"function library {self.source}",
                                 f"processor {n!r} missing from the cost table",
                                 f"add rows for {n} (it has: {', '.join(self.processors)})")

    def lookup(self, kind: str, cls: str, dtype: str, work: float, processor: str
               ) -> LibraryEntry:
        """The entry for an op (see the class docstring for the fallback order)."""
        bucket = size_bucket(work)
        for k in (kind, cls, "*"):
            for d in (dtype, "*"):
                for b in (bucket, "*"):
                    e = self.entries.get((k, d, b, processor))
                    if e is not None:
                        return e
        raise InputError(f"function library {self.source}",
                         f"no entry for {kind} ({cls}), {dtype}, size {bucket} on {processor}",
                         "add a row (wildcards * allowed)")

    def table(self, kinds: Sequence[tuple[str, str]], dtype: str, buckets: Sequence[int],
              host: str) -> list[dict[str, Any]]:
        """Cost and profit per (kind, dtype, size bucket, processor) for an op of work
        10^(k + 0.5) (the middle of bucket k): cost = its time on the processor (seed
        003's A increment; T depends on the placement); literal mode's profit P = S + O
        against ``host``; refined mode's gains against the mean over the processors
        that can run the op (``speed_gain_vs_mean`` is its P for the makespan,
        ``complexity_gain_vs_mean`` for the energy; definitions in
        ``chipsched.heuristics.op_placement``)."""
        out = []
        for kind, cls in kinds:
            for k in buckets:
                w = 10 ** (k + 0.5)
                vals = {}
                for p in self.processors:
                    e = self.lookup(kind, cls, dtype, w, p)
                    vals[p] = (e.launch_s + w * e.s_per_op, w * e.j_per_op)
                th, eh = vals[host]
                ok = [v for v in vals.values() if math.isfinite(v[0])]
                tm = sum(v[0] for v in ok) / len(ok)
                em = sum(v[1] for v in ok) / len(ok)
                for p, (t, en) in vals.items():
                    s = _relative_gain(th, t)
                    o = _relative_gain(eh, en)
                    out.append({"kind": kind, "dtype": dtype, "size_bucket": f"1e{k}",
                                "processor": p, "cost_s": t, "energy_j": en,
                                "speed_gain": s, "complexity_gain": o, "profit": s + o,
                                "speed_gain_vs_mean": _relative_gain(tm, t),
                                "complexity_gain_vs_mean": _relative_gain(em, en)})
        return out


def _relative_gain(ref: float, x: float) -> float:
    """(ref − x) / max(ref, x) ∈ [−1, 1]: > 0 when x is smaller (better) than ref."""
    if math.isinf(x):
        return -1.0
    if math.isinf(ref):
        return 1.0
    m = max(ref, x)
    return 0.0 if m == 0 else (ref - x) / m


def _kind_class(kind: OpKind) -> str:
    """The cost model's class of an op kind (``chipsched.cost.op_class``)."""
    return op_class(Layer("k", kind))


def _need_processors(hardware: Hardware) -> None:
    if not hardware.processors:
        raise InputError(f"chip {hardware.name!r}", "has no processors for op_placement",
                         "use a SoC chip such as soc-npu-gpu-cpu or soc-npu-gpu")


# ---------------------------------------------------------------------------------------
# Instances from a workload on a SoC


def from_workload(workload: Workload, hardware: Hardware, *, batch: int = 1,
                  library: FunctionLibrary | None = None, objective: str | None = None,
                  scalar_ops: bool = True, block_bytes: int = BLOCK_BYTES,
                  static_shapes: bool = False, fuse_loops: bool = False) -> Instance:
    """An op-placement instance of ``workload`` on the processors of ``hardware``.

    With ``scalar_ops`` (default) the workload is first expanded per seed 003
    (:func:`expand_scalar_ops`). Times and energies come from
    ``chipsched.cost.processor_time_s`` / ``processor_energy_j`` (with the control-flow
    round trip of ``chipsched.cost.control_roundtrip_s``), or from ``library`` when one
    is given (measurements); transfers use the chip's interconnect.
    """
    _need_processors(hardware)
    check_batch(batch)
    procs = hardware.processors
    if scalar_ops:
        has_host = any(p.control_flow for p in procs)
        workload = expand_scalar_ops(workload, batch=batch, block_bytes=block_bytes,
                                     static_shapes=static_shapes, control_flow=has_host,
                                     fuse_loops=fuse_loops)
    if library is not None:
        library.check_processors([p.name for p in procs])
    n, P = len(workload), len(procs)
    rt_p = [control_roundtrip_s(hardware, p) for p in range(P)]
    time = np.zeros((n, P))
    energy = np.zeros((n, P))
    roundtrip = np.zeros((n, P))
    dtype = DTYPES.get(workload.precision_bytes, f"{workload.precision_bytes}B")
    roles = workload.meta.get("scalar_roles", {}) if scalar_ops else {}
    kinds = tuple(roles.get(ly.name, ly.kind.value) for ly in workload.layers)
    for i, ly in enumerate(workload.layers):
        cls = op_class(ly)
        work = _op_work(ly, batch)
        for p, proc in enumerate(procs):
            rt = rt_p[p] if ly.control_flow and not proc.control_flow else 0.0
            roundtrip[i, p] = rt
            if library is None:
                time[i, p] = processor_time_s(ly, proc, batch, control_roundtrip_s=rt_p[p])
                energy[i, p] = processor_energy_j(ly, proc, batch)
            else:
                e = library.lookup(kinds[i], cls, dtype, work, proc.name)
                time[i, p] = e.launch_s + work * e.s_per_op + rt if math.isfinite(
                    e.s_per_op) else math.inf
                energy[i, p] = work * e.j_per_op
    roundtrip = np.where(np.isfinite(roundtrip), roundtrip, 0.0)
    ic = hardware.interconnect
    lat = np.array(ic.latency_us, dtype=float) * 1e-6
    bw = np.array(ic.bandwidth_gb_s, dtype=float) * 1e9
    np.fill_diagonal(bw, np.inf)
    edges = np.array([(s, d) for s, d, _ in workload.edges], dtype=np.int64).reshape(-1, 2)
    ebytes = np.array([e * workload.precision_bytes * batch for _, _, e in workload.edges],
                      dtype=float)
    inst = Instance(
        name=workload.name, ops=tuple(ly.name for ly in workload.layers),
        op_class=tuple(op_class(ly) for ly in workload.layers),
        op_kind=kinds,
        time=time, energy=energy, roundtrip=roundtrip,
        control_flow=np.array([ly.control_flow for ly in workload.layers]),
        work=np.array([_op_work(ly, batch) for ly in workload.layers], dtype=float),
        edges=edges, edge_bytes=ebytes,
        processors=tuple(p.name for p in procs), cores=tuple(p.cores for p in procs),
        native_control_flow=tuple(p.control_flow for p in procs),
        latency=lat, bandwidth=bw, objective=objective or "makespan", time_unit="s",
        meta={"source": f"{workload.name} on {hardware.name}", "chip": hardware.name,
              "batch": batch, "scalar_ops": scalar_ops, "block_bytes": block_bytes,
              "static_shapes": static_shapes, "fuse_loops": fuse_loops,
              "library": library.source if library else "cost model"})
    return inst


def library_rows(hardware: Hardware, library: FunctionLibrary | None = None,
                 kinds: Sequence[tuple[str, str]] = (("conv", "tensor"), ("eltwise", "vector"),
                                                     ("scalar", "scalar")),
                 dtype: str = "int8", buckets: Sequence[int] = (1, 3, 5, 7, 9)
                 ) -> list[dict[str, Any]]:
    """The function library's cost/profit table for a chip (for docs and benchmarks)."""
    lib = library or FunctionLibrary.from_hardware(hardware)
    host = next((p.name for p in hardware.processors if p.control_flow),
                hardware.processors[-1].name)
    return lib.table(kinds, dtype, buckets, host)
