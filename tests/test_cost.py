"""The shared cost model on hand-computed numbers (docs/cost-model.md), plus invariants."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chipsched.cost import (
    CostModel,
    EnergyBreakdown,
    build_layer_table,
    control_roundtrip_s,
    divisors,
    dram_energy_j,
    dram_time_s,
    hops,
    layer_on_units,
    noc_energy_j,
    noc_time_s,
    output_partitions,
    processor_energy_j,
    processor_time_s,
    systolic_cycles,
    transfer_time_s,
    vector_array_cycles,
    xy_link_loads,
)
from chipsched.errors import InputError
from chipsched.hardware import ArraySpec, ComputeUnit, UnitEnergy
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network
from chipsched.workload import Layer, OpKind, Workload

SET = get_chip("edge-4x4").unit
# The hand-computed tests of sections 2-3 use the ideal on-chip model (one buffer read per
# operand per pass, free partial sums, no stalls); REUSE is the same unit with the
# reuse model (the default since issue 14), tested on its own numbers below.
SMALL = ComputeUnit(ArraySpec("vector", vector=8, lanes=4, pes=2), buffer_bytes=1 << 20,
                    frequency_ghz=1.0, vector_ops_per_cycle=4,
                    energy=UnitEnergy(mac_pj=1.0, vector_op_pj=1.0, buffer_pj_per_byte=1.0),
                    onchip_model="ideal")
REUSE = replace(SMALL, onchip_model="reuse")
CONV = Layer("c", OpKind.CONV, K=16, C=8, H=8, W=8, R=3, S=3, in_elems=512, weight_elems=1152)


# -- compute on one unit ---------------------------------------------------------------------

def test_first_resnet50_conv_on_the_set_tile():
    """C = 3 on an 8-wide vector: 3/8 of the MACs do work."""
    conv1 = get_network("resnet50").layers[0]
    assert (conv1.C, conv1.K, conv1.H, conv1.R) == (3, 64, 112, 7)
    cycles, _ = vector_array_cycles(1, 64, 3, 112, 112, 7, 7, SET.array)
    # PEs over pixels: ⌈12544/16⌉ · 49 · ⌈3/8⌉ · ⌈64/8⌉ = 784 · 49 · 8
    assert cycles == 784 * 49 * 8 == 307_328
    r = layer_on_units(conv1, SET, 1)
    assert r.cycles == 307_328 and r.utilization == pytest.approx(3 / 8)
    assert r.compute_s == pytest.approx(307_328e-9)


def test_vector_array_picks_the_better_pe_mapping():
    # K = 256 fills 8 lanes × 16 PEs twice; pixels = 1: mapping PEs over K wins
    c, passes = vector_array_cycles(1, 256, 64, 1, 1, 1, 1, SET.array)
    assert c == 1 * 8 * 2 and passes == 2
    # K = 8, pixels = 64: PEs over pixels wins: ⌈64/16⌉ · ⌈64/8⌉ · ⌈8/8⌉
    c, passes = vector_array_cycles(1, 8, 64, 8, 8, 1, 1, SET.array)
    assert c == 4 * 8 and passes == 1


def test_systolic_formula_both_branches():
    # m > w: m·k·n/(w·w) + 2(w − 1)
    assert systolic_cycles(64, 100, 64, 32) == pytest.approx(64 * 100 * 64 / 1024 + 62)
    assert systolic_cycles(16, 100, 64, 32) == pytest.approx(16 * 100 * 64 / 1024 + 62)
    # m < w and n < w: m + k + n − 1
    assert systolic_cycles(16, 100, 8, 32) == 16 + 100 + 8 - 1
    # m = w (the document leaves it open): one pass, second branch
    assert systolic_cycles(32, 100, 10, 32) == 32 + 100 + 10 - 1
    np.testing.assert_allclose(systolic_cycles(np.array([64, 16]), 100, 8, 32),
                               [64 * 100 * 8 / 1024 + 62, 123])


def test_conv_and_depthwise_on_a_systolic_npu():
    npu = get_chip("chiplet-2x2").unit  # 32×32
    conv = Layer("c", OpKind.CONV, K=64, C=16, H=8, W=8, R=3, S=3, in_elems=16 * 64)
    # im2col: m = 64 pixels, k = 16·9, n = 64 > w
    assert layer_on_units(conv, npu, 1).cycles == pytest.approx(64 * 144 * 64 / 1024 + 62)
    dw = Layer("d", OpKind.DEPTHWISE, K=32, C=32, H=8, W=8, R=3, S=3, groups=32,
               in_elems=32 * 64)
    # 32 one-column products m=64 × k=9 × n=1, one after another
    assert layer_on_units(dw, npu, 1).cycles == pytest.approx(32 * (64 * 9 / 1024 + 62))


def test_non_mac_ops_use_the_vector_unit():
    pool = Layer("p", OpKind.POOL, K=16, C=16, H=4, W=4, R=2, S=2, in_elems=16 * 64,
                 ops=16 * 16 * 4)
    r = layer_on_units(pool, SMALL, 1)
    assert r.cycles == math.ceil(1024 / 4) and r.utilization == 0.0
    scalar = Layer("s", OpKind.SCALAR, ops=10, in_elems=1)
    assert layer_on_units(scalar, SMALL, 1).cycles == 10  # one scalar op per cycle


def test_an_embedding_lookup_reads_the_gathered_rows_not_its_table():
    """16 tokens into a 1000 × 64 table (64,000 weights), sub-batch 2, int8, on one unit:
    no weights held; input = 2 × (16 ids + 16 × 64 gathered row elements) = 2,080 B;
    output 2 × 1,024 = 2,048 B; footprint 2,080 + 2,048 = 4,128 B (the table would be
    68,128 B); buffer 2,080 × (1 + 1) + 2 × 2,048 = 8,256 B accessed. On 2 units split
    over tokens each gathers half the rows: footprint 1,040 + 1,024 = 2,064 B."""
    e = Layer("e", OpKind.EMBED, K=64, C=1, H=16, W=1, in_elems=16, weight_elems=64000)
    assert e.gathered_elems == 1024 and e.resident_weight_elems == 0
    r = layer_on_units(e, SMALL, 1, batch=2)
    assert r.weight_fetch_bytes == 0 and r.ifmap_fetch_bytes == 2080
    assert r.ofmap_bytes == 2048 and r.footprint_bytes == 4128
    assert r.buffer_energy_j == pytest.approx(8256e-12, rel=1e-12)
    r2 = layer_on_units(e, SMALL, 2, batch=2)
    assert r2.footprint_bytes == 2064 and r2.ifmap_fetch_bytes == 2080
    # a table smaller than the rows asked for is read whole at most
    small = Layer("s", OpKind.EMBED, K=64, C=1, H=16, W=1, in_elems=16, weight_elems=640)
    assert small.gathered_elems == 640


# -- intra-layer partition -------------------------------------------------------------------

def test_partitions_enumerate_all_factorizations():
    p = output_partitions(4)
    prods = p.prod(axis=1)
    assert list(prods) == sorted(prods) and prods.max() == 4
    # (a, b, c, d) with a·b·c·d ≤ 4: 1 + 4 + 10 + 4 (products 1, 2, 3, 4: 1, 4, 4, 10)
    assert len(p) == 1 + 4 + 4 + 10
    assert len({tuple(r) for r in p}) == len(p)


def test_partition_search_by_hand():
    """CONV on 2 units of the small 64-MAC unit (vector 8 × lanes 4 × pes 2).

    One unit: ⌈64/2⌉·9·⌈8/8⌉·⌈16/4⌉ = 1152 cycles. Splitting K, H or W in two all give
    576; the tie goes to the least data: splitting K sends each unit half the weights
    and the whole input (576·2 + 512·2 = 2176 B) vs H: all weights and 6 of 8 input
    rows (1152·2 + 384·2 = 3072 B).
    """
    r1 = layer_on_units(CONV, SMALL, 1)
    assert r1.cycles == 1152 and r1.partition == (1, 1, 1, 1)
    r = layer_on_units(CONV, SMALL, 2)
    assert r.partition == (1, 2, 1, 1) and r.units_used == 2
    assert r.cycles == 576 and r.utilization == pytest.approx(1.0)
    assert r.weight_fetch_bytes == 1152 and r.ifmap_fetch_bytes == 1024
    assert r.ofmap_bytes == 16 * 64
    assert r.footprint_bytes == 576 + 512 + 512
    # buffer: weights written + read, input written + read once per channel pass (1),
    # outputs written + read: 2·1152 + 2·1024 + 2·1024 bytes at 1 pJ/B
    assert r.buffer_energy_j == pytest.approx(6400e-12)
    assert r.mac_energy_j == pytest.approx(CONV.macs * 1e-12)


def test_spill_rereads_the_input_per_weight_chunk():
    tiny_buf = replace(SMALL, buffer_bytes=512)
    r = layer_on_units(CONV, tiny_buf, 1)
    # footprint 1152 + 512 + 1024 > 512; weights stream in 256-byte halves: 5 chunks
    assert r.footprint_bytes == 2688
    assert r.ifmap_fetch_bytes == 512 * 5


def test_reuse_model_by_hand():
    """CONV on one unit of REUSE (vector 8 × lanes 4 × pes 2; 1 pJ/B buffer, registers of
    8 B per MAC, single-buffered 32-bit lane accumulators at 0.01 pJ/B, 128 B/cycle
    ports).

    PEs over channels (1152 cycles, tie with pixels): 8 lanes·PEs × 8-wide vector, 2
    channel passes, reduction ⌈8/8⌉·9 = 9 steps, 1024 outputs, 73,728 MACs. Per cycle
    64 weights, 8 inputs, 8 accumulators. Buffer bytes (reads | writes; the fills 1152 +
    512 and the 1024 outputs read out and written once are in all three):
      output-stationary: 1152·64 + 1152·8 + 1024 = 83,968 | 1024 + 1664 = 2,688
      weight-stationary: 1152 + 1152·8 + 1024·4·⌈9/8 − 1⌉ + 1024 = 15,488 | 6,784
      input-stationary:  1152·64 + 1152·8/2 + 4096 + 1024 = 83,456 | 6,784
    Registers (2 B per MAC + 8 B per accumulation + fan-out of buffer reads + 2 × psum
    traffic): OS 368,640, WS 147,456 + 73,728 + 1,152 + 73,728 + 8,192 = 304,256, IS
    339,968 B. Cycles: OS 1152; WS and IS 1152 + 4096/128 = 1184 (the single-buffered
    accumulators wait for their 4,096 B of partial sums). Cycles × energy: OS 1152 ×
    90,342.4, WS 1184 × (22,272 + 3,042.56), IS 1184 × 93,639.68 pJ: weight-stationary.
    """
    r = layer_on_units(CONV, REUSE, 1)
    assert r.dataflow == "weight-stationary"
    assert r.ideal_cycles == 1152 and r.cycles == 1184 and r.stall_cycles == 32
    assert r.buffer_energy_j == pytest.approx(22_272e-12)
    assert r.register_energy_j == pytest.approx(3_042.56e-12)
    assert r.mac_energy_j == pytest.approx(CONV.macs * 1e-12 + 3_042.56e-12)
    # double-buffered accumulators hide the write-back
    two = replace(REUSE, registers=replace(REUSE.registers, psum_buffers=2))
    assert layer_on_units(CONV, two, 1).cycles == 1152
    # an 8 B/cycle port: WS reads 15,488 B in 1,936 cycles, the others need ~10,500
    narrow = layer_on_units(CONV, replace(REUSE, buffer_port_bytes_per_cycle=8.0), 1)
    assert narrow.dataflow == "weight-stationary"
    assert narrow.cycles == pytest.approx(15_488 / 8) and narrow.ideal_cycles == 1152
    # the ideal model on the same layer: 2·1152 + 512·(1 + 2) + 2·1024, no registers
    ideal = layer_on_units(CONV, SMALL, 1)
    assert ideal.buffer_energy_j == pytest.approx(5_888e-12) and ideal.register_energy_j == 0


def test_reuse_model_input_stationary_by_hand():
    """An fc of 64 → 32 at batch 1 on one unit of REUSE: PEs over channels (8 lanes·PEs,
    4 output-channel passes × ⌈64/8⌉ = 8 reduction steps = 32 cycles; over pixels 64).
    One pixel, so every order reads each weight once (32 · 64 = 2,048 B); the 8-element
    reduction fits the 8 B registers, so no partial sums. Inputs: 32 cycles × 8 = 256 B
    for output- and weight-stationary; input-stationary keeps them over the 4 passes
    that read them (shared = 4): 64 B. Reads 2,048 + 256 + 32 (outputs out) = 2,336 B,
    or 2,144 B; writes 32 outputs + 2,048 + 64 fills = 2,144 B for all. Registers: 2 ·
    2,048 MACs + 2 · 4 B · 32 cycles · 8 accumulators + 2,048 weight reads + 8 lanes
    per input read (256 or 64 · 8): 10,240 or 8,704 B at 0.01 pJ. No stall (2,336 B /
    128 B per cycle < 32). Input-stationary: 4,288 pJ buffer, 87.04 pJ registers."""
    fc = Layer("f", OpKind.FC, K=32, C=64, in_elems=64, weight_elems=2048)
    r = layer_on_units(fc, REUSE, 1)
    assert r.dataflow == "input-stationary" and r.cycles == r.ideal_cycles == 32
    assert r.buffer_energy_j == pytest.approx(4_288e-12)
    assert r.register_energy_j == pytest.approx(87.04e-12)


def test_reuse_model_picks_the_least_cycles_times_energy():
    """A 3×3 conv, 4 → 4 channels on 2×2 pixels, on one unit of REUSE: PEs over pixels
    (⌈4/2⌉ · 9 = 18 cycles; sK = 4 lanes, sP = 2, sC = 4 of 8; 16 weights and 8 inputs
    per cycle). The 9-step reduction leaves one partial-sum round trip per output for the
    8-value registers (16 outputs × 4 B = 64 B each way). Buffer bytes (reads | writes,
    with the 16 outputs read out and the 144 + 16 fills written):
      output-stationary: 18·16 + 18·8 + 16 = 448 | 176 → 624 pJ, 18 cycles
      weight-stationary: 144 + 144 + 64 + 16 = 368 | 240 → 608 pJ, 18 + 64/128 = 18.5
    registers 3,456 and 3,296 B (34.56 and 32.96 pJ). Weight-stationary moves fewer
    bytes, but 18 × 658.56 < 18.5 × 640.96 pJ·cycles: output-stationary."""
    conv = Layer("c", OpKind.CONV, K=4, C=4, H=2, W=2, R=3, S=3, in_elems=16,
                 weight_elems=144)
    r = layer_on_units(conv, REUSE, 1)
    assert r.dataflow == "output-stationary" and r.cycles == 18
    assert r.buffer_energy_j == pytest.approx(624e-12)
    assert r.register_energy_j == pytest.approx(34.56e-12)


def test_reuse_model_on_two_units_by_hand():
    """CONV on 2 units of REUSE: output channels split (8 per unit), each unit PEs over
    channels, one pass, 576 cycles. Per unit: 8 · 8 · 9 = 576 weight bytes and the whole
    512 B input are filled (1,088 B: the fills are per unit), 512 outputs. Weight-
    stationary: reads 576 + 576 · 8 + 512 · 4 + 512 = 7,744 B, writes 2,048 + 512 + 1,088
    = 3,648 B, 576 + 2,048/128 = 592 cycles; registers 73,728 + 36,864 + 576 + 36,864 +
    4,096 = 152,128 B. Both units: 22,784 pJ buffer (one unit: 22,272 — the second
    unit's copy of the input costs 512 B more), 3,042.56 pJ registers."""
    r = layer_on_units(CONV, REUSE, 2)
    assert r.partition == (1, 2, 1, 1) and r.dataflow == "weight-stationary"
    assert r.ideal_cycles == 576 and r.cycles == 592
    assert r.buffer_energy_j == pytest.approx(22_784e-12)
    assert r.register_energy_j == pytest.approx(3_042.56e-12)


def test_reuse_model_depthwise_inputs_are_not_shared_across_passes():
    """A 3×3 depthwise conv, 32 channels of 56×56, on one SET tile: PEs over pixels (7,056
    cycles; 16 pixels × 8 lanes, each lane its own channel, so 128 distinct inputs and 8
    weights per cycle, 4 passes over the 32 channels). The passes read other channels, so
    input-stationary saves nothing: buffer reads (with the 100,352 outputs read out)
      output-stationary: 7,056·8 + 7,056·128 + 100,352 = 1,059,968 B → 8,281 cycles
      weight-stationary: 288 + 903,168 + 100,352·1·4 + 100,352 = 1,405,216 B → 10,978
      input-stationary:  56,448 + 903,168 + 401,408 + 100,352 = 1,461,376 B → 11,417
    on a 128 B/cycle read port: output-stationary, a 17 % stall."""
    dw = Layer("dw", OpKind.CONV, K=32, C=32, H=56, W=56, R=3, S=3, groups=32,
               in_elems=32 * 56 * 56, weight_elems=32 * 9)
    r = layer_on_units(dw, SET, 1)
    assert r.dataflow == "output-stationary" and r.ideal_cycles == 7056
    assert r.cycles == pytest.approx(1_059_968 / 128)
    # one pixel of a 16-channel 1×1 depthwise conv on REUSE: PEs over channels, 2 passes
    # of 8 lanes, each lane its own channel (span 8), so each input meets one weight
    # and no order saves a read: 16 weights + 16 inputs + 16 outputs out = 48 B read
    # and 16 + 32 fills written by all three (96 pJ); a tie, output-stationary first.
    # Sharing inputs across the passes would make input-stationary read 8 B less.
    one = Layer("dw1", OpKind.CONV, K=16, C=16, H=1, W=1, R=1, S=1, groups=16,
                in_elems=16, weight_elems=16)
    r = layer_on_units(one, REUSE, 1)
    assert r.dataflow == "output-stationary" and r.cycles == 2
    assert r.buffer_energy_j == pytest.approx(96e-12)
    # registers: 2 · 16 MACs + 2 · 4 B · 2 cycles · 8 accumulators + 16 weight reads into
    # one MAC each + 16 input reads into sK/span = 1 lane each = 192 B
    assert r.register_energy_j == pytest.approx(1.92e-12)


def test_reuse_weight_stationary_reads_weights_once_per_sub_batch():
    """A 1×1 conv 8 → 8 on 2×2 pixels at batch 2 on one unit of REUSE: PEs over channels,
    8 pixels × 1 reduction step = 8 cycles. Weight-stationary reads the 64 weights once
    for both samples (not once per sample: only a matmul's second operand is per
    sample); inputs 8 cycles × 8 = 64 B, the 64 outputs read out: 192 B read; 64
    outputs + 64 + 64 fills = 192 B written: 384 pJ. Output- and input-stationary read
    8 × 64 = 512 weight bytes. Registers 2 · 512 + 2 · 4 · 8 · 8 + 64 + 64 · 8 = 2,112 B."""
    conv = Layer("c", OpKind.CONV, K=8, C=8, H=2, W=2, R=1, S=1, in_elems=32,
                 weight_elems=64)
    r = layer_on_units(conv, REUSE, 1, batch=2)
    assert r.dataflow == "weight-stationary" and r.cycles == 8
    assert r.buffer_energy_j == pytest.approx(384e-12)
    assert r.register_energy_j == pytest.approx(21.12e-12)


def test_reuse_spill_keeps_what_fits_and_streams_the_rest():
    """An fc of 64 × 64 int8 weights (4,096 B) with a 2,048 B buffer: the 64 + 64
    activation bytes fit half of it, so the weights stream through once and the input is
    read once (the ideal model re-reads the input once per 1,024 B weight chunk: 4×)."""
    fc = Layer("f", OpKind.FC, K=64, C=64, in_elems=64, weight_elems=4096)
    r = layer_on_units(fc, replace(REUSE, buffer_bytes=2048), 1)
    assert r.footprint_bytes == 4224
    assert r.ifmap_fetch_bytes == 64 and r.weight_fetch_bytes == 4096
    assert layer_on_units(fc, replace(SMALL, buffer_bytes=2048), 1).ifmap_fetch_bytes == 256
    # an fc of 16 × 16 with a 256 B buffer: the weights stream in two 128 B chunks, one per
    # output-channel pass, so an input held in a register meets one pass at a time and
    # input-stationary saves nothing (shared = 2 passes / 2 chunks): all three orders
    # read 256 + 4 cycles · 8 + 16 = 304 B and write 16 + 256 + 16 = 288 B, a tie
    small = layer_on_units(Layer("f", OpKind.FC, K=16, C=16, in_elems=16, weight_elems=256),
                           replace(REUSE, buffer_bytes=256), 1)
    assert small.dataflow == "output-stationary" and small.cycles == 4
    assert small.buffer_energy_j == pytest.approx(592e-12)
    # neither fits half: CONV on 512 B re-reads the input per weight chunk (5 × 512 B)
    # rather than the weights per activation chunk (6 × 1152 B)
    c = layer_on_units(CONV, replace(REUSE, buffer_bytes=512), 1)
    assert c.ifmap_fetch_bytes == 512 * 5 and c.weight_fetch_bytes == 1152


@given(st.integers(1, 300), st.integers(1, 300), st.integers(1, 16), st.sampled_from([1, 3]),
       st.sampled_from([1, 2]), st.sampled_from([1, 4]), st.sampled_from([1, 0]))
def test_reuse_model_invariants(K, C, H, R, stride, b, depthwise):
    """On one unit (one partition): the reuse model's array cycles are the ideal model's,
    stalls only add, and a port wide enough with double-buffered accumulators removes
    every stall."""
    groups = C if depthwise == 0 else 1
    K = C if groups > 1 else K
    layer = Layer("x", OpKind.CONV, K=K, C=C, H=H, W=H, R=R, S=R, stride=stride, groups=groups,
                  in_elems=C * (H * stride) ** 2, weight_elems=K * (C // groups) * R * R)
    ideal = layer_on_units(layer, SMALL, 1, b)
    r = layer_on_units(layer, REUSE, 1, b)
    assert r.ideal_cycles == ideal.cycles and r.cycles >= r.ideal_cycles
    assert r.dataflow in ("output-stationary", "weight-stationary", "input-stationary")
    assert r.register_energy_j > 0 and r.buffer_energy_j > 0
    wide = replace(REUSE, buffer_port_bytes_per_cycle=1e12,
                   registers=replace(REUSE.registers, psum_buffers=2))
    w = layer_on_units(layer, wide, 1, b)
    assert w.cycles == w.ideal_cycles == ideal.cycles
    # the weights cross the buffer at least once, and every output is written and read
    assert r.buffer_energy_j >= (2 * r.ofmap_bytes + r.weight_fetch_bytes) * 1e-12 * (1 - 1e-9)


def test_unknown_onchip_model_names_the_field():
    with pytest.raises(InputError, match="onchip_model"):
        replace(SMALL, onchip_model="magic")


def test_batch_partition_and_fewer_units_than_given():
    r = layer_on_units(CONV, SMALL, 4, batch=2)
    assert np.prod(r.partition) <= 4 and r.units_used <= 4
    # twice the work on twice the units at best
    assert r.cycles >= layer_on_units(CONV, SMALL, 2, batch=1).cycles
    fc = Layer("f", OpKind.FC, K=10, C=64, in_elems=64, weight_elems=650)
    # K = 10 on 4 lanes: 3 passes at best; more than 3 units cannot help
    t = build_layer_table(Workload("w", (fc,)), SMALL, 16, (1,))
    assert t.cycles[0, 15, 0] == t.cycles[0, 2, 0]
    assert t.units_used[0, 15, 0] <= 3


@given(st.integers(1, 64), st.integers(1, 64), st.integers(1, 14), st.sampled_from([1, 3]),
       st.sampled_from([1, 2]), st.sampled_from([1, 2, 4]))
def test_table_invariants(K, C, H, R, stride, b):
    layer = Layer("x", OpKind.CONV, K=K, C=C, H=H, W=H, R=R, S=R, stride=stride,
                  in_elems=C * (H * stride) ** 2, weight_elems=K * C * R * R)
    G = 12
    t = build_layer_table(Workload("w", (layer,)), SMALL, G, (b,))
    cyc = t.cycles[0, :, 0]
    assert np.all(np.diff(cyc) <= 0), "more units never slow a layer down"
    assert np.all(t.partition[0, :, 0].prod(axis=1) <= np.arange(1, G + 1))
    assert np.all(t.units_used[0, :, 0] <= np.arange(1, G + 1))
    # no unit beats its peak: cycles · units · MACs/cycle ≥ MACs
    assert np.all(cyc * t.units_used[0, :, 0] * SMALL.array.macs >= layer.macs * b)
    assert np.all(t.utilization[0, :, 0] <= 1 + 1e-12)
    # a table row equals the one-layer function
    for g in (1, 5, 12):
        assert t.row(0, g, b) == layer_on_units(layer, SMALL, g, b)


def test_partition_search_prefers_what_a_unit_can_run():
    """A concat of 270 × 83 × 83 int8 channels (1,860,030 B in and out; 0 cycles on
    any partition) on 16 SET tiles: on one unit its working set is 3,720,060 B > 1 MB;
    the search splits it over 5 units (54 channels each: 2 × 54 × 83² = 744,012 B),
    the least data among the partitions that fit (5 × 54 channels deliver exactly the
    1,860,030 input bytes; 4 × 68 would deliver 1,873,808), instead of the least-data
    one-unit partition that does not fit."""
    unit = get_chip("edge-4x4").unit
    cat = Layer("cat", OpKind.CONCAT, K=270, C=270, H=83, W=83, in_elems=270 * 83 * 83)
    one = layer_on_units(cat, unit, 1)
    assert one.footprint_bytes == 3720060 and one.units_used == 1  # nothing else on 1 unit
    r = layer_on_units(cat, unit, 16)
    assert r.cycles == 0 and r.units_used == 5 and r.footprint_bytes == 744012
    assert r.footprint_bytes <= unit.buffer_bytes


@pytest.mark.parametrize("network,units", [("pnasnet5-large", 4), ("inception-resnet-v1", 16)])
def test_a_layers_row_does_not_depend_on_the_other_layers(network, units):
    """The table is built once per layer shape (issue 25: PNASNet-5 Large's 505 layers
    are 76 shapes; its cloud table took 13 s, 2 s now). A layer's row must be what it is
    alone: before, a partition that overflows the buffer was pushed behind the others
    by the largest value of the whole chunk of layers, and two partitions whose traffic
    differs in the last bit (H and W split alike) could tie or not depending on which
    layers shared the chunk — PNASNet-5 Large on 4 units chose differently."""
    import dataclasses

    w = get_network(network)
    unit = get_chip("edge-4x4").unit
    full = build_layer_table(w, unit, units, (1, 2))
    rev = build_layer_table(replace(w, layers=w.layers[::-1], edges=()), unit, units, (1, 2))
    arrays = [f.name for f in dataclasses.fields(full)
              if isinstance(getattr(full, f.name), np.ndarray)]
    for name in arrays:
        np.testing.assert_array_equal(getattr(full, name), getattr(rev, name)[::-1], name)
    for i in range(len(w)):
        one = build_layer_table(Workload("one", (w.layers[i],), (), w.precision_bytes), unit,
                                units, (1, 2))
        for name in arrays:
            np.testing.assert_array_equal(getattr(one, name)[0], getattr(full, name)[i],
                                          f"{name} of layer {i}")


def test_cost_model_caches_and_checks():
    w = get_network("tiny")
    cm = CostModel(w, get_chip("edge-4x4"))
    t = cm.layer_table((1, 2))
    assert cm.layer_table((2, 1)) is t
    assert t.compute_s.shape == (len(w), 16, 2)
    with pytest.raises(InputError, match="sub-batch 3 not in the table"):
        t.row(0, 1, 3)
    with pytest.raises(InputError, match="no compute units"):
        CostModel(w, get_chip("neuro-8x8")).layer_table()
    assert divisors(64) == [1, 2, 4, 8, 16, 32, 64]


# -- NoC, DRAM -----------------------------------------------------------------------------------

def test_xy_link_loads_by_hand():
    # (0,0) → (2,2) weight 5: east along row 0, then south along column 2;
    # (2,2) → (0,1) weight 3: west along row 2, then north along column 1
    ll = xy_link_loads(3, 3, [0, 2], [0, 2], [2, 0], [2, 1], [5, 3])
    assert ll.east.tolist() == [[5, 5], [0, 0], [0, 0]]
    assert ll.south[:, 2].tolist() == [5, 5] and ll.south.sum() == 10
    assert ll.west.tolist() == [[0, 0], [0, 0], [0, 3]]
    assert ll.north[:, 1].tolist() == [3, 3] and ll.north.sum() == 6
    assert ll.total == 5 * 4 + 3 * 3
    assert ll.max == 5
    src, dst, v = ll.busiest()
    assert v == 5 and abs(src[0] - dst[0]) + abs(src[1] - dst[1]) == 1


@given(st.integers(1, 6), st.integers(1, 6), st.data())
def test_link_loads_total_is_weighted_hops(rows, cols, data):
    n = data.draw(st.integers(0, 30))
    sr = data.draw(st.lists(st.integers(0, rows - 1), min_size=n, max_size=n))
    sc = data.draw(st.lists(st.integers(0, cols - 1), min_size=n, max_size=n))
    dr = data.draw(st.lists(st.integers(0, rows - 1), min_size=n, max_size=n))
    dc = data.draw(st.lists(st.integers(0, cols - 1), min_size=n, max_size=n))
    w = data.draw(st.lists(st.integers(0, 100), min_size=n, max_size=n))
    ll = xy_link_loads(rows, cols, sr, sc, dr, dc, w)
    assert ll.total == pytest.approx(float(np.dot(w, hops(sr, sc, dr, dc))) if n else 0.0)
    assert ll.east.shape == (rows, cols - 1) and ll.south.shape == (rows - 1, cols)
    assert min(a.min(initial=0) for a in (ll.east, ll.west, ll.south, ll.north)) >= 0


def test_noc_and_dram_formulas():
    hw = get_chip("edge-4x4")
    assert noc_energy_j(1000, 0.7) == pytest.approx(1000 * 8 * 0.7e-12)
    # 32 GB/s links, 2 cycles per hop at 1 GHz
    assert noc_time_s(64_000, 3, hw) == pytest.approx(64_000 / 32e9 + 3 * 2e-9)
    assert dram_time_s(16.384e6, hw) == pytest.approx(1e-3)
    assert dram_energy_j(1e6, hw) == pytest.approx(1e6 * 8 * 7.5e-12)


# -- heterogeneous processors ----------------------------------------------------------------

def test_processor_model():
    soc = get_chip("soc-npu-gpu-cpu")
    npu, gpu, cpu = soc.processors
    fc = Layer("f", OpKind.FC, K=1000, C=2048, in_elems=2048, weight_elems=2_049_000)
    assert processor_time_s(fc, npu) == pytest.approx(20e-6 + 2_048_000 / 2000e9)
    assert processor_time_s(fc, cpu, batch=2) == pytest.approx(1e-6 + 4_096_000 / 50e9)
    assert processor_energy_j(fc, gpu) == pytest.approx(2_048_000 * 2.0e-12)
    ctl = Layer("loop", OpKind.SCALAR, ops=100, in_elems=1, control_flow=True)
    rt = control_roundtrip_s(soc, 0)
    assert rt == pytest.approx(10e-6)  # NPU → CPU → NPU, 5 µs each way
    assert control_roundtrip_s(soc, 2) == 0.0
    assert processor_time_s(ctl, npu, control_roundtrip_s=rt) == pytest.approx(
        20e-6 + 100 / 0.5e9 + 10e-6)
    assert processor_time_s(ctl, cpu) == pytest.approx(1e-6 + 100 / 4e9)
    assert transfer_time_s(soc, 0, 0, 1e6) == 0.0
    assert transfer_time_s(soc, 0, 2, 1e6) == pytest.approx(5e-6 + 1e6 / 25e9)


def test_processor_that_cannot_run_a_class():
    soc = get_chip("soc-npu-gpu-cpu").to_dict()
    soc["processors"][0]["throughput_gops"]["scalar"] = 0
    from chipsched.hardware import Hardware

    npu = Hardware.from_dict(soc).processors[0]
    assert processor_time_s(Layer("s", OpKind.SCALAR, ops=1, in_elems=1), npu) == math.inf


# -- aggregates (each decision's objectives: tests/test_objectives.py) ----------------------

def test_energy_breakdown():
    e = EnergyBreakdown(dram=1, noc=2, mac=3, buffer=4) + EnergyBreakdown(dram=1)
    assert e.total == 11 and e.to_dict()["dram_j"] == 2
