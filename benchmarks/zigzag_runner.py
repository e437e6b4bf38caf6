#!/usr/bin/env python3
"""zigzag_runner.py -- evaluate DNN layers on one SET tile with ZigZag (zigzag-dse 3.9.1).

Usage (inside ZigZag's venv):   python zigzag_runner.py IN.json OUT.json

IN.json
    {"accelerator": {...overrides of DEFAULT_ACCELERATOR, all optional...},
     "layers": [{"name", "type": "conv"|"fc", "B", "K", "C", "OY", "OX", "FY", "FX",
                 "SY", "SX", "precision_bits": 8,
                 optional "IY", "IX" (input height/width; default OY*SY, OX*SX, i.e.
                 'same' padding -- ResNet's 224->112, 56->56, 14->7)}, ...],
     "optimize": "latency" | "energy",
     optional "lpf_limit": int (LOMA loop-prime-factor limit; default 5, ZigZag's own default is 6:
               5 keeps the four ResNet-50 test layers under ~15 s each on one core),
     optional "jobs": int (candidate spatial mappings evaluated in parallel processes, default 1),
     optional "spatial_mappings": {name: {"D1": {"K": 16}, "D2": {...}, "D3": {...}}, ...}
               (replaces SPATIAL_MAPPINGS), optional "keep_dumps": bool}

OUT.json  {"zigzag_version", "accelerator" (the parameters used), "accelerator_yaml",
           "optimize", "lpf_limit", "layers": [one record per layer, see run_layer()]}

Everything is obtained through ZigZag's public entry point
zigzag.api.get_hardware_performance_zigzag(workload, accelerator_yaml, mapping_yaml, ...)
and the CostModelEvaluation objects it returns. Units: ZigZag energies are pJ (because
every r_cost/w_cost/unit_energy below is given in pJ), latencies are clock cycles,
memory sizes and bandwidths in the YAML are bits and bits/cycle.

How the tile is described (ZigZag format; every choice is also repeated as a comment in
the generated YAML, see OUT.json["accelerator_yaml"]):

* Operational array: 3 dimensions D1 = 16 (PEs), D2 = 8 (lanes per PE), D3 = 8 (vector
  width per lane) = 1024 8-bit MACs, unit_energy = mac_pj per MAC.
* Register files: ZigZag "served_dimensions: []" = one private instance per MAC, so each
  of a PE's 64 MACs has its own weight RF (rf_w_bytes), input RF (rf_i_bytes) and one
  32-bit partial-sum register (rf_o). A PE thus holds 64x of each. Their energy is
  rf_pj_per_byte per byte (psum register: per 32-bit word = 4 bytes).
* One 1 MiB SRAM global buffer shared by W, I and O (served_dimensions = all three OA
  dims: it multicasts to every MAC). One read port and one write port, each
  sram_bw_bytes_per_cycle wide. r_cost = w_cost = sram_pj_per_byte * port width in bytes
  per full-width access, and bandwidth_min = 8 bits, so that ZigZag charges exactly
  sram_pj_per_byte per byte moved (ZigZag counts accesses in bandwidth_min granules and
  prices them as (min/max) of a full-width access).
* DRAM: one read/write port of dram_bw_bytes_per_cycle, 7.5 pJ/bit, same 8-bit granule.
* Workload: conv = O[b][k][oy][ox] += W[k][c][fy][fx] * I[b][c][iy][ix] with
  ix = SX*ox + fx, iy = SY*oy + fy and the input extent IX x IY; fc = ZigZag "Gemm"
  O[b][k] += W[k][c] * I[b][c]. W and I are constant operands (they start in DRAM);
  O is written back to DRAM. Precisions: W = I = final O = precision_bits, partial sums
  psum_bits (32).
* Spatial mappings: each candidate in SPATIAL_MAPPINGS, clipped to the layer, is given to
  ZigZag as a fully specified user spatial mapping in its own API call (so ZigZag's own
  spatial-mapping generator is not used); LOMA searches the temporal mapping and ZigZag's
  Minimal{Latency,Energy}Stage keeps the best temporal mapping for that candidate; this
  script then keeps the best candidate by the same criterion (ties -> the other metric,
  as ZigZag's reduce stages do). Candidates that coincide after clipping, or that are
  OX<->OY mirror images on a square layer, are evaluated once (see "aliases").
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import logging
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from importlib import metadata

# ZigZag's api calls logging.basicConfig(level=INFO) on every call; configuring the root
# logger first makes that a no-op and keeps its per-candidate INFO chatter off stderr.
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

import yaml  # noqa: E402  (PyYAML, a ZigZag dependency)
from zigzag.api import get_hardware_performance_zigzag  # noqa: E402
from zigzag.mapping.data_movement import DataDirection, DataMoveAttr  # noqa: E402

DEFAULT_ACCELERATOR = {
    "name": "set_tile",
    "pes": 16,  # D1
    "lanes": 8,  # D2
    "vector": 8,  # D3
    "frequency_ghz": 1.0,  # only used to report seconds
    "mac_pj": 0.018,  # chipsched's SET preset (docs/cost-model.md); 0.5 = a 45 nm-ish 8b MAC
    "rf_w_bytes": 8,  # weight RF per MAC (8 int8 weights)
    "rf_i_bytes": 8,  # input RF per MAC (8 int8 activations)
    "psum_bits": 32,  # one 32-bit partial-sum register per MAC; also ZigZag's "O" precision
    "rf_pj_per_byte": 0.01,  # RF read or write, per byte (psum register: 4x per 32-bit access)
    "sram_bytes": 1 << 20,  # 1 MiB shared global buffer
    "sram_pj_per_byte": 1.0,  # read or write
    "sram_bw_bytes_per_cycle": 128,  # per port; one read port + one write port
    "dram_pj_per_bit": 7.5,  # read or write
    "dram_bw_bytes_per_cycle": 32,  # one shared read/write port
}

# Candidate spatial unrollings, as {OA dim: {layer dim: factor}}. D1 = PEs (16),
# D2 = lanes (8), D3 = vector (8). Factors larger than the layer's dim are clipped to it;
# candidates that become identical after clipping are evaluated once.
SPATIAL_MAPPINGS = {
    "K16_C8_OX8": {"D1": {"K": 16}, "D2": {"OX": 8}, "D3": {"C": 8}},
    "K16_C8_OY8": {"D1": {"K": 16}, "D2": {"OY": 8}, "D3": {"C": 8}},
    "K16_OX8_OY8": {"D1": {"K": 16}, "D2": {"OX": 8}, "D3": {"OY": 8}},
    "K32_C32": {"D1": {"K": 16}, "D2": {"K": 2, "C": 4}, "D3": {"C": 8}},
    # chipsched's two NVDLA-style choices: PEs over output channels / over output pixels
    "K128_C8": {"D1": {"K": 16}, "D2": {"K": 8}, "D3": {"C": 8}},
    "OX4OY4_K8_C8": {"D1": {"OX": 4, "OY": 4}, "D2": {"K": 8}, "D3": {"C": 8}},
}

# --------------------------------------------------------------------------- inputs


def _register_file(name: str, operand: str, nbytes: int, pj_per_byte: float, what: str
                   ) -> str:
    """A per-MAC 8-bit register file in ZigZag's format: ``served_dimensions: []`` = one
    private copy per MAC; one 8-bit read and one 8-bit write port."""
    return f"""\
  # Per-MAC {what} register file: {nbytes} B; served_dimensions [] = one private copy
  # per MAC. {pj_per_byte} pJ per 8-bit read or write, one element/cycle each way.
  {name}:
    size: {8 * nbytes}
    r_cost: {pj_per_byte}
    w_cost: {pj_per_byte}
    area: 0
    latency: 1
    operands: [{operand}]
    ports:
      - name: r_port_1
        type: read
        bandwidth_min: 8
        bandwidth_max: 8
        allocation: [{operand}, tl]
      - name: w_port_1
        type: write
        bandwidth_min: 8
        bandwidth_max: 8
        allocation: [{operand}, fh]
    served_dimensions: []
