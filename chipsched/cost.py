"""The shared hardware cost model: pure functions every decision's numbers come from.

Every formula here is written out, with units and provenance, in ``docs/cost-model.md``.
Units: seconds, bytes, joules (pJ only inside the formulas), cycles of the unit clock.

Sections
--------
* compute on one unit — :func:`vector_array_cycles` (NVDLA/Simba-style array with its
  shape utilization), :func:`systolic_cycles` (seed 000's two-branch formula);
* intra-layer partition over g units — :func:`output_partitions`,
  :func:`layer_on_units` (one layer) and :class:`CostModel` / :class:`LayerTable` (the
  vectorized, cached table of every layer × unit count × sub-batch);
* NoC — :func:`xy_link_loads` (per-link bytes under XY routing), :func:`hops`,
  :func:`noc_energy_j`, :func:`noc_time_s`;
* DRAM — :func:`dram_time_s`, :func:`dram_energy_j`, ``Hardware.dram_hops``;
* heterogeneous processors — :func:`op_class`, :func:`processor_time_s`,
  :func:`processor_energy_j`, :func:`transfer_time_s`;
* energy — :class:`EnergyBreakdown` (each decision's objectives, with their units, are
  in ``chipsched.problems.<decision>``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.hardware import ArraySpec, ComputeUnit, Hardware, Processor
from chipsched.workload import MAC_KINDS, Layer, OpKind, Workload

PJ = 1e-12


def _ceil_div(a: Any, b: Any) -> Any:
    return -(-a // b)


# ---------------------------------------------------------------------------------------
# Compute on one unit


def vector_array_cycles(n: Any, K: Any, Cg: Any, H: Any, W: Any, R: Any, S: Any,
                        array: ArraySpec) -> tuple[Any, Any]:
    """Cycles of a (grouped) conv loop nest on a pes × lanes × vector MAC array.

    The vector reduces over the input channels of a group (``Cg``), the lanes take
    output channels, and the PEs take either output channels or output pixels
    (batch × H × W), whichever needs fewer cycles::

        over channels: n·H·W·R·S · ⌈Cg/vector⌉ · ⌈K/(lanes·pes)⌉
        over pixels:   ⌈n·H·W/pes⌉·R·S · ⌈Cg/vector⌉ · ⌈K/lanes⌉

    Returns ``(cycles, channel_passes)`` where ``channel_passes`` is how many times
    the input is swept (⌈K/(lanes·pes)⌉ or ⌈K/lanes⌉), used for buffer reads.
    Works elementwise on numpy arrays.
    """
    cycles, passes, _ = _vector_mapping(n, K, Cg, H, W, R, S, array)
    return cycles, passes


def _vector_mapping(n: Any, K: Any, Cg: Any, H: Any, W: Any, R: Any, S: Any,
                    array: ArraySpec) -> tuple[Any, Any, Any]:
    """``(cycles, channel_passes, over_channels)`` of :func:`vector_array_cycles`;
    ``over_channels`` is True where the PEs take output channels (ties included)."""
    V, L, P = array.vector, array.lanes, array.pes
    red = R * S * _ceil_div(Cg, V)
    pix = n * H * W
    kp_a = _ceil_div(K, L * P)
    kp_b = _ceil_div(K, L)
    a = pix * red * kp_a
    b = _ceil_div(pix, P) * red * kp_b
    chan = a <= b
    return np.minimum(a, b), np.where(chan, kp_a, kp_b), chan


def systolic_cycles(m: Any, k: Any, n: Any, w: int) -> Any:
    """Seed 000's cost dv of an m×k×n matrix product on a w×w systolic array (beats).

    If m > w or n > w: ``m·k·n / (w·w) + 2·(w − 1)`` — the tile ratio plus the fill and
    drain of the array. Otherwise (m ≤ w and n ≤ w; the document writes m < w and
    n < w and leaves m = w or n = w open — we put them here, where the product fits
    one pass): ``m + k + n − 1``.
    """
    m, k, n = np.asarray(m, dtype=float), np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    big = (m > w) | (n > w)
    out = np.where(big, m * k * n / (w * w) + 2 * (w - 1), m + k + n - 1)
    return out if out.ndim else float(out)


def _mac_cycles(n, K, Cg, H, W, R, S, Kg, array: ArraySpec):
    """Cycles, channel passes and (vector arrays) whether the PEs take output channels,
    of a MAC loop nest on one unit of either array kind.

    ``Kg`` is the number of output channels per group (K/groups of the whole layer).
    """
    if array.kind == "vector":
        return _vector_mapping(n, K, Cg, H, W, R, S, array)
    # systolic: im2col product m×k×n per group; groups on one unit run one after another
    w = array.size
    ncol = np.minimum(K, Kg)
    ngroups = _ceil_div(K, Kg)
    cycles = ngroups * systolic_cycles(n * H * W, Cg * R * S, ncol, w)
    return cycles, _ceil_div(ncol, w) * ngroups, None


# ---------------------------------------------------------------------------------------
# Intra-layer partition over g units


def output_partitions(max_units: int) -> np.ndarray:
    """Every way to split a layer's outputs over at most ``max_units`` units.

    Rows ``(pN, pK, pH, pW)``: the sub-batch, output channels and output height and
    width are cut into that many parts; the unit count is their product (≤ max_units).
    Sorted by unit count. This is SET's exhaustive partition search over output dims.
    """
    rows = []
    G = int(max_units)
    for a in range(1, G + 1):
        for b in range(1, G // a + 1):
            for c in range(1, G // (a * b) + 1):
                for d in range(1, G // (a * b * c) + 1):
                    rows.append((a, b, c, d))
    arr = np.array(rows, dtype=np.int64)
    prod = arr.prod(axis=1)
    return arr[np.argsort(prod, kind="stable")]


@dataclass(frozen=True)
class LayerCost:
    """One layer on g units with sub-batch b (a row of :class:`LayerTable`)."""

    layer: str
    units: int
    batch: int
    partition: tuple[int, int, int, int]  # (pN, pK, pH, pW)
    units_used: int
    cycles: float
    compute_s: float
    utilization: float
    weight_fetch_bytes: float  # weights delivered to units (replicas and spill re-reads counted)
    ifmap_fetch_bytes: float  # input activations delivered to units (halo, replicas, spills)
    ofmap_bytes: float
    footprint_bytes: float  # per-unit working set before spilling
    mac_energy_j: float  # MACs, vector ops and (reuse model) register accesses
    buffer_energy_j: float
    ideal_cycles: float = 0.0  # the MAC array alone, before buffer-port stalls
    register_energy_j: float = 0.0  # the register part of mac_energy_j
    dataflow: str = ""  # reuse model: output-, weight- or input-stationary
    input_rereads: float = 1.0  # spill: times the input is fetched (in ifmap_fetch_bytes)
    weight_rereads: float = 1.0  # spill: times the weights are fetched (in weight_fetch_bytes)

    @property
    def stall_cycles(self) -> float:
        """Cycles the array waits for the buffer ports (reuse model; 0 otherwise)."""
        return self.cycles - self.ideal_cycles


@dataclass(frozen=True)
class LayerTable:
    """Cost of every layer l on every unit count g = 1..G with every sub-batch b.

    Arrays have shape ``(layers, G, len(batches))`` (index ``g - 1`` for g units);
    ``partition`` has a trailing axis of 4. Built by :meth:`CostModel.layer_table`.
    """

    layer_names: tuple[str, ...]
    batches: tuple[int, ...]
    max_units: int
    cycles: np.ndarray
    compute_s: np.ndarray
    partition: np.ndarray
    units_used: np.ndarray
    utilization: np.ndarray
    weight_fetch_bytes: np.ndarray
    ifmap_fetch_bytes: np.ndarray
    ofmap_bytes: np.ndarray
    footprint_bytes: np.ndarray
    mac_energy_j: np.ndarray
    buffer_energy_j: np.ndarray
    ideal_cycles: np.ndarray | None = None
    register_energy_j: np.ndarray | None = None
    dataflow: np.ndarray | None = None  # index into DATAFLOWS, -1 where none applies
    input_rereads: np.ndarray | None = None  # spill: times the input is fetched (≥ 1)
    weight_rereads: np.ndarray | None = None  # spill: times the weights are fetched (≥ 1)

    def batch_index(self, b: int) -> int:
        try:
            return self.batches.index(int(b))
        except ValueError:
            raise InputError("batch", f"sub-batch {b} not in the table {self.batches}") from None

    def row(self, layer: int, units: int, batch: int) -> LayerCost:
        """The :class:`LayerCost` of ``layer`` on ``units`` units with sub-batch ``batch``."""
        if not 1 <= units <= self.max_units:
            raise InputError("units", f"{units} outside 1..{self.max_units}")
        j, g = self.batch_index(batch), units - 1
        return LayerCost(
            layer=self.layer_names[layer], units=units, batch=int(batch),
            partition=tuple(int(x) for x in self.partition[layer, g, j]),
            units_used=int(self.units_used[layer, g, j]),
            cycles=float(self.cycles[layer, g, j]),
            compute_s=float(self.compute_s[layer, g, j]),
            utilization=float(self.utilization[layer, g, j]),
            weight_fetch_bytes=float(self.weight_fetch_bytes[layer, g, j]),
            ifmap_fetch_bytes=float(self.ifmap_fetch_bytes[layer, g, j]),
            ofmap_bytes=float(self.ofmap_bytes[layer, g, j]),
            footprint_bytes=float(self.footprint_bytes[layer, g, j]),
            mac_energy_j=float(self.mac_energy_j[layer, g, j]),
            buffer_energy_j=float(self.buffer_energy_j[layer, g, j]),
            ideal_cycles=float(self.cycles[layer, g, j] if self.ideal_cycles is None
                               else self.ideal_cycles[layer, g, j]),
            register_energy_j=float(0 if self.register_energy_j is None
                                    else self.register_energy_j[layer, g, j]),
            dataflow=("" if self.dataflow is None or self.dataflow[layer, g, j] < 0
                      else DATAFLOWS[int(self.dataflow[layer, g, j])]),
            input_rereads=float(1 if self.input_rereads is None
                                else self.input_rereads[layer, g, j]),
            weight_rereads=float(1 if self.weight_rereads is None
                                 else self.weight_rereads[layer, g, j]),
        )


def _partition_costs(cols: dict[str, np.ndarray], parts: np.ndarray, b: int, unit: ComputeUnit,
                     precision: int) -> dict[str, np.ndarray]:
    """Cost of every layer (rows) under every partition (columns) for sub-batch b."""
    c = {k: v[:, None] for k, v in cols.items()}
    pN, pK, pH, pW = (parts[:, i][None, :] for i in range(4))
    K, C, H, W, R, S = c["K"], c["C"], c["H"], c["W"], c["R"], c["S"]
    stride, groups = c["stride"], c["groups"]
    Cg, Kg = C // groups, K // groups
    n_t = _ceil_div(b, pN)
    K_t = _ceil_div(K, pK)
    H_t = _ceil_div(H, pH)
    W_t = _ceil_div(W, pW)
    units_used = np.minimum(pN, b) * np.minimum(pK, K) * np.minimum(pH, H) * np.minimum(pW, W)

    mac = c["mac_kind"]
    mcyc, passes, over_channels = _mac_cycles(n_t, K_t, Cg, H_t, W_t, R, S, Kg, unit.array)
    share = (n_t * K_t * H_t * W_t) / (K * H * W)  # fraction of one sample's outputs
    vops = np.where(c["kind_embed"], c["ops"] + K * H * W, c["ops"])
    vcyc = _ceil_div(np.ceil(vops * share).astype(np.int64), unit.vector_ops_per_cycle)
    # scalar ops run at one op per cycle on a unit
    vcyc = np.where(c["kind_scalar"], np.ceil(c["ops"] * share), vcyc)
    cycles = np.where(mac, mcyc, vcyc).astype(float)
    passes = np.where(mac, passes, 1)

    # data each unit needs (elements)
    # an embedding lookup holds no weights: it gathers the rows of its output slice
    w_t = c["resident_weight_elems"] * K_t / K
    # depthwise/grouped, pool, eltwise, norm: output channel k reads input channel k only
    chan_aligned = (groups > 1) | ~mac
    C_t = np.where(chan_aligned, np.minimum(C, np.ceil(K_t * C / K)), C)
    Hin, Win = H * stride, W * stride
    rows_in = np.minimum(Hin, (H_t - 1) * stride + R)
    cols_in = np.minimum(Win, (W_t - 1) * stride + S)
    in_t = n_t * c["in_elems"] * (C_t / C) * (rows_in / Hin) * (cols_in / Win)
    # matmul: operand a (C × M) is split by rows, operand b (the "weights") by columns
    a_elems = C * H * W
    b_elems = np.maximum(c["in_elems"] - a_elems, 0)
    mm_in = n_t * (a_elems * (H_t / H) * np.where(groups > 1, K_t / K, 1.0) + b_elems * K_t / K)
    is_mm = c["kind_matmul"]
    in_t = np.where(is_mm, mm_in, in_t)
    out_t = n_t * K_t * H_t * W_t
    in_t = in_t + n_t * c["gathered_elems"] * (K_t * H_t * W_t) / (K * H * W)
    fp = (w_t + in_t + out_t) * precision
    half = unit.buffer_bytes / 2
    over = fp > unit.buffer_bytes
    reuse = unit.onchip_model == "reuse"
    if reuse:
        # Spill rule (reuse model): what fits half the buffer stays, the other operand
        # streams through the other half once; when neither fits, the cheaper of
        # re-reading the input per weight chunk or the weights per activation chunk.
        w_b, a_b = w_t * precision, (in_t + out_t) * precision
        re_in = np.maximum(1, np.ceil(w_b / half))
        re_w = np.maximum(1, np.ceil(a_b / half))
        in_cheaper = in_t * (re_in - 1) <= w_t * (re_w - 1)
        spill = np.where(over & in_cheaper, re_in, 1.0)
        wspill = np.where(over & ~in_cheaper, re_w, 1.0)
    else:
        # Spill rule (ideal model, before issue 14): weights stream through half the
        # buffer; the input is re-read once per weight chunk when the working set does
        # not fit (docs/cost-model.md).
        spill = np.where(over, np.maximum(1, np.ceil(w_t * precision / half)), 1)
        wspill = 1.0
    tiles = units_used.astype(float)
    weight_fetch = tiles * w_t * precision * wspill
    ifmap_fetch = tiles * in_t * precision * spill
    ofmap = np.broadcast_to(b * K * H * W * precision, cycles.shape).astype(float)
    e = unit.energy
    # Buffer accesses (ideal model, and non-MAC layers in both): every fetched byte is
    # written once; weights read once (held in the array), inputs read once per channel
    # pass, outputs written and read once.
    buf_bytes = 2 * weight_fetch + ifmap_fetch * (1 + passes) + 2 * ofmap
    if reuse and unit.array.kind == "vector":
        # per unit: fills from DRAM/NoC are written once, the outputs read out once
        fills = (weight_fetch + ifmap_fetch) / np.maximum(tiles, 1)
        # weights streaming through half the buffer come in chunks: input-stationary
        # reuse spans only the output-channel passes of one chunk
        chunks = np.where(over & (wspill == 1), np.maximum(1, np.ceil(w_b / half)), 1)
        df = _reuse_dataflow(mcyc, passes, over_channels, n_t, K_t, Cg, Kg, H_t, W_t, R, S,
                             is_mm, unit, precision, extra_reads=out_t * precision,
                             extra_writes=fills, weight_chunks=chunks)
        cycles = np.where(mac, df["cycles"], cycles)
        buf_bytes = np.where(mac, (df["reads"] + df["writes"]) * tiles, buf_bytes)
        register = np.where(mac, df["register_bytes"] * tiles * unit.registers.pj_per_byte, 0.0)
        dataflow = np.where(mac, df["dataflow"], -1)
    else:
        register = np.zeros(cycles.shape)
        dataflow = np.full(cycles.shape, -1)
    buffer_pj = buf_bytes * e.buffer_pj_per_byte
    return {"cycles": cycles, "ideal_cycles": np.where(mac, mcyc, cycles).astype(float),
            "units_used": units_used, "weight_fetch": weight_fetch,
            "ifmap_fetch": ifmap_fetch, "ofmap": ofmap, "footprint": fp,
            "activations": (in_t + out_t) * precision, "buffer_energy": buffer_pj * PJ,
            "register_energy": register * PJ,
            "input_rereads": np.broadcast_to(spill, cycles.shape).astype(float),
            "weight_rereads": np.broadcast_to(wspill, cycles.shape).astype(float),
            "dataflow": dataflow.astype(float)}


#: The stationarity a reuse-model layer runs with (``LayerTable.dataflow``; -1: not a MAC
#: layer on a vector array, or the ideal model).
DATAFLOWS = ("output-stationary", "weight-stationary", "input-stationary")


def _reuse_dataflow(cyc: Any, passes: Any, over_channels: Any, n_t: Any, K_t: Any, Cg: Any,
                    Kg: Any, H_t: Any, W_t: Any, R: Any, S: Any, is_mm: Any,
                    unit: ComputeUnit, precision: int, extra_reads: Any, extra_writes: Any,
                    weight_chunks: Any = 1) -> dict[str, Any]:
    """Cycles, buffer reads and writes and register bytes of one unit's MAC loop nest under
    the best of output-, weight- and input-stationary (docs/cost-model.md §3, reuse model).

    ``cyc``, ``passes``, ``over_channels``: the array cycles, channel passes and PE mapping
    :func:`vector_array_cycles` picks (from the caller, computed once). Per cycle the array reads
    ``sK·sC`` weights and ``sP·sC`` inputs (× the groups its lanes span) and updates
    ``sK·sP`` lane accumulators. Output-stationary keeps each accumulator for its whole
    reduction and streams both operands every cycle; weight-stationary keeps a chunk of
    ``r`` weights per MAC (its register) while every pixel passes, reading each weight
    once; input-stationary keeps ``r`` inputs per MAC while the output-channel passes run
    (those of one group — a grouped layer's passes read other inputs — and of one weight
    chunk when the weights stream through the buffer, ``weight_chunks``).
    Both of the latter leave a partial sum after every chunk of ``r`` reduction steps, so
    each output is read and written ``⌈reduction/r⌉ − 1`` times at ``psum_bits``.
    ``extra_reads``/``extra_writes`` (bytes per unit: outputs read out, fills written)
    are the same for all three. The buffer has one read and one write port of
    ``buffer_port_bytes_per_cycle``; the array stalls when either needs more cycles than
    the MACs, and (``registers.psum_buffers`` = 1) while a single-buffered accumulator
    writes its partial sum back. Chosen: the least cycles × on-chip energy.
    """
    arr, reg = unit.array, unit.registers
    V, L, P = arr.vector, arr.lanes, arr.pes
    pix = n_t * H_t * W_t
    red = _ceil_div(Cg, V) * R * S
    cyc, chan = np.asarray(cyc, dtype=float), over_channels
    sC = np.minimum(Cg, V)
    sK = np.where(chan, np.minimum(K_t, L * P), np.minimum(K_t, L))
    sP = np.where(chan, 1, np.minimum(pix, P))
    span = np.minimum(sK, _ceil_div(sK, Kg))  # groups the lanes' output channels cover
    uW, uI, uO = sK * sC, sP * sC * span, sK * sP
    p, ps = float(precision), reg.psum_bits / 8
    out = n_t * K_t * H_t * W_t
    w_elems = K_t * Cg * R * S * np.where(is_mm, n_t, 1)  # a matmul's b operand is per sample
    cw, ci = max(1, reg.weight_bytes // precision), max(1, reg.input_bytes // precision)
    spills_w = _ceil_div(red, np.minimum(cw, red)) - 1  # partial-sum round trips per output
    spills_i = _ceil_div(red, np.minimum(ci, red)) - 1
    # axis 0: output-, weight-, input-stationary (DATAFLOWS)
    w_rd = np.stack(np.broadcast_arrays(cyc * uW, w_elems * 1.0, cyc * uW)) * p
    # input-stationary: the passes sharing an input are those over the same groups
    slots = passes * span
    shared = np.maximum(1.0, slots / np.minimum(slots, _ceil_div(K_t, Kg)))
    shared = np.maximum(1.0, shared / weight_chunks)
    i_rd = np.stack(np.broadcast_arrays(cyc * uI, cyc * uI, cyc * uI / shared)) * p
    o_sp = np.stack(np.broadcast_arrays(out * 0.0, out * spills_w, out * spills_i)) * ps
    reads = w_rd + i_rd + o_sp + extra_reads
    writes = o_sp + out * p + extra_writes
    macs = pix * K_t * Cg * R * S
    # registers: every MAC reads its weight and input, every lane accumulates once per
    # cycle; a register is written by each buffer read it receives (weights fan out over
    # the pixels, inputs over the lanes of one group) and by partial sums coming back
    register = 2 * p * macs + 2 * ps * cyc * uO + w_rd * sP + i_rd * (sK / span) + 2 * o_sp
    energy = (reads + writes) * unit.energy.buffer_pj_per_byte + register * reg.pj_per_byte
    port = unit.buffer_port_bytes_per_cycle
    # a single-buffered lane accumulator cannot accumulate while its partial sum goes
    # back to the buffer: the write-back adds to the array's cycles
    exposed = o_sp / port if reg.psum_buffers == 1 else 0.0
    cycles = np.maximum(cyc + exposed, np.maximum(reads, writes) / port)
    # the layer-local energy-delay product: neither the fastest order whatever its
    # traffic nor the most frugal whatever its stalls
    best = np.argmin(cycles * energy, axis=0)[None]

    def pick(x: np.ndarray) -> np.ndarray:
        return np.take_along_axis(x, best, axis=0)[0]

    return {"cycles": pick(cycles), "reads": pick(reads), "writes": pick(writes),
            "register_bytes": pick(register), "dataflow": best[0]}


def _layer_columns(workload: Workload) -> dict[str, np.ndarray]:
    cols = dict(workload.arrays)
    kinds = [ly.kind for ly in workload.layers]
    cols["kind_embed"] = np.array([k is OpKind.EMBED for k in kinds])
    cols["kind_scalar"] = np.array([k is OpKind.SCALAR for k in kinds])
    cols["kind_matmul"] = np.array([k is OpKind.MATMUL for k in kinds])
    return cols


def layer_shapes(workload: Workload) -> tuple[np.ndarray, np.ndarray]:
    """The workload's distinct layer shapes — layers whose every cost-table column
    (kind, dimensions, element counts) is equal: (the first layer of each shape, each
    layer's shape index)."""
    return _shapes_of(_layer_columns(workload))


def _shapes_of(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    shape_of: dict[tuple[Any, ...], int] = {}
    inverse = np.array([shape_of.setdefault(key, len(shape_of))
                        for key in zip(*(v.tolist() for v in cols.values()), strict=True)],
                       dtype=np.int64)
    return np.unique(inverse, return_index=True)[1], inverse


def build_layer_table(workload: Workload, unit: ComputeUnit, max_units: int,
                      batches: Sequence[int]) -> LayerTable:
    """The vectorized table behind :meth:`CostModel.layer_table` (no caching here).

    For each layer, unit count g and sub-batch b: the partition with product ≤ g that
    needs the fewest cycles among those a unit can run (working set within the buffer,
    or activations within half of it while the weights stream — any partition when
    none can); ties: one whose working set fits the buffer, then the least data
    delivered to the units. A layer may leave some of its g units idle when that is no
    slower.
    """
    if max_units < 1:
        raise InputError("max_units", f"must be >= 1, got {max_units}")
    batches = tuple(int(b) for b in batches)
    if not batches or min(batches) < 1:
        raise InputError("batch", f"sub-batches must be positive integers, got {batches}")
    # a layer's costs depend on its own columns only, and networks repeat their layers
    # (505 layers of PNASNet-5 Large are 76 shapes): the table is built per shape
    every = _layer_columns(workload)
    first, inverse = _shapes_of(every)
    cols = {k: v[first] for k, v in every.items()}
    parts = output_partitions(max_units)
    prod = parts.prod(axis=1)
    starts = np.searchsorted(prod, np.arange(1, max_units + 1))
    L, G, B = len(first), max_units, len(batches)
    shape = (L, G, B)
    out = {k: np.zeros(shape) for k in ("cycles", "ideal_cycles", "units_used", "weight_fetch",
                                        "ifmap_fetch", "ofmap", "footprint", "buffer_energy",
                                        "register_energy", "dataflow", "input_rereads",
                                        "weight_rereads")}
    part_idx = np.zeros(shape, dtype=np.int64)
    idx = np.arange(len(parts))
    seg = np.repeat(np.arange(G), np.diff(np.append(starts, len(parts))))
    # layers in chunks: ~30 intermediates of (chunk × partitions) floats, ~250k entries each
    chunk = max(1, 250_000 // len(parts))
    for j, b in enumerate(batches):
        for lo in range(0, L, chunk):
            hi = min(L, lo + chunk)
            sub = {k: v[lo:hi] for k, v in cols.items()}
            pc = _partition_costs(sub, parts, b, unit, workload.precision_bytes)
            # Keys, in order: a partition a unit can run (working set within the buffer,
            # or activations within half of it while the weights stream) before one it
            # cannot; fewer cycles; a working set that fits (no streaming); less data.
            # Without the first and third, a zero-cycle concat sits on one unit and a
            # wide 1x1 conv splits its output channels so that every unit holds the
            # whole input, however large.
            # The offsets are each layer's own maximum: a layer's choice never depends on
            # the layers it shares a chunk with.
            fp, act = pc["footprint"], pc["activations"]
            runnable = (fp <= unit.buffer_bytes) | (act <= unit.buffer_bytes / 2)
            cyc = np.where(runnable, pc["cycles"],
                           pc["cycles"] + pc["cycles"].max(axis=1, keepdims=True) + 1)
            traffic = pc["weight_fetch"] + pc["ifmap_fetch"]
            traffic = traffic + (fp > unit.buffer_bytes) * (
                traffic.max(axis=1, keepdims=True) + 1)
            # best partition with product exactly g: fewest cycles, then least traffic
            mc = np.minimum.reduceat(cyc, starts, axis=1)  # (chunk, G)
            tie = cyc == mc[:, seg]
            mt = np.minimum.reduceat(np.where(tie, traffic, np.inf), starts, axis=1)
            hit = tie & (traffic == mt[:, seg])
            first = np.minimum.reduceat(np.where(hit, idx[None, :], len(parts)), starts,
                                        axis=1)
            # best over product ≤ g: running minimum, keeping the smaller count on ties
            best = first[:, 0].copy()
            rows = np.arange(hi - lo)
            for g in range(G):
                cand = first[:, g]
                better = (cyc[rows, cand] < cyc[rows, best]) | (
                    (cyc[rows, cand] == cyc[rows, best])
                    & (traffic[rows, cand] < traffic[rows, best]))
                best = np.where(better, cand, best)
                part_idx[lo:hi, g, j] = best
            for k in out:
                out[k][lo:hi, :, j] = np.take_along_axis(pc[k], part_idx[lo:hi, :, j], axis=1)
    out = {k: v[inverse] for k, v in out.items()}
    part_idx = part_idx[inverse]
    cols = every
    freq = unit.frequency_hz
    macs = cols["macs"][:, None, None] * np.array(batches)[None, None, :]
    ops = cols["ops"][:, None, None] * np.array(batches)[None, None, :]
    e = unit.energy
    # the MAC datapath: MACs, vector ops and (reuse model) the MACs' register accesses
    mac_energy = (macs * e.mac_pj + ops * e.vector_op_pj) * PJ + out["register_energy"]
    peak = out["units_used"] * unit.array.macs * np.maximum(out["cycles"], 1e-300)
    util = np.where(cols["mac_kind"][:, None, None], macs / peak, 0.0)
    return LayerTable(
        layer_names=tuple(ly.name for ly in workload.layers), batches=batches, max_units=G,
        cycles=out["cycles"], compute_s=out["cycles"] / freq, partition=parts[part_idx],
        units_used=out["units_used"].astype(np.int64), utilization=util,
        weight_fetch_bytes=out["weight_fetch"], ifmap_fetch_bytes=out["ifmap_fetch"],
        ofmap_bytes=out["ofmap"], footprint_bytes=out["footprint"], mac_energy_j=mac_energy,
        buffer_energy_j=out["buffer_energy"], ideal_cycles=out["ideal_cycles"],
        register_energy_j=out["register_energy"], dataflow=out["dataflow"].astype(np.int64),
        input_rereads=out["input_rereads"], weight_rereads=out["weight_rereads"])


def layer_on_units(layer: Layer, unit: ComputeUnit, units: int, batch: int = 1,
                   precision_bytes: int = 1) -> LayerCost:
    """Cost of one layer on ``units`` units with a sub-batch of ``batch`` samples."""
    w = Workload("layer", (layer,), (), precision_bytes)
    return build_layer_table(w, unit, units, (batch,)).row(0, units, batch)


class CostModel:
    """A workload on a chip, with its cost tables computed once and cached.

    Exact models and heuristics call the tables millions of times; build a
    ``CostModel`` once per (workload, chip) and pass it around. No global state: the
    cache lives on the object.
    """

    def __init__(self, workload: Workload, hardware: Hardware):
        self.workload = workload
        self.hardware = hardware
        self._tables: dict[tuple[int, tuple[int, ...]], LayerTable] = {}

    def layer_table(self, batches: Iterable[int] = (1,), max_units: int | None = None
                    ) -> LayerTable:
        """Cost of every layer on 1..max_units units (default: all units of the chip)."""
        unit = self.hardware.unit
        if unit is None:
            raise InputError(f"chip {self.hardware.name!r}.unit",
                             "this chip has no compute units for a layer table",
                             "use a tiled or chiplet chip")
        G = int(max_units or self.hardware.n_units)
        key = (G, tuple(sorted(set(int(b) for b in batches))))
        if key not in self._tables:
            self._tables[key] = build_layer_table(self.workload, unit, G, key[1])
        return self._tables[key]


def divisors(n: int) -> list[int]:
    """Positive divisors of n in increasing order (sub-batch candidates)."""
    return [d for d in range(1, n + 1) if n % d == 0]


# ---------------------------------------------------------------------------------------
# NoC under XY routing


def hops(src_r: Any, src_c: Any, dst_r: Any, dst_c: Any) -> Any:
    """Links crossed by an XY-routed packet: the Manhattan distance."""
    return np.abs(np.asarray(src_r) - dst_r) + np.abs(np.asarray(src_c) - dst_c)


@dataclass(frozen=True)
class LinkLoads:
    """Bytes over every directed mesh link under XY routing.

    ``east[r, c]`` is the link (r, c) → (r, c+1); ``west[r, c]`` is (r, c+1) → (r, c);
    ``south[r, c]`` is (r, c) → (r+1, c); ``north[r, c]`` is (r+1, c) → (r, c).
    """

    east: np.ndarray
    west: np.ndarray
    south: np.ndarray
    north: np.ndarray

    @property
    def total(self) -> float:
        """Σ bytes × hops over all flows (byte-hops)."""
        return float(self.east.sum() + self.west.sum() + self.south.sum() + self.north.sum())

    @property
    def max(self) -> float:
        arrs = [a for a in (self.east, self.west, self.south, self.north) if a.size]
        return float(max((a.max() for a in arrs), default=0.0))

    def busiest(self) -> tuple[tuple[int, int], tuple[int, int], float]:
        """(from, to, bytes) of the most loaded link."""
        best: tuple[tuple[int, int], tuple[int, int], float] = ((0, 0), (0, 0), 0.0)
        for name, arr in (("east", self.east), ("west", self.west), ("south", self.south),
                          ("north", self.north)):
            if not arr.size:
                continue
            r, c = np.unravel_index(int(arr.argmax()), arr.shape)
            v = float(arr[r, c])
            if v > best[2]:
                a, b = {"east": ((r, c), (r, c + 1)), "west": ((r, c + 1), (r, c)),
                        "south": ((r, c), (r + 1, c)), "north": ((r + 1, c), (r, c))}[name]
                best = ((int(a[0]), int(a[1])), (int(b[0]), int(b[1])), v)
        return best


def xy_link_loads(rows: int, cols: int, src_r: Any, src_c: Any, dst_r: Any, dst_c: Any,
                  weight: Any) -> LinkLoads:
    """Per-link load of flows routed X first (along the source row), then Y.

    Vectorized with difference arrays, O(flows + links): a flow from column a to b
    in row r adds ``weight`` to links a..b-1 of that row (east or west), then to
    links of column b between the rows (south or north).
    """
    sr, sc, dr, dc = (np.asarray(x, dtype=np.int64).ravel() for x in (src_r, src_c, dst_r, dst_c))
    w = np.broadcast_to(np.asarray(weight, dtype=float), sr.shape).ravel()

    def segments(line, lo, hi, width, n_lines, mask):
        # diff[line, lo] += w ; diff[line, hi] -= w  → cumsum → links lo..hi-1
        size = n_lines * (width + 1)
        d = np.bincount(line[mask] * (width + 1) + lo[mask], w[mask], minlength=size)
        d -= np.bincount(line[mask] * (width + 1) + hi[mask], w[mask], minlength=size)
        return np.cumsum(d.reshape(n_lines, width + 1), axis=1)[:, : width - 1] if width > 1 \
            else np.zeros((n_lines, 0))

    east = segments(sr, sc, dc, cols, rows, dc > sc)
    west = segments(sr, dc, sc, cols, rows, dc < sc)
    south = segments(dc, sr, dr, rows, cols, dr > sr).T
    north = segments(dc, dr, sr, rows, cols, dr < sr).T
    return LinkLoads(east, west, south, north)


def noc_energy_j(byte_hops: Any, pj_per_bit: float) -> Any:
    """Energy of moving data over the NoC: byte-hops × 8 bits × pJ/bit."""
    return np.asarray(byte_hops, dtype=float) * 8 * pj_per_bit * PJ


def noc_time_s(max_link_bytes: float, max_hops: float, hardware: Hardware) -> float:
    """Time of a set of concurrent flows: the busiest link's bytes at link bandwidth plus
    the longest path's hop latency."""
    noc, unit = hardware.noc, hardware.unit
    if noc is None:
        raise InputError(f"chip {hardware.name!r}.noc", "missing")
    f = unit.frequency_hz if unit else 1e9
    return max_link_bytes / noc.link_bytes_per_s + max_hops * noc.hop_latency_cycles / f


# ---------------------------------------------------------------------------------------
# DRAM


def dram_time_s(nbytes: Any, hardware: Hardware) -> Any:
    """Time to move ``nbytes`` to or from DRAM at the chip's total DRAM bandwidth."""
    if hardware.dram is None:
        raise InputError(f"chip {hardware.name!r}.dram", "missing")
    return np.asarray(nbytes, dtype=float) / hardware.dram.bytes_per_s


def dram_energy_j(nbytes: Any, hardware: Hardware) -> Any:
    """DRAM access energy: bytes × 8 × pJ/bit (the NoC hops to the port are extra)."""
    if hardware.dram is None:
        raise InputError(f"chip {hardware.name!r}.dram", "missing")
    return np.asarray(nbytes, dtype=float) * 8 * hardware.dram.energy_pj_per_bit * PJ


# ---------------------------------------------------------------------------------------
# Heterogeneous processors (seeds 001/003)


def op_class(layer: Layer) -> str:
    """'tensor' (MAC kinds), 'vector' (pool, eltwise, concat, norm, softmax, embed) or
    'scalar' (scalar and control-flow ops)."""
    if layer.kind in MAC_KINDS:
        return "tensor"
    if layer.kind is OpKind.SCALAR:
        return "scalar"
    return "vector"


def _op_work(layer: Layer, batch: int) -> float:
    if layer.kind in MAC_KINDS:
        return float(layer.macs * batch)
    if layer.kind in (OpKind.CONCAT, OpKind.EMBED):
        return float((layer.out_elems + layer.ops) * batch)  # a copy per element
    return float(layer.ops * batch)


def processor_time_s(layer: Layer, processor: Processor, batch: int = 1,
                     control_roundtrip_s: float = 0.0) -> float:
    """Time of ``layer`` on one core of ``processor``: launch overhead + work / throughput.

    Work is MACs for tensor ops, ops for vector and scalar ops (a concat or embedding
    copies its output). ``inf`` when the processor's throughput for the class is 0.
    A control-flow op on a processor without native control flow adds
    ``control_roundtrip_s`` (seed 003: a round trip to the CPU).
    """
    cls = op_class(layer)
    thr = processor.throughput_gops[cls] * 1e9
    if thr <= 0:
        return math.inf
    t = processor.launch_overhead_us * 1e-6 + _op_work(layer, batch) / thr
    if layer.control_flow and not processor.control_flow:
        t += control_roundtrip_s
    return t


def processor_energy_j(layer: Layer, processor: Processor, batch: int = 1) -> float:
    """Energy of ``layer`` on ``processor``: work × pJ per op of its class."""
    return _op_work(layer, batch) * processor.energy_pj_per_op[op_class(layer)] * PJ


def transfer_time_s(hardware: Hardware, src: int, dst: int, nbytes: float) -> float:
    """Moving ``nbytes`` from processor ``src`` to ``dst``: 0 on the same processor, else
    latency + bytes / bandwidth of the interconnect entry."""
    if src == dst or nbytes == 0:
        return 0.0
    ic = hardware.interconnect
    if ic is None:
        raise InputError(f"chip {hardware.name!r}.interconnect", "missing")
    return ic.latency_us[src][dst] * 1e-6 + nbytes / (ic.bandwidth_gb_s[src][dst] * 1e9)


def control_roundtrip_s(hardware: Hardware, processor: int) -> float:
    """Seed 003: a control-flow op on a processor without native control flow goes to the
    nearest processor that has it and back (two interconnect latencies)."""
    procs = hardware.processors
    if procs[processor].control_flow:
        return 0.0
    hosts = [j for j, p in enumerate(procs) if p.control_flow]
    if not hosts or hardware.interconnect is None:
        return math.inf
    lat = hardware.interconnect.latency_us
    return min(lat[processor][j] + lat[j][processor] for j in hosts) * 1e-6


# ---------------------------------------------------------------------------------------
# Objectives


@dataclass(frozen=True)
class EnergyBreakdown:
    """Energy in joules by where it is spent; ``mac`` includes non-MAC vector ops."""

    dram: float = 0.0
    noc: float = 0.0
    mac: float = 0.0
    buffer: float = 0.0

    @property
    def total(self) -> float:
        return self.dram + self.noc + self.mac + self.buffer

    def __add__(self, other: EnergyBreakdown) -> EnergyBreakdown:
        return EnergyBreakdown(self.dram + other.dram, self.noc + other.noc,
                               self.mac + other.mac, self.buffer + other.buffer)

    def to_dict(self) -> dict[str, float]:
        return {"dram_j": self.dram, "noc_j": self.noc, "mac_j": self.mac,
                "buffer_j": self.buffer, "total_j": self.total}
