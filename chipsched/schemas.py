"""The published JSON Schemas (chip, network) and validation with one-line errors.

The schemas here are the single source: ``chipsched schema chip|network`` prints
them, the loaders validate against them, and ``docs/schemas/*.json`` are copies a
test keeps in sync.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from chipsched.errors import InputError

_POS = {"type": "number", "exclusiveMinimum": 0}
_NONNEG = {"type": "number", "minimum": 0}
_POSINT = {"type": "integer", "minimum": 1}


def _bounded(limit: int) -> dict[str, Any]:
    """A positive integer up to ``limit`` (implausible sizes are bad input)."""
    return {"type": "integer", "minimum": 1, "maximum": limit}


def _obj(props: dict[str, Any], required: list[str], desc: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "required": required,
                           "additionalProperties": False}
    if desc:
        out["description"] = desc
    return out


def _d(schema: dict[str, Any], desc: str) -> dict[str, Any]:
    return {**schema, "description": desc}


ARRAY_SCHEMA = {
    "description": "Shape of a compute unit's MAC array.",
    "oneOf": [
        _obj({
            "kind": {"const": "vector"},
            "vector": _d(_bounded(1 << 16),
                         "MACs per lane reducing over input channels C (NVDLA atomic-C)"),
            "lanes": _d(_bounded(1 << 16),
                        "lanes per PE, one output channel each (NVDLA atomic-K)"),
            "pes": _d(_bounded(1 << 16), "PEs; each takes output channels or output pixels, "
                               "whichever maps better"),
        }, ["kind", "vector", "lanes", "pes"], "NVDLA/Simba-style: pes × lanes × vector MACs"),
        _obj({
            "kind": {"const": "systolic"},
            "size": _d(_bounded(1 << 16), "w of a w×w systolic array (seed 000)"),
        }, ["kind", "size"], "w×w systolic array"),
    ],
}

UNIT_SCHEMA = _obj({
    "array": ARRAY_SCHEMA,
    "buffer_bytes": _d(_POSINT, "global buffer per unit, bytes"),
    "frequency_ghz": _d(_POS, "clock, GHz"),
    "vector_ops_per_cycle": _d(_POSINT, "non-MAC (pool, eltwise, norm, softmax) ops per cycle"),
    "energy": _obj({
        "mac_pj": _d(_NONNEG, "energy per MAC, pJ"),
        "vector_op_pj": _d(_NONNEG, "energy per non-MAC op, pJ"),
        "buffer_pj_per_byte": _d(_NONNEG, "global-buffer access energy, pJ per byte"),
    }, ["mac_pj", "vector_op_pj", "buffer_pj_per_byte"]),
    "onchip_model": {"enum": ["reuse", "ideal"], "default": "reuse",
                     "description": "how on-chip traffic is costed on a vector array: "
                                    "'reuse' (registers, the best of weight-, input- and "
                                    "output-stationary, buffer-port stalls) or 'ideal' (one "
                                    "buffer read per operand per pass, free partial sums, no "
                                    "stalls: the model before issue 14)"},
    "registers": _obj({
        "weight_bytes": _d(_POSINT, "weight register per MAC, bytes (default 8)"),
        "input_bytes": _d(_POSINT, "input register per MAC, bytes (default 8)"),
        "psum_bits": _d(_POSINT, "partial-sum accumulator per lane, bits (default 32)"),
        "pj_per_byte": _d(_NONNEG, "register read or write, pJ per byte (default 0.01)"),
        "psum_buffers": {"enum": [1, 2], "description": "accumulator buffers per lane: 1 "
                         "(default) = a partial-sum write-back stalls the lane, 2 = it "
                         "overlaps"},
    }, [], "the MACs' register level (onchip_model 'reuse')"),
    "buffer_port_bytes_per_cycle": _d(_POS, "global-buffer read port and write port width, "
                                            "bytes per cycle each (default 128; onchip_model "
                                            "'reuse')"),
}, ["array", "buffer_bytes", "frequency_ghz", "vector_ops_per_cycle", "energy"],
    "one compute unit (hw-tile, NPU) at every mesh position")

PORTS_SCHEMA = {
    "description": "where DRAM controllers attach: 'left-right' (every row of the left and "
                   "right mesh edges), 'left', 'right', 'corners', or a list of [row, col] tiles",
    "oneOf": [
        {"enum": ["left-right", "left", "right", "corners"]},
        {"type": "array", "minItems": 1,
         "items": {"type": "array", "minItems": 2, "maxItems": 2,
                   "items": {"type": "integer", "minimum": 0}}},
    ],
}

PROCESSOR_SCHEMA = _obj({
    "name": {"type": "string", "minLength": 1},
    "kind": {"enum": ["cpu", "gpu", "npu", "dsp"]},
    "cores": _d(_POSINT, "cores (independent execution streams)"),
    "throughput_gops": _obj({
        "tensor": _d(_NONNEG, "MAC ops (conv, fc, matmul), G MAC/s per core; 0 = cannot run"),
        "vector": _d(_NONNEG, "element-wise/pool/norm ops, G op/s per core"),
        "scalar": _d(_NONNEG, "scalar ops, G op/s per core"),
    }, ["tensor", "vector", "scalar"]),
    "launch_overhead_us": _d(_NONNEG, "fixed cost per op launch, µs"),
    "control_flow": {"type": "boolean",
                     "description": "runs control-flow scalar ops natively; if false such an "
                                    "op costs a round trip to the host CPU"},
    "energy_pj_per_op": _obj({
        "tensor": _NONNEG, "vector": _NONNEG, "scalar": _NONNEG,
    }, ["tensor", "vector", "scalar"]),
}, ["name", "kind", "cores", "throughput_gops", "launch_overhead_us", "control_flow",
    "energy_pj_per_op"])

_MATRIX_OR_NUMBER = {"oneOf": [_NONNEG, {"type": "array", "items": {"type": "array",
                                                                    "items": _NONNEG}}]}

CHIP_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://chipsched.dev/schemas/chip.schema.json",
    "title": "chipsched chip",
    **_obj({
        "name": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "mesh": _obj({"rows": {**_POSINT, "maximum": 1024},
                      "cols": {**_POSINT, "maximum": 1024}}, ["rows", "cols"],
                     "grid of mesh nodes: tiles, sub-chiplets or neuromorphic cores"),
        "unit": UNIT_SCHEMA,
        "noc": _obj({
            "link_bandwidth_gb_s": _d(_POS, "per link and direction, GB/s"),
            "hop_latency_cycles": _d(_NONNEG, "router + link traversal per hop, unit cycles"),
            "hop_energy_pj_per_bit": _d(_NONNEG, "per bit per hop, pJ"),
        }, ["link_bandwidth_gb_s", "hop_latency_cycles", "hop_energy_pj_per_bit"],
            "mesh NoC with XY routing (between sub-chiplets when 'chiplet' is given: "
            "then these are the die-to-die links)"),
        "dram": _obj({
            "bandwidth_gb_s": _d(_POS, "total DRAM bandwidth, GB/s"),
            "bandwidth_gb_s_per_tops": _d(_POS, "alternative: GB/s per TOPS of peak compute "
                                                "(SET: 0.5)"),
            "energy_pj_per_bit": _d(_NONNEG, "DRAM access energy, pJ per bit"),
            "ports": PORTS_SCHEMA,
        }, ["energy_pj_per_bit", "ports"]),
        "chiplet": _obj({
            "npus": _d(_bounded(1 << 16), "N: NPUs (units) per sub-chiplet"),
            "intra_bandwidth_gb_s": _d(_POS, "NPU-to-NPU bandwidth inside a sub-chiplet, GB/s"),
            "intra_energy_pj_per_bit": _d(_NONNEG, "NPU-to-NPU energy inside a sub-chiplet"),
        }, ["npus", "intra_bandwidth_gb_s", "intra_energy_pj_per_bit"],
            "mesh nodes are sub-chiplets of N units; the noc section describes the "
            "die-to-die links"),
        "processors": {"type": "array", "minItems": 1, "items": PROCESSOR_SCHEMA,
                       "description": "heterogeneous processors in chain order (seed 001: "
                                      "NPU, GPU, CPU)"},
        "interconnect": _obj({
            "bandwidth_gb_s": {**_MATRIX_OR_NUMBER,
                               "description": "between processors, GB/s (number or matrix)"},
            "latency_us": {**_MATRIX_OR_NUMBER,
                           "description": "per transfer between processors, µs"},
        }, ["bandwidth_gb_s", "latency_us"]),
        "core_capacity": _d(_bounded(1 << 40),
                            "neurons per core (neuromorphic arrays, seed 004)"),
    }, ["name", "mesh"]),
}

_DIM = {"type": "integer", "minimum": 1, "maximum": 1 << 24}
_ELEMS = {"type": "integer", "minimum": 0, "maximum": 1 << 40}

_LAYER_PROPS = {
    "name": {"type": "string", "minLength": 1},
    "kind": {"enum": ["conv", "depthwise", "fc", "matmul", "pool", "eltwise", "concat",
                      "norm", "softmax", "embed", "scalar"]},
    "K": _d(_DIM, "output channels / features / matmul columns N"),
    "C": _d(_DIM, "input channels / features / matmul reduction depth"),
    "H": _d(_DIM, "output height / matmul rows M"),
    "W": _d(_DIM, "output width"),
    "R": _DIM, "S": _DIM, "stride": _DIM,
    "groups": _d(_DIM, "channel groups (depthwise: = C = K; attention: heads)"),
    "in_elems": _d(_ELEMS,
                   "input activation elements per sample (default: sum of inputs); "
                   "required for a layer without inputs — the first layer of a file"),
    "weight_elems": _d(_ELEMS, "parameters (default: by kind)"),
    "ops": _d(_ELEMS, "non-MAC ops per sample (default: by kind)"),
    "control_flow": {"type": "boolean"},
    "inputs": {"type": "array", "items": {"oneOf": [
        {"type": "string"},
        _obj({"layer": {"type": "string"}, "elems": {"type": "integer", "minimum": 0}},
             ["layer"]),
    ]}},
}

NETWORK_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://chipsched.dev/schemas/network.schema.json",
    "title": "chipsched network (workload)",
    **_obj({
        "name": {"type": "string"},
        "precision_bytes": _d(_bounded(16), "bytes per element (1 = int8)"),
        "meta": {"type": "object"},
        "layers": {"type": "array", "minItems": 1,
                   "items": _obj(_LAYER_PROPS, ["name", "kind"])},
    }, ["layers"]),
}

SCHEMAS = {"chip": CHIP_SCHEMA, "network": NETWORK_SCHEMA}


def check_finite(data: Any, source: str) -> None:
    """JSON Schema cannot say "finite": YAML's ``.inf`` / ``.nan`` pass ``minimum``. Walk
    the document and name the first non-finite number."""
    import math

    def walk(x: Any, path: str) -> None:
        if isinstance(x, float) and not math.isfinite(x):
            raise InputError(path, f"must be a finite number, got {x}", "give a finite value")
        if isinstance(x, Mapping):
            for k, v in x.items():
                walk(v, f"{path}.{k}")
        elif isinstance(x, list | tuple):
            for i, v in enumerate(x):
                walk(v, f"{path}[{i}]")

    walk(data, source)


def validate(data: Any, schema: Mapping[str, Any], source: str) -> None:
    """Validate ``data``; raise a one-line :class:`InputError` naming the field."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = list(validator.iter_errors(data))
    if not errors:
        return
    # A misspelt field also makes a required one "missing": report the misspelling.
    typos = [e for e in errors if e.validator == "additionalProperties"]
    # (jsonschema's best_match would descend into oneOf branches by itself, often into
    # the wrong one; pick without descending and descend below.)
    error = max(typos or errors, key=jsonschema.exceptions.relevance)
    # For oneOf failures, descend into the branch the data meant (its 'kind' matched).
    while error.context:
        branches: dict[Any, list[Any]] = {}
        for e in error.context:
            branches.setdefault(e.relative_schema_path[0], []).append(e)
        meant = [errs for errs in branches.values()
                 if not any(e.validator in ("const", "enum", "type") and not e.relative_path
                            or (e.validator in ("const", "enum") and
                                list(e.relative_path) == ["kind"]) for e in errs)]
        pool = [e for errs in (meant or branches.values()) for e in errs]
        error = max(pool, key=lambda e: (len(e.absolute_path), e.validator != "oneOf"))
    path = ".".join(str(p) for p in error.absolute_path)
    field = f"{source}.{path}" if path else source
    msg, fix = error.message, None
    if error.validator == "additionalProperties":
        m = re.search(r"\('([^']+)'", msg)
        allowed = sorted(error.schema.get("properties", {}))
        if m:
            bad = m.group(1)
            field = f"{field}.{bad}"
            near = difflib.get_close_matches(bad, allowed, n=1)
            msg = "unknown field"
            fix = f"did you mean {near[0]!r}?" if near else f"allowed: {', '.join(allowed)}"
    elif error.validator == "required":
        m = re.match(r"'([^']+)'", msg)
        if m:
            field = f"{field}.{m.group(1)}"
            msg = "is required"
            desc = (error.schema.get("properties", {}).get(m.group(1), {})
                    .get("description"))
            fix = f"add it ({desc})" if desc else "add it"
    elif error.validator == "type":
        want = error.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        msg = f"must be {'an' if str(want)[0] in 'aeiou' else 'a'} {want}, got " \
              f"{error.instance!r}"[:200]
        fix = f"give {'an' if str(want)[0] in 'aeiou' else 'a'} {want}"
    elif error.validator in ("enum", "const"):
        opts = error.validator_value if error.validator == "enum" else [error.validator_value]
        fix = f"use one of {', '.join(map(str, opts))}"
    elif error.validator in ("maximum", "exclusiveMaximum"):
        fix = f"use a value <= {error.validator_value:,}"
    elif error.validator in ("minimum", "exclusiveMinimum"):
        fix = "use a positive value" if error.validator == "exclusiveMinimum" else (
            f"use a value >= {error.validator_value}")
    raise InputError(field, msg, fix)