"""


def accelerator_yaml(a: dict) -> str:
    """The tile in ZigZag's accelerator YAML format, with every choice commented."""
    sram_port_bits = 8 * a["sram_bw_bytes_per_cycle"]
    dram_port_bits = 8 * a["dram_bw_bytes_per_cycle"]
    psum_bits = a["psum_bits"]
    rf_o_pj = a["rf_pj_per_byte"] * psum_bits / 8
    return f"""\
# SET hw-tile for ZigZag 3.9.1, generated by zigzag_runner.py.
# Units (ZigZag): size in bits, bandwidth in bits/cycle, r_cost/w_cost in pJ per access of
# bandwidth_max bits; ZigZag counts accesses in bandwidth_min granules, each priced
# (bandwidth_min/bandwidth_max) of a full access. area values are placeholders (unused).
name: {a["name"]}

memories:
{_register_file("rf_w", "I2", a["rf_w_bytes"], a["rf_pj_per_byte"], "weight")}
{_register_file("rf_i", "I1", a["rf_i_bytes"], a["rf_pj_per_byte"], "input (activation)")}
  # Per-MAC partial-sum register: one {psum_bits}-bit accumulator ({rf_o_pj:g} pJ per access
  # = {a["rf_pj_per_byte"]} pJ/B x {psum_bits // 8} B); spatial reduction over C happens on the
  # way up to the SRAM (ZigZag's adder-tree view).
  rf_o:
    size: {psum_bits}
    r_cost: {rf_o_pj}
    w_cost: {rf_o_pj}
    area: 0
    latency: 1
    operands: [O]
    ports:
      - name: r_port_1
        type: read
        bandwidth_min: {psum_bits}
        bandwidth_max: {psum_bits}
        allocation: [O, tl, O, th]
      - name: w_port_1
        type: write
        bandwidth_min: {psum_bits}
        bandwidth_max: {psum_bits}
        allocation: [O, fh, O, fl]
    served_dimensions: []

  # Shared on-chip global buffer: {a["sram_bytes"]} B for W, I and O together; multicasts to
  # all 1024 MACs (served over D1, D2, D3). One read port and one write port of
  # {a["sram_bw_bytes_per_cycle"]} B/cycle each. {a["sram_pj_per_byte"]} pJ per byte read
  # or written: r_cost = w_cost = {a["sram_pj_per_byte"]} x {a["sram_bw_bytes_per_cycle"]} B
  # per full-width access,
  # bandwidth_min 8 bit => charged per byte actually moved.
  sram:
    size: {8 * a["sram_bytes"]}
    r_cost: {a["sram_pj_per_byte"] * a["sram_bw_bytes_per_cycle"]}
    w_cost: {a["sram_pj_per_byte"] * a["sram_bw_bytes_per_cycle"]}
    area: 0
    latency: 1
    operands: [I1, I2, O]
    ports:
      - name: r_port_1
        type: read
        bandwidth_min: 8
        bandwidth_max: {sram_port_bits}
        allocation: [I1, tl, I2, tl, O, tl, O, th]
      - name: w_port_1
        type: write
        bandwidth_min: 8
        bandwidth_max: {sram_port_bits}
        allocation: [I1, fh, I2, fh, O, fh, O, fl]
    served_dimensions: [D1, D2, D3]

  # Off-chip DRAM: one read/write port of {a["dram_bw_bytes_per_cycle"]} B/cycle,
  # {a["dram_pj_per_bit"]} pJ/bit read or written => r_cost = w_cost =
  # {a["dram_pj_per_bit"]} x {dram_port_bits} bit,
  # bandwidth_min 8 bit => charged per byte actually moved.
  dram:
    size: 100000000000
    r_cost: {a["dram_pj_per_bit"] * dram_port_bits}
    w_cost: {a["dram_pj_per_bit"] * dram_port_bits}
    area: 0
    latency: 1
    operands: [I1, I2, O]
    ports:
      - name: rw_port_1
        type: read_write
        bandwidth_min: 8
        bandwidth_max: {dram_port_bits}
        allocation: [I1, fh, I1, tl, I2, fh, I2, tl, O, fh, O, tl, O, fl, O, th]
    served_dimensions: [D1, D2, D3]

operational_array:
  # {a["pes"]} PEs x {a["lanes"]} lanes x {a["vector"]} vector
  # = {a["pes"] * a["lanes"] * a["vector"]} int8 MACs,
  # {a["mac_pj"]} pJ per MAC; no systolic dimensions (broadcast/multicast array).
  unit_energy: {a["mac_pj"]}
  unit_area: 1
  dimensions: [D1, D2, D3]
  sizes: [{a["pes"]}, {a["lanes"]}, {a["vector"]}]
"""


