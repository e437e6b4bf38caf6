"""Hardware model: one schema for every decision (docs/architecture.md; ``chipsched schema chip``).

A chip is a ``rows × cols`` mesh of nodes joined by a NoC with XY routing. What a
node is depends on the optional sections:

* ``unit`` alone — a tiled accelerator: every node is one compute unit (hw-tile);
* ``unit`` + ``chiplet`` — a chiplet grid (seed 000): every node is a sub-chiplet
  holding ``chiplet.npus`` units; ``noc`` then describes the die-to-die links;
* ``core_capacity`` — a neuromorphic core array (seed 004): every node is a core
  holding at most that many neurons;
* ``processors`` (+ ``interconnect``) — a heterogeneous SoC (seeds 001/003), a chain
  of CPU/GPU/NPU processors; the mesh is then the trivial ``1 × len(processors)``.

Fields keep the units of the file format (GHz, GB/s, pJ, µs, cycles); the ``*_s``,
``*_hz`` and ``*_bytes_per_s`` properties give SI values for the cost model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.schemas import CHIP_SCHEMA, check_finite, validate

GB = 1e9


@dataclass(frozen=True)
class ArraySpec:
    """MAC array of a unit: ``vector`` (pes × lanes × vector) or ``systolic`` (size × size)."""

    kind: str
    vector: int = 0
    lanes: int = 0
    pes: int = 0
    size: int = 0

    @property
    def macs(self) -> int:
        """MACs per cycle at full utilization."""
        if self.kind == "systolic":
            return self.size * self.size
        return self.vector * self.lanes * self.pes

    def to_dict(self) -> dict[str, Any]:
        if self.kind == "systolic":
            return {"kind": "systolic", "size": self.size}
        return {"kind": "vector", "vector": self.vector, "lanes": self.lanes, "pes": self.pes}


@dataclass(frozen=True)
class UnitEnergy:
    mac_pj: float
    vector_op_pj: float
    buffer_pj_per_byte: float


@dataclass(frozen=True)
class Registers:
    """The register level of a vector array's MACs (used by the ``reuse`` on-chip model).

    Each MAC has a private weight and input register of ``weight_bytes`` / ``input_bytes``
    (8 int8 values by default); each lane has one ``psum_bits`` accumulator after the
    vector's adder tree. ``pj_per_byte`` is the energy of a register read or write.
    ``psum_buffers``: 1 = the accumulator is single-buffered, so a partial sum going back
    to the buffer stalls its lane; 2 = double-buffered, the write-back overlaps.
    """

    weight_bytes: int = 8
    input_bytes: int = 8
    psum_bits: int = 32
    pj_per_byte: float = 0.01
    psum_buffers: int = 1


#: How a unit's on-chip traffic is costed (docs/cost-model.md §3): ``reuse`` (since issue
#: 14: registers, the best of weight-, input- and output-stationary, buffer-port stalls,
#: the cheaper spill) or ``ideal`` (before it: one buffer read per operand per pass, free
#: partial sums, ports that never stall).
ONCHIP_MODELS = ("reuse", "ideal")


@dataclass(frozen=True)
class ComputeUnit:
    array: ArraySpec
    buffer_bytes: int
    frequency_ghz: float
    vector_ops_per_cycle: int
    energy: UnitEnergy
    onchip_model: str = "reuse"
    registers: Registers = field(default_factory=Registers)
    buffer_port_bytes_per_cycle: float = 128.0

    def __post_init__(self) -> None:
        if self.onchip_model not in ONCHIP_MODELS:
            raise InputError("unit.onchip_model", f"unknown model {self.onchip_model!r}",
                             f"use one of {', '.join(ONCHIP_MODELS)}")

    @property
    def frequency_hz(self) -> float:
        return self.frequency_ghz * 1e9

    @property
    def peak_macs_per_s(self) -> float:
        return self.array.macs * self.frequency_hz

    @property
    def peak_tops(self) -> float:
        """Peak tera-ops/s counting a MAC as two ops (the SET convention)."""
        return 2 * self.peak_macs_per_s / 1e12


@dataclass(frozen=True)
class NoC:
    link_bandwidth_gb_s: float
    hop_latency_cycles: float
    hop_energy_pj_per_bit: float

    @property
    def link_bytes_per_s(self) -> float:
        return self.link_bandwidth_gb_s * GB


@dataclass(frozen=True)
class DRAM:
    bandwidth_gb_s: float
    energy_pj_per_bit: float
    ports: tuple[tuple[int, int], ...]
    port_spec: Any = "left-right"  # as written in the file
    bandwidth_gb_s_per_tops: float | None = None

    @property
    def bytes_per_s(self) -> float:
        return self.bandwidth_gb_s * GB


@dataclass(frozen=True)
class Chiplet:
    npus: int
    intra_bandwidth_gb_s: float
    intra_energy_pj_per_bit: float


@dataclass(frozen=True)
class Processor:
    """One processor of a heterogeneous SoC. Throughputs per core, G op/s (tensor: G MAC/s)."""

    name: str
    kind: str
    cores: int
    throughput_gops: Mapping[str, float]
    launch_overhead_us: float
    control_flow: bool
    energy_pj_per_op: Mapping[str, float]

    def __hash__(self) -> int:
        return hash((self.name, self.kind, self.cores))


@dataclass(frozen=True)
class Interconnect:
    """Bandwidth (GB/s) and latency (µs) between processors i and j (diagonal unused)."""

    bandwidth_gb_s: tuple[tuple[float, ...], ...]
    latency_us: tuple[tuple[float, ...], ...]


#: the largest mesh (rows × cols) a chip may have: 128×128, a wafer of neuromorphic cores
MAX_MESH_NODES = 16_384
#: the clock range a chip file may give (1 MHz to 1 THz): outside it a typo or a unit
#: mistake (Hz for GHz) would print latencies in gigaseconds
FREQUENCY_GHZ = (1e-3, 1e3)


@dataclass(frozen=True)
class Hardware:
    """A chip. Build with :func:`Hardware.from_dict` or a preset from ``chipsched.instances``."""

    name: str
    rows: int
    cols: int
    unit: ComputeUnit | None = None
    noc: NoC | None = None
    dram: DRAM | None = None
    chiplet: Chiplet | None = None
    processors: tuple[Processor, ...] = ()
    interconnect: Interconnect | None = None
    core_capacity: int | None = None
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # per-node tables (hops, DRAM distances, placements) grow with nodes², so a mesh
        # far beyond any chip is refused here rather than in a solver's out-of-memory
        if self.rows * self.cols > MAX_MESH_NODES:
            raise InputError(f"{self.name}.mesh", f"{self.rows}×{self.cols} = "
                             f"{self.rows * self.cols:,} nodes is more than the "
                             f"{MAX_MESH_NODES:,} chipsched handles",
                             "use a smaller mesh (e.g. 128×128)")

    # -- shape ------------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return self.rows * self.cols

    @property
    def n_units(self) -> int:
        """Compute units on the chip (tiles, or sub-chiplets × NPUs)."""
        per = self.chiplet.npus if self.chiplet else 1
        return self.n_nodes * per if self.unit else 0

    def coords(self, node: int) -> tuple[int, int]:
        """(row, col) of node id ``node`` (row-major)."""
        return divmod(int(node), self.cols)

    @cached_property
    def dram_hops(self) -> np.ndarray:
        """``rows × cols`` array: links from each node to its nearest DRAM port, +1 for the
        controller link (0 ports → all -1)."""
        if not self.dram:
            return -np.ones((self.rows, self.cols), dtype=np.int64)
        r, c = np.mgrid[0:self.rows, 0:self.cols]
        best = np.full((self.rows, self.cols), np.iinfo(np.int64).max, dtype=np.int64)
        for pr, pc in self.dram.ports:
            best = np.minimum(best, np.abs(r - pr) + np.abs(c - pc))
        return best + 1

    @property
    def peak_tops(self) -> float:
        return self.unit.peak_tops * self.n_units if self.unit else 0.0

    def processor_index(self, name: str) -> int:
        for i, p in enumerate(self.processors):
            if p.name == name:
                return i
        from chipsched.errors import UnknownNameError

        raise UnknownNameError(f"chip {self.name!r} processor", name,
                               [p.name for p in self.processors])

    def kind(self) -> str:
        """What the chip is: 'tiled', 'chiplet', 'neuromorphic' or 'soc'."""
        if self.processors:
            return "soc"
        if self.chiplet:
            return "chiplet"
        if self.core_capacity and not self.unit:
            return "neuromorphic"
        return "tiled"

    # -- files ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if self.description:
            d["description"] = self.description
        d["mesh"] = {"rows": self.rows, "cols": self.cols}
        if self.unit:
            u = asdict(self.unit)
            u["array"] = self.unit.array.to_dict()
            d["unit"] = u
        if self.noc:
            d["noc"] = asdict(self.noc)
        if self.dram:
            dr: dict[str, Any] = {"bandwidth_gb_s": self.dram.bandwidth_gb_s,
                                  "energy_pj_per_bit": self.dram.energy_pj_per_bit}
            if self.dram.bandwidth_gb_s_per_tops is not None:
                dr = {"bandwidth_gb_s_per_tops": self.dram.bandwidth_gb_s_per_tops,
                      "energy_pj_per_bit": self.dram.energy_pj_per_bit}
            ps = self.dram.port_spec
            dr["ports"] = ps if isinstance(ps, str) else [list(p) for p in self.dram.ports]
            d["dram"] = dr
        if self.chiplet:
            d["chiplet"] = asdict(self.chiplet)
        if self.processors:
            d["processors"] = [
                {"name": p.name, "kind": p.kind, "cores": p.cores,
                 "throughput_gops": dict(p.throughput_gops),
                 "launch_overhead_us": p.launch_overhead_us, "control_flow": p.control_flow,
                 "energy_pj_per_op": dict(p.energy_pj_per_op)} for p in self.processors]
        if self.interconnect:
            d["interconnect"] = {"bandwidth_gb_s": [list(r) for r in
                                                    self.interconnect.bandwidth_gb_s],
                                 "latency_us": [list(r) for r in self.interconnect.latency_us]}
        if self.core_capacity:
            d["core_capacity"] = self.core_capacity
        return d

    @classmethod
    def from_dict(cls, data: Any, source: str = "chip") -> Hardware:
        """Validate against the published chip schema and build; errors name the field."""
        validate(data, CHIP_SCHEMA, source)
        check_finite(data, source)
        rows, cols = data["mesh"]["rows"], data["mesh"]["cols"]
        if rows * cols > MAX_MESH_NODES:
            raise InputError(f"{source}.mesh", f"{rows}×{cols} = {rows * cols:,} nodes is more "
                             f"than the {MAX_MESH_NODES:,} chipsched handles",
                             "use a smaller mesh (e.g. 128×128)")
        unit = None
        if "unit" in data:
            u = data["unit"]
            f = float(u["frequency_ghz"])
            if not FREQUENCY_GHZ[0] <= f <= FREQUENCY_GHZ[1]:
                raise InputError(f"{source}.unit.frequency_ghz", f"{f:g} GHz is outside "
                                 f"{FREQUENCY_GHZ[0]:g}–{FREQUENCY_GHZ[1]:g} GHz",
                                 "give the clock in GHz, e.g. 1.0")
            unit = ComputeUnit(
                array=ArraySpec(**u["array"]), buffer_bytes=u["buffer_bytes"],
                frequency_ghz=float(u["frequency_ghz"]),
                vector_ops_per_cycle=u["vector_ops_per_cycle"],
                energy=UnitEnergy(**{k: float(v) for k, v in u["energy"].items()}),
                onchip_model=u.get("onchip_model", "reuse"),
                registers=Registers(**u.get("registers", {})),
                buffer_port_bytes_per_cycle=float(u.get("buffer_port_bytes_per_cycle", 128)))
        chiplet = Chiplet(**data["chiplet"]) if "chiplet" in data else None
        if chiplet and not unit:
            raise InputError(f"{source}.chiplet", "needs a 'unit' section (the NPU of each "
                             "sub-chiplet)")
        noc = NoC(**{k: float(v) for k, v in data["noc"].items()}) if "noc" in data else None
        dram = None
        if "dram" in data:
            dram = _dram(data["dram"], rows, cols, unit, chiplet, source)
        procs: tuple[Processor, ...] = ()
        ic = None
        if "processors" in data:
            procs = tuple(Processor(**p) for p in data["processors"])
            names = [p.name for p in procs]
            if len(set(names)) != len(names):
                raise InputError(f"{source}.processors", "processor names must be unique")
            for i, p in enumerate(procs):
                if not any(p.throughput_gops[c] > 0 for c in ("tensor", "vector", "scalar")):
                    raise InputError(f"{source}.processors[{i}].throughput_gops",
                                     "all zero: the processor can run nothing")
            ic = _interconnect(data.get("interconnect"), len(procs), source)
            if rows * cols != len(procs):
                raise InputError(f"{source}.mesh", f"a SoC of {len(procs)} processors needs a "
                                 f"1×{len(procs)} mesh", f"set rows: 1, cols: {len(procs)}")
        elif "interconnect" in data:
            raise InputError(f"{source}.interconnect", "given without 'processors'")
        if not (unit or procs or data.get("core_capacity")):
            raise InputError(source, "describes no compute",
                             "give 'unit', 'processors' or 'core_capacity'")
        return cls(name=data["name"], rows=rows, cols=cols, unit=unit, noc=noc, dram=dram,
                   chiplet=chiplet, processors=procs, interconnect=ic,
                   core_capacity=data.get("core_capacity"),
                   description=data.get("description", ""))


def _dram(d: Mapping[str, Any], rows: int, cols: int, unit: ComputeUnit | None,
          chiplet: Chiplet | None, source: str) -> DRAM:
    spec = d["ports"]
    if spec == "left-right":
        ports = [(r, 0) for r in range(rows)] + [(r, cols - 1) for r in range(rows)]
    elif spec == "left":
        ports = [(r, 0) for r in range(rows)]
    elif spec == "right":
        ports = [(r, cols - 1) for r in range(rows)]
    elif spec == "corners":
        ports = [(0, 0), (0, cols - 1), (rows - 1, 0), (rows - 1, cols - 1)]
    else:
        ports = [tuple(p) for p in spec]
        for p in ports:
            if not (0 <= p[0] < rows and 0 <= p[1] < cols):
                raise InputError(f"{source}.dram.ports", f"port {list(p)} is outside the "
                                 f"{rows}×{cols} mesh")
    ports = tuple(dict.fromkeys(ports))  # a 1-column mesh has left == right
    per_tops = d.get("bandwidth_gb_s_per_tops")
    if "bandwidth_gb_s" in d and per_tops is not None:
        raise InputError(f"{source}.dram", "give bandwidth_gb_s or bandwidth_gb_s_per_tops, "
                         "not both")
    if per_tops is not None:
        if unit is None:
            raise InputError(f"{source}.dram.bandwidth_gb_s_per_tops", "needs a 'unit' section")
        n_units = rows * cols * (chiplet.npus if chiplet else 1)
        bw = per_tops * unit.peak_tops * n_units
    elif "bandwidth_gb_s" in d:
        bw = float(d["bandwidth_gb_s"])
    else:
        raise InputError(f"{source}.dram.bandwidth_gb_s", "is required",
                         "or give bandwidth_gb_s_per_tops")
    return DRAM(bandwidth_gb_s=bw, energy_pj_per_bit=float(d["energy_pj_per_bit"]), ports=ports,
                port_spec=spec if isinstance(spec, str) else None,
                bandwidth_gb_s_per_tops=per_tops)


def _interconnect(d: Mapping[str, Any] | None, n: int, source: str) -> Interconnect:
    if d is None:
        raise InputError(f"{source}.interconnect", "is required with 'processors'",
                         "give bandwidth_gb_s and latency_us")

    def matrix(v: Any, key: str) -> tuple[tuple[float, ...], ...]:
        if isinstance(v, (int, float)):
            return tuple(tuple(0.0 if i == j else float(v) for j in range(n)) for i in range(n))
        if len(v) != n or any(len(r) != n for r in v):
            raise InputError(f"{source}.interconnect.{key}", f"must be a number or a {n}×{n} "
                             "matrix (one row and column per processor)")
        return tuple(tuple(float(x) for x in r) for r in v)

    bw = matrix(d["bandwidth_gb_s"], "bandwidth_gb_s")
    for i in range(n):
        for j in range(n):
            if i != j and bw[i][j] <= 0:
                raise InputError(f"{source}.interconnect.bandwidth_gb_s",
                                 f"entry [{i}][{j}] must be positive")
    return Interconnect(bw, matrix(d["latency_us"], "latency_us"))
