"""Chip presets from the source documents, and loading chips by name or file.

=================  ==========================================================================
name               what
=================  ==========================================================================
``edge-4x4``       SET edge platform (seed 002): 4×4 hw-tiles, 1024 int8 MACs each as 16 PEs
                   × 8 lanes × 8-wide vectors, 1 MB buffer, 1 GHz, DRAM 0.5 GB/s per TOPS on
                   the left and right mesh edges, 0.7 pJ/bit/hop, 0.018 pJ/MAC, 7.5 pJ/bit
``cloud-12x12``    SET cloud platform: the same tile on a 12×12 mesh
``tiled-RxC``      the SET tile on any R×C mesh
``NAME-ideal``     a tiled or chiplet chip with the ideal on-chip model (before issue 14),
                   e.g. ``edge-4x4-ideal``
``chiplet-RxC``    seed 000: R×C sub-chiplets, N NPUs of w×w systolic arrays each (default
                   N=4, w=32; ``chiplet-4x4-n8-w16`` sets both), die-to-die links slower and
                   costlier than on-die ones
``soc-npu-gpu-cpu``  seeds 001/003: NPU → GPU → CPU chain with shared-memory interconnect
``soc-npu-gpu``    the first two of them
``neuro-RxC``      seed 004: R×C neuromorphic cores, 256 neurons per core by default
                   (``neuro-16x16-k1024`` sets the capacity)
=================  ==========================================================================

Numbers the documents give are used as given; the others (NoC link bandwidth, buffer
access energy, SoC throughputs, die-to-die figures) are our stated assumptions — see
``docs/cost-model.md``, section "Presets".
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from chipsched.errors import InputError, UnknownNameError
from chipsched.files import read_data
from chipsched.hardware import Hardware

#: SET hw-tile (seed 002): NVDLA-style 16 PEs × 8 lanes × 8-wide vector = 1024 int8 MACs.
SET_TILE: dict[str, Any] = {
    "array": {"kind": "vector", "vector": 8, "lanes": 8, "pes": 16},
    "buffer_bytes": 1 << 20,
    "frequency_ghz": 1.0,
    "vector_ops_per_cycle": 64,  # assumption: SDP/PDP-style post-processing, 64 ops/cycle
    # 0.018 pJ/MAC from SET; buffer and vector-op energies are our assumptions
    # (SET takes them from a memory compiler and does not publish them).
    "energy": {"mac_pj": 0.018, "vector_op_pj": 0.03, "buffer_pj_per_byte": 1.0},
}

SET_NOC: dict[str, Any] = {
    "link_bandwidth_gb_s": 32.0,  # assumption: 256-bit links at 1 GHz
    "hop_latency_cycles": 2.0,  # assumption: 1 router + 1 link cycle
    "hop_energy_pj_per_bit": 0.7,  # SET
}

SET_DRAM: dict[str, Any] = {
    "bandwidth_gb_s_per_tops": 0.5,  # SET
    "energy_pj_per_bit": 7.5,  # SET
    "ports": "left-right",  # SET/Tangram: controllers on the left and right edges
}


def tiled(rows: int, cols: int, name: str | None = None) -> dict[str, Any]:
    return {
        "name": name or f"tiled-{rows}x{cols}",
        "description": f"SET-style tiled accelerator, {rows}×{cols} hw-tiles of 1024 int8 MACs",
        "mesh": {"rows": rows, "cols": cols},
        "unit": SET_TILE,
        "noc": SET_NOC,
        "dram": SET_DRAM,
    }


def chiplet_grid(rows: int, cols: int, npus: int = 4, w: int = 32) -> dict[str, Any]:
    """Seed 000's chiplet topology: R×C sub-chiplets of N NPUs with w×w systolic arrays."""
    suffix = "" if (npus, w) == (4, 32) else f"-n{npus}-w{w}"
    return {
        "name": f"chiplet-{rows}x{cols}{suffix}",
        "description": f"{rows}×{cols} sub-chiplets, {npus} NPUs of {w}×{w} systolic arrays each",
        "mesh": {"rows": rows, "cols": cols},
        "unit": {
            "array": {"kind": "systolic", "size": w},
            "buffer_bytes": 1 << 20,
            "frequency_ghz": 1.0,
            "vector_ops_per_cycle": max(1, w),
            "energy": {"mac_pj": 0.018, "vector_op_pj": 0.03, "buffer_pj_per_byte": 1.0},
        },
        # die-to-die links: assumptions in the range of Simba's ground-referenced
        # signalling (~100 GB/s per chiplet, 0.8–1.8 pJ/bit, ~20 ns per hop)
        "noc": {"link_bandwidth_gb_s": 25.0, "hop_latency_cycles": 20.0,
                "hop_energy_pj_per_bit": 1.3},
        "chiplet": {"npus": npus, "intra_bandwidth_gb_s": 128.0, "intra_energy_pj_per_bit": 0.1},
        "dram": {"bandwidth_gb_s_per_tops": 0.5, "energy_pj_per_bit": 7.5, "ports": "left-right"},
    }