def _fix_allocations(text: str) -> str:
    """Turn the compact `allocation: [OP, dir, OP, dir]` lines above into YAML lists of
    'OP, dir' strings, which is what ZigZag's validator expects."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("allocation:") and "[" in s:
            indent = line[: len(line) - len(line.lstrip())]
            items = [x.strip() for x in s.split("[", 1)[1].rstrip("]").split(",")]
            out.append(f"{indent}allocation:")
            for op, d in zip(items[0::2], items[1::2], strict=False):
                out.append(f"{indent}  - {op}, {d}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def layer_dims(layer: dict) -> dict:
    """Loop sizes of a layer (ZigZag LayerDims)."""
    if layer["type"] == "fc":
        return {"B": layer.get("B", 1), "K": layer["K"], "C": layer["C"]}
    return {d: layer.get(d, 1) for d in ("B", "K", "C", "OY", "OX", "FY", "FX")}


def workload_node(layer: dict, node_id: int, node_name: str, psum_bits: int) -> dict:
    """One layer in ZigZag's workload (YAML-equivalent) list-of-dicts format."""
    p = int(layer.get("precision_bits", 8))
    dims = layer_dims(layer)
    prec = {"W": p, "I": p, "O": psum_bits, "O_final": p}
    # operand_source pointing at the node itself marks W and I as constant (read from DRAM),
    # as ZigZag's ONNX parser does for a first layer.
    if layer["type"] == "fc":
        return {
            "id": node_id,
            "name": node_name,
            "operator_type": "Gemm",
            "equation": "O[b][k]+=W[k][c]*I[b][c]",
            "loop_dims": list(dims),
            "loop_sizes": list(dims.values()),
            "operand_precision": prec,
            "operand_source": {"W": node_id, "I": node_id},
        }
    sy, sx = layer.get("SY", 1), layer.get("SX", 1)
    iy = layer.get("IY", dims["OY"] * sy)
    ix = layer.get("IX", dims["OX"] * sx)
    return {
        "id": node_id,
        "name": node_name,
        "operator_type": "Conv",
        "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
        "dimension_relations": [f"ix={sx}*ox+1*fx", f"iy={sy}*oy+1*fy"],
        "loop_dims": list(dims),
        "loop_sizes": list(dims.values()),
        "operand_precision": prec,
        "operand_source": {"W": node_id, "I": node_id},
        # input extent (clips ZigZag's ix = sx*ox + fx range, i.e. models padding)
        "pr_loop_dims": ["IX", "IY"],
        "pr_loop_sizes": [ix, iy],
    }


