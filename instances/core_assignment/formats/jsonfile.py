"""core_assignment's generic JSON instance format (``chipsched schema`` publishes
its JSON Schema, :data:`JSON_SCHEMA`): reader, checker and writer."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.files import atomic_write, read_data
from chipsched.neurongraph import NeuronGraph

JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://chipsched.dev/schemas/core_assignment.schema.json",
    "title": "chipsched core_assignment instance",
    "type": "object",
    "additionalProperties": False,
    "required": ["graph", "cores"],
    "properties": {
        "name": {"type": "string"},
        "objective": {"enum": ["traffic", "cut", "energy", "multicast"],
                      "description": "what to minimize (default traffic = Σ w·hops; "
                                     "multicast = Σ packets·hops, one packet per spike "
                                     "and destination core)"},
        "spikes": {"type": "array", "items": {"type": "integer", "minimum": 0,
                                              "maximum": 2**40},
                   "description": "spikes of every vertex over the profiling window "
                                  "(rate × window); the edge {u, v}, u < v, then carries "
                                  "w × spikes[u] and a multicast packet counts spikes[u] "
                                  "times (default: every vertex spikes once)"},
        "weight_bytes": {"type": "number", "exclusiveMinimum": 0,
                         "description": "bytes one unit of edge weight carries per inference "
                                        "(default 1)"},
        "graph": {
            "type": "object", "additionalProperties": False, "required": ["sizes", "edges"],
            "properties": {
                "sizes": {"type": "array", "minItems": 1,
                          "items": {"type": "integer", "minimum": 0, "maximum": 2**40},
                          "description": "neurons per vertex; vertex ids are 0..len-1"},
                "edges": {"type": "array",
                          "items": {"type": "array", "minItems": 2, "maxItems": 3,
                                    "prefixItems": [{"type": "integer", "minimum": 0,
                                                     "maximum": 2**40},
                                                    {"type": "integer", "minimum": 0,
                                                     "maximum": 2**40},
                                                    {"type": "integer", "minimum": 0,
                                                     "maximum": 2**40}]},
                          "description": "[u, v, w]: w synapses between u and v (default 1); "
                                         "undirected, duplicates summed, u < v is the "
                                         "direction of the traffic"},
            },
        },
        "cores": {
            "type": "object", "additionalProperties": False,
            "required": ["rows", "cols", "capacity"],
            "properties": {
                "rows": {"type": "integer", "minimum": 1, "maximum": 1024},
                "cols": {"type": "integer", "minimum": 1, "maximum": 1024},
                "capacity": {"type": "integer", "minimum": 1, "maximum": 2**40,
                             "description": "neurons per core"},
            },
        },
    },
}


def read_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse and validate a generic JSON instance; returns ``{graph, rows, cols, capacity,
    name, objective?, weight_bytes?, spikes?}`` (the graph as a :class:`NeuronGraph` of
    synapse counts; :func:`chipsched.problems.core_assignment.make_instance` applies the
    spikes)."""
    data = read_data(path)
    return parse_json(data, str(path))


def parse_json(data: Any, source: str = "instance") -> dict[str, Any]:
    from chipsched.schemas import validate

    validate(data, JSON_SCHEMA, source)
    sizes = np.asarray(data["graph"]["sizes"], dtype=np.int64)
    edges = data["graph"]["edges"]
    n = sizes.shape[0]
    u = np.fromiter((e[0] for e in edges), np.int64, len(edges))
    v = np.fromiter((e[1] for e in edges), np.int64, len(edges))
    w = np.fromiter((e[2] if len(e) > 2 else 1 for e in edges), np.int64, len(edges))
    bad = np.flatnonzero((u >= n) | (v >= n))
    if bad.size:
        i = int(bad[0])
        raise InputError(f"{source}.graph.edges.{i}",
                         f"vertex {int(max(u[i], v[i]))} does not exist",
                         f"vertex ids are 0..{n - 1} (one per entry of sizes)")
    name = data.get("name") or Path(source).stem
    graph = NeuronGraph.from_edges(sizes, u, v, w, name=name)
    out = {"graph": graph, "name": name, "rows": data["cores"]["rows"],
           "cols": data["cores"]["cols"], "capacity": data["cores"]["capacity"]}
    for k in ("objective", "weight_bytes"):
        if k in data:
            out[k] = data[k]
    if "spikes" in data:
        if len(data["spikes"]) != n:
            raise InputError(f"{source}.spikes", f"has {len(data['spikes'])} entries, the "
                             f"graph has {n} vertices", "give one spike count per vertex")
        out["spikes"] = np.asarray(data["spikes"], dtype=np.int64)
    return out


def write_json(path: str | os.PathLike[str], graph: NeuronGraph, rows: int, cols: int,
               capacity: int, **extra: Any) -> Path:
    """Write a generic JSON instance (atomically). With ``spikes=`` (an instance's, whose
    graph is spike-weighted) the synapse counts w / spikes[u] are written back."""
    import json

    u, v, w = graph.edges()
    spikes = extra.pop("spikes", None)
    if spikes is not None:
        spikes = np.asarray(spikes, dtype=np.int64)
        s_u = spikes[u]  # edges of silent sources were dropped: no division by 0
        if np.any(s_u == 0) or np.any(w % np.maximum(s_u, 1)):
            raise InputError("write_json.spikes", "the graph's weights are not "
                             "synapses × spikes of the source",
                             "pass the spikes of the instance whose graph this is")
        w = w // s_u
        extra["spikes"] = spikes.tolist()
    data = {"name": extra.pop("name", graph.name), **extra,
            "graph": {"sizes": graph.sizes.tolist(),
                      "edges": np.stack([u, v, w], axis=1).tolist() if u.size else []},
            "cores": {"rows": int(rows), "cols": int(cols), "capacity": int(capacity)}}
    return atomic_write(path, lambda fh: json.dump(data, fh))