_PROCESSORS = {
    # Illustrative mobile-SoC figures (our assumption; seeds 001/003 give none).
    "npu": {"name": "npu", "kind": "npu", "cores": 1,
            "throughput_gops": {"tensor": 2000.0, "vector": 64.0, "scalar": 0.5},
            "launch_overhead_us": 20.0, "control_flow": False,
            "energy_pj_per_op": {"tensor": 0.5, "vector": 1.0, "scalar": 20.0}},
    "gpu": {"name": "gpu", "kind": "gpu", "cores": 1,
            "throughput_gops": {"tensor": 500.0, "vector": 250.0, "scalar": 2.0},
            "launch_overhead_us": 10.0, "control_flow": False,
            "energy_pj_per_op": {"tensor": 2.0, "vector": 3.0, "scalar": 20.0}},
    "cpu": {"name": "cpu", "kind": "cpu", "cores": 4,
            "throughput_gops": {"tensor": 50.0, "vector": 16.0, "scalar": 4.0},
            "launch_overhead_us": 1.0, "control_flow": True,
            "energy_pj_per_op": {"tensor": 10.0, "vector": 10.0, "scalar": 5.0}},
}


def soc(names: tuple[str, ...] = ("npu", "gpu", "cpu")) -> dict[str, Any]:
    return {
        "name": "soc-" + "-".join(names),
        "description": "heterogeneous SoC, processors in chain order " + " → ".join(names),
        "mesh": {"rows": 1, "cols": len(names)},
        "processors": [_PROCESSORS[n] for n in names],
        # shared DRAM between processors: 25 GB/s, 5 µs synchronisation per transfer
        "interconnect": {"bandwidth_gb_s": 25.0, "latency_us": 5.0},
    }


def neuromorphic(rows: int, cols: int, capacity: int = 256) -> dict[str, Any]:
    """Seed 004: a mesh of identical neuromorphic cores (256 neurons/core as in Tianjic)."""
    suffix = "" if capacity == 256 else f"-k{capacity}"
    return {
        "name": f"neuro-{rows}x{cols}{suffix}",
        "description": f"{rows}×{cols} neuromorphic cores, {capacity} neurons per core",
        "mesh": {"rows": rows, "cols": cols},
        "noc": {"link_bandwidth_gb_s": 8.0, "hop_latency_cycles": 1.0,
                "hop_energy_pj_per_bit": 0.7},
        "core_capacity": capacity,
    }


#: Canonical presets listed by ``chipsched list``; parametric names are parsed below.
PRESETS: dict[str, Any] = {
    "edge-4x4": lambda: tiled(4, 4, "edge-4x4"),
    "cloud-12x12": lambda: tiled(12, 12, "cloud-12x12"),
    "chiplet-2x2": lambda: chiplet_grid(2, 2),
    "chiplet-4x4": lambda: chiplet_grid(4, 4),
    "chiplet-6x6": lambda: chiplet_grid(6, 6),
    "soc-npu-gpu-cpu": lambda: soc(("npu", "gpu", "cpu")),
    "soc-npu-gpu": lambda: soc(("npu", "gpu")),
    "neuro-8x8": lambda: neuromorphic(8, 8),
    "neuro-16x16": lambda: neuromorphic(16, 16),
}

_PATTERNS = [
    (re.compile(r"tiled-(\d+)x(\d+)$"), lambda m: tiled(int(m[1]), int(m[2]))),
    (re.compile(r"chiplet-(\d+)x(\d+)(?:-n(\d+))?(?:-w(\d+))?$"),
     lambda m: chiplet_grid(int(m[1]), int(m[2]), int(m[3] or 4), int(m[4] or 32))),
    (re.compile(r"neuro-(\d+)x(\d+)(?:-k(\d+))?$"),
     lambda m: neuromorphic(int(m[1]), int(m[2]), int(m[3] or 256))),
]


def chip_names() -> list[str]:
    return list(PRESETS)


def chip_dict(name: str) -> dict[str, Any]:
    """The file form of a preset (or parametric) chip name.

    A ``-ideal`` suffix (``edge-4x4-ideal``, ``chiplet-4x4-ideal``) gives the same chip
    with the ideal on-chip model (docs/cost-model.md §3: one buffer read per operand per
    pass, free partial sums, no port stalls, the input re-read per weight chunk; the model
    before issue 14).
    """
    if name.endswith("-ideal"):
        base = chip_dict(name[: -len("-ideal")])
        unit = base.get("unit")
        if not unit:
            raise InputError(f"chip {name}", "'-ideal' applies to chips of compute units "
                             "(tiled and chiplet presets)", "drop the suffix")
        return {**base, "name": name, "unit": {**unit, "onchip_model": "ideal"},
                "description": base.get("description", "") + " (ideal on-chip model)"}
    if name in PRESETS:
        return PRESETS[name]()
    for pat, make in _PATTERNS:
        m = pat.match(name)
        if m:
            return make(m)
    raise UnknownNameError("chip", name, [*PRESETS, "tiled-RxC", "chiplet-RxC[-nN][-wW]",
                                          "neuro-RxC[-kCAP]", "<tiled or chiplet chip>-ideal"])


def get_chip(spec: str | os.PathLike[str] | Hardware) -> Hardware:
    """A chip from a preset name, a parametric name or a YAML/JSON file."""
    if isinstance(spec, Hardware):
        return spec
    s = str(spec)
    if Path(s).suffix.lower() in (".yaml", ".yml", ".json") or os.sep in s:
        return Hardware.from_dict(read_data(s), source=s)
    data = chip_dict(s)
    try:
        return Hardware.from_dict(data, source=f"chip {s}")
    except InputError as exc:  # pragma: no cover - presets are validated by tests
        raise InputError(f"chip {s}", f"invalid preset: {exc}") from None