def clip_mapping(sm: dict, dims: dict) -> dict:
    """Clip each unrolling to what the layer has; drop factors of 1. Keeps every OA dim
    present (an empty one gets a dummy B,1 so ZigZag does not auto-fill it)."""
    out = {}
    for oa, unr in sm.items():
        rem = dict(dims)
        # account for the same layer dim already unrolled on earlier OA dims
        for prev in out.values():
            for d, f in prev.items():
                rem[d] = max(1, rem.get(d, 1) // f)
        cl = {}
        for d, f in unr.items():
            f2 = min(int(f), int(rem.get(d, 1)))
            if f2 > 1:
                cl[d] = f2
                rem[d] = max(1, rem[d] // f2)
        out[oa] = cl
    return out


def mapping_yaml(entries: list[tuple[str, dict]]) -> str:
    data = [
        {
            "name": "default",
            "spatial_mapping": None,
            "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
        }
    ]
    for node_name, sm in entries:
        spatial = {
            oa: ([f"{d}, {f}" for d, f in unr.items()] or ["B, 1"]) for oa, unr in sm.items()
        }
        data.append(
            {
                "name": node_name,
                "spatial_mapping": spatial,
                "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
            }
        )
    return yaml.safe_dump(data, sort_keys=False)


# --------------------------------------------------------------------------- outputs


def memory_stats(cme, a: dict) -> dict:
    """Per layer operand and memory level: level name, energy (pJ), ZigZag access counts
    and bytes moved in each direction (from ZigZag's data-movement element counts x
    precision). Directions: rd_to_low = read out towards the MACs, wr_from_high = filled
    from the level above, rd_to_high = read out towards the level above (outputs),
    wr_from_low = written from below (outputs/psums)."""
    dirs = {
        DataDirection.RD_OUT_TO_LOW: "rd_to_low",
        DataDirection.WR_IN_BY_HIGH: "wr_from_high",
        DataDirection.RD_OUT_TO_HIGH: "rd_to_high",
        DataDirection.WR_IN_BY_LOW: "wr_from_low",
    }
    out = {}
    links = cme.layer.memory_operand_links
    for layer_op in cme.layer.layer_operands:
        mem_op = links.layer_to_mem_op(layer_op)
        levels = cme.accelerator.memory_hierarchy.get_memory_levels(mem_op)
        per_level = []
        for lv, (e, acc) in enumerate(
            zip(cme.mem_energy_breakdown[layer_op], cme.memory_word_access[layer_op], strict=False)
        ):
            umdm = cme.mapping.unit_mem_data_movement[layer_op][lv]
            cnt = umdm.get_attribute(DataMoveAttr.DATA_ELEM_MOVE_COUNT)
            prec = umdm.get_attribute(DataMoveAttr.DATA_PRECISION)
            width = {n: (levels[lv].get_max_bandwidth(mem_op, d) or 0) for d, n in dirs.items()}
            per_level.append(
                {
                    "level": levels[lv].name,
                    "energy_pj": float(e),
                    # ZigZag's access counts (units of one bandwidth_max-wide access);
                    # energy = these x r/w_cost
                    "accesses": {n: float(acc.get(d)) for d, n in dirs.items()},
                    # bytes ZigZag charges energy for = accesses x port width
                    "charged_bytes": {n: float(acc.get(d)) * width[n] / 8 for d, n in dirs.items()},
                    # unique data moved = ZigZag's element move counts x precision
                    "bytes": {
                        n: float(cnt.get(d)) * float(prec.get(d)) / 8 for d, n in dirs.items()
                    },
                }
            )
        out[str(layer_op)] = per_level
    return out


def temporal_loops(cme) -> dict:
    """Temporal loops per operand per memory level, innermost first: [[dim, size], ...]."""
    tm = cme.temporal_mapping.mapping_dic_stationary
    return {
        str(op): [
            [[str(d), float(s) if s != int(s) else int(s)] for d, s in level] for level in levels
        ]
        for op, levels in tm.items()
    }


def loop_order(cme) -> list:
    """Flat temporal loop nest, outermost first: [dim, size, {operand: memory level that
    holds that operand at this loop}] (what ZigZag's loop_ordering.txt prints)."""
    try:
        from zigzag.mapping.utils import get_temporal_loops

        ops = [str(op) for op in cme.layer.memory_operand_links.layer_operands]
        tl = get_temporal_loops(cme)
        tl.reverse()
        return [
            [
                str(d),
                (float(r[1]) if r[1] != int(r[1]) else int(r[1])),
                dict(zip(ops, m, strict=False)),
            ]
            for d, r, m in tl
        ]
    except Exception as exc:  # pragma: no cover - reporting helper only
        return [f"unavailable: {exc!r}"]


def spatial_int(cme) -> dict:
    sm = cme.layer.spatial_mapping
    res = {}
    for oa in sm:
        res[str(oa)] = {str(d): (float(f) if f != int(f) else int(f)) for d, f in sm[oa].items()}
    return res


def effective_name(cme) -> str:
    """Total unrolling per layer dim, e.g. 'K16_C8_OX8' (dims unrolled 1x omitted)."""
    tot: dict[str, float] = {}
    for unr in spatial_int(cme).values():
        for d, f in unr.items():
            tot[d] = tot.get(d, 1) * f
    return "_".join(f"{d}{f:g}" for d, f in tot.items() if f != 1) or "none"


def cme_summary(cme, a: dict) -> dict:
    mem = memory_stats(cme, a)
    onchip = dram = 0.0
    dram_bytes, dram_charged = {}, {}
    for op, levels in mem.items():
        for lv in levels:
            if lv["level"] == "dram":
                dram += lv["energy_pj"]
                # DRAM is the top level: its reads go down to the SRAM, its writes come up from it
                b, c = lv["bytes"], lv["charged_bytes"]
                dram_bytes[op] = {"read": b["rd_to_low"], "write": b["wr_from_low"]}
                dram_charged[op] = {"read": c["rd_to_low"], "write": c["wr_from_low"]}
            else:
                onchip += lv["energy_pj"]
    per_level_energy = {}
    for levels in mem.values():
        for lv in levels:
            per_level_energy[lv["level"]] = per_level_energy.get(lv["level"], 0.0) + lv["energy_pj"]
    return {
        "latency_cycles": float(cme.latency_total2),
        "latency_s": float(cme.latency_total2) / (a["frequency_ghz"] * 1e9),
        "ideal_cycles": float(cme.ideal_cycle),
        "ideal_temporal_cycles": float(cme.ideal_temporal_cycle),
        "stall_slack_cycles": float(cme.latency_total0 - cme.ideal_temporal_cycle),
        "onloading_cycles": float(cme.data_onloading_cycle),
        "offloading_cycles": float(cme.data_offloading_cycle),
        "mac_spatial_utilization": float(cme.mac_spatial_utilization),
        "mac_utilization": float(cme.mac_utilization2),
        "energy_total_pj": float(cme.energy_total),
        "mac_energy_pj": float(cme.mac_energy),
        "onchip_mem_energy_pj": onchip,
        "sram_energy_pj": per_level_energy.get("sram", 0.0),
        "rf_energy_pj": sum(v for k, v in per_level_energy.items() if k.startswith("rf_")),
        "dram_energy_pj": dram,
        "mem_energy_pj_per_level": per_level_energy,
        "dram_bytes": dram_bytes,
        "dram_bytes_charged": dram_charged,
        "memory": mem,
    }


# --------------------------------------------------------------------------- driver


def run_layer(
    layer: dict,
    a: dict,
    acc_path: str,
    opt: str,
    lpf: int,
    mappings: dict,
    workdir: str,
    jobs: int = 1,
) -> dict:
    dims = layer_dims(layer)
    # A conv with OX/OY, FX/FY, SX/SY and IX/IY pairwise equal is symmetric: swapping OX and
    # OY in a spatial mapping gives the same cost, so such a pair is evaluated once.
    symmetric = layer["type"] != "fc" and all(
        layer.get(p, 1) == layer.get(q, 1) for p, q in (("OX", "OY"), ("FX", "FY"), ("SX", "SY"))
    )
    symmetric = symmetric and layer.get("IX", dims["OX"] * layer.get("SX", 1)) == layer.get(
        "IY", dims["OY"] * layer.get("SY", 1)
    )

    def mkey(c: dict, swap: bool = False) -> str:
        sw = {"OX": "OY", "OY": "OX"} if swap else {}
        return json.dumps(
            {oa: sorted((sw.get(d, d), f) for d, f in u.items()) for oa, u in c.items()},
            sort_keys=True,
        )

    # unique candidates after clipping to this layer (and OX<->OY symmetry)
    cands: list[tuple[str, dict]] = []
    aliases: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    for name, sm in mappings.items():
        c = clip_mapping(sm, dims)
        k = mkey(c)
        if k not in seen and symmetric and mkey(c, swap=True) in seen:
            k = mkey(c, swap=True)
        if k in seen:
            aliases[seen[k]].append(name)
            continue
        seen[k] = name
        aliases[name] = [name]
        cands.append((name, c))
    safe = "".join(ch if ch.isalnum() else "_" for ch in layer["name"])
    tasks = [
        (layer, name, c, a, acc_path, opt, lpf, os.path.join(workdir, f"{safe}__{name}"))
        for name, c in cands
    ]
    t0 = time.perf_counter()
    if jobs > 1 and len(tasks) > 1:
        ctx = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs, len(tasks)), mp_context=ctx
        ) as pool:
            results = list(pool.map(eval_candidate, tasks))
    else:
        results = [eval_candidate(t) for t in tasks]
    wall = time.perf_counter() - t0

    def key(r):
        return (
            (r["latency_cycles"], r["energy_total_pj"])
            if opt == "latency"
            else (r["energy_total_pj"], r["latency_cycles"])
        )

    best = min(results, key=key)
    rec = {
        "name": layer["name"],
        "macs": best["macs"],
        "spatial_mapping": best["candidate"],
        # the candidate names that reduce to the same unrolling on this layer
        "spatial_mapping_aliases": aliases[best["candidate"]],
        **{k: v for k, v in best.items() if k not in ("candidate", "macs", "wall_s")},
        "candidates": [
            {
                "spatial_mapping": r["candidate"],
                "aliases": aliases[r["candidate"]],
                "effective": r["spatial_mapping_effective"],
                "unrolling": r["spatial_mapping_unrolling"],
                "latency_cycles": r["latency_cycles"],
                "energy_total_pj": r["energy_total_pj"],
                "dram_energy_pj": r["dram_energy_pj"],
                "mac_energy_pj": r["mac_energy_pj"],
                "onchip_mem_energy_pj": r["onchip_mem_energy_pj"],
                "rf_energy_pj": r["rf_energy_pj"],
                "dram_bytes": r["dram_bytes"],
                "mac_spatial_utilization": r["mac_spatial_utilization"],
                "wall_s": r["wall_s"],
            }
            for r in results
        ],
        "zigzag_wall_s": wall,
    }
    return rec


def eval_candidate(task: tuple) -> dict:
    """One ZigZag API call: one layer with one fully specified spatial mapping; LOMA
    searches the temporal mapping and ZigZag returns the best one by `opt`."""
    layer, name, c, a, acc_path, opt, lpf, dump = task
    os.makedirs(dump, exist_ok=True)
    node_name = f"{layer['name']}__{name}"
    map_path = os.path.join(dump, "mapping.yaml")
    with open(map_path, "w") as f:
        f.write(mapping_yaml([(node_name, c)]))
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # keep ZigZag prints off our stdout
        _, _, cmes = get_hardware_performance_zigzag(
            workload=[workload_node(layer, 0, node_name, a["psum_bits"])],
            accelerator=acc_path,
            mapping=map_path,
            opt=opt,
            dump_folder=dump,
            pickle_filename=os.path.join(dump, "cmes.pickle"),
            lpf_limit=lpf,
            loma_show_progress_bar=False,
        )
    wall = time.perf_counter() - t0
    cme = cmes[0][1][0][0]  # SumStage -> [(CostModelEvaluation of the node, extra)]
    s = cme_summary(cme, a)
    mem = s.pop("memory")
    return {
        "candidate": name,
        "macs": int(cme.layer.total_mac_count),
        "spatial_mapping_effective": effective_name(cme),
        "spatial_mapping_unrolling": spatial_int(cme),
        **s,
        "temporal_loops_per_operand": temporal_loops(cme),
        "temporal_loop_order_outer_to_inner": loop_order(cme),
        "memory": mem,
        "wall_s": wall,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        print("usage: python zigzag_runner.py IN.json OUT.json", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        spec = json.load(f)
    unknown = set(spec.get("accelerator") or {}) - set(DEFAULT_ACCELERATOR)
    if unknown:
        raise SystemExit(
            f"unknown accelerator keys {sorted(unknown)}; known: {sorted(DEFAULT_ACCELERATOR)}"
        )
    a = {**DEFAULT_ACCELERATOR, **(spec.get("accelerator") or {})}
    for layer in spec["layers"]:
        if layer.get("type") not in ("conv", "fc"):
            raise SystemExit(f"layer {layer.get('name')!r}: type must be 'conv' or 'fc'")
    opt = spec.get("optimize", "latency")
    if opt not in ("latency", "energy"):
        raise SystemExit(f"optimize must be 'latency' or 'energy', not {opt!r}")
    lpf = int(spec.get("lpf_limit", 5))
    jobs = int(spec.get("jobs", 1))
    mappings = spec.get("spatial_mappings") or SPATIAL_MAPPINGS
    acc_text = _fix_allocations(accelerator_yaml(a))

    workdir = tempfile.mkdtemp(prefix="zz_runner_")
    try:
        acc_path = os.path.join(workdir, "accelerator.yaml")
        with open(acc_path, "w") as f:
            f.write(acc_text)
        out = {
            "zigzag_version": metadata.version("zigzag-dse"),
            "accelerator": a,
            "accelerator_yaml": acc_text,
            "optimize": opt,
            "lpf_limit": lpf,
            "jobs": jobs,
            "spatial_mapping_candidates": mappings,
            "layers": [],
        }
        t_all = time.perf_counter()
        failed = 0
        for layer in spec["layers"]:
            t0 = time.perf_counter()
            try:
                rec = run_layer(layer, a, acc_path, opt, lpf, mappings, workdir, jobs)
            except Exception as exc:  # record and go on with the next layer
                failed += 1
                rec = {
                    "name": layer.get("name"),
                    "error": f"{type(exc).__name__}: {exc}",
                    "zigzag_wall_s": time.perf_counter() - t0,
                }
                print(f"{rec['name']}: FAILED {rec['error']}", file=sys.stderr)
            else:
                print(
                    f"{rec['name']}: {rec['latency_cycles']:.0f} cycles, "
                    f"{rec['energy_total_pj']:.4g} pJ, {rec['spatial_mapping_effective']} "
                    f"({rec['spatial_mapping']}), {rec['zigzag_wall_s']:.2f} s",
                    file=sys.stderr,
                )
            out["layers"].append(rec)
        out["total_wall_s"] = time.perf_counter() - t_all
        with open(argv[2], "w") as f:
            json.dump(out, f, indent=1)
        return 1 if failed else 0
    finally:
        if spec.get("keep_dumps"):
            print(f"ZigZag dumps kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
