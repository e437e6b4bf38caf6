"""A proven lower bound on E^n·D^m over every tree the analyzer accepts (issue 10).

Every term below is a quantity the analyzer (:mod:`.model`) charges to *any* tree, at
least as large as stated, whatever the cuts, sub-batches, orders and allocations:

* **per layer** it runs B samples in all, in runs of some sub-batch b | B on a group of
  some g ≤ G tiles (one table row), so it pays at least min over (g, b) of its MAC and
  buffer energy × B/b, plus the NoC hop-bytes every tree puts on the controller link:
  its weights delivered to its tiles at least once, its network inputs (never produced
  on chip) delivered B/b times, a network output written B/b times;
* **DRAM** reads every layer's weights at least once, every network input B times and
  writes every network output B times;
* **time**: no two leaves run on one tile at once (S-cut children get disjoint tiles,
  T-cut children and a leaf's own runs follow one another), so the latency is at least
  the tiles' total busy time over G — each layer keeps g tiles busy for its table time
  per run — and at least one layer's own runs one after another; segments are
  bounded by their DRAM time and follow one another, so it is at least the DRAM bytes
  above at the DRAM bandwidth.

Intermediate feature maps (NoC or DRAM, depending on the tree), NoC link time and
buffer limits are left out, so the bound is loose where they dominate. The objective
grows in E and D, so E^n·D^m of the two bounds bounds every tree's objective.
``tests/test_tile_groups_bound.py`` checks every term against every tree of brute-force
enumerations of random small networks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.cost import dram_energy_j, dram_time_s, noc_energy_j
from chipsched.problems.tile_groups.analyzer import COLUMN

#: columns of ``Analyzer.rows`` (named by ``analyzer.LayerRow``)
_CS, _UU, _WF, _IF, _OF, _FP, _ME, _BE = (COLUMN[f] for f in (
    "compute_s", "units_used", "weight_fetch_bytes", "ifmap_fetch_bytes", "ofmap_bytes",
    "footprint_bytes", "mac_energy_j", "buffer_energy_j"))


@dataclass(frozen=True)
class LowerBound:
    """The bound and its parts (J, s, B, B·hops)."""

    objective: float
    energy_j: float
    latency_s: float
    mac_buffer_j: float
    dram_j: float
    noc_j: float
    work_s: float
    longest_layer_s: float
    dram_s: float
    dram_bytes: float
    noc_byte_hops: float

    @property
    def latency_from(self) -> str:
        """Which latency term binds: 'work over all tiles', 'one layer' or 'DRAM'."""
        parts = {"work over all tiles": self.work_s, "one layer": self.longest_layer_s,
                 "DRAM": self.dram_s}
        return max(parts, key=parts.__getitem__)

    def to_dict(self) -> dict[str, Any]:
        return {"energy_j": self.energy_j, "latency_s": self.latency_s,
                "energy": {"mac_buffer_j": self.mac_buffer_j, "dram_j": self.dram_j,
                           "noc_j": self.noc_j},
                "latency": {"work_s": self.work_s, "longest_layer_s": self.longest_layer_s,
                            "dram_s": self.dram_s, "binding": self.latency_from},
                "dram_bytes": self.dram_bytes, "noc_byte_hops": self.noc_byte_hops}


def lower_bound(instance: Any) -> LowerBound:
    """The lower bound of ``instance`` (a tile_groups ``Instance``); O(layers × tiles ×
    divisors of B) from the analyzer's layer table."""
    an = instance.analyzer
    hw = an.hw
    rows = an.rows  # (L, G, nb, 10)
    L, G = rows.shape[0], rows.shape[1]
    B = an.B
    batches = np.asarray(an.table.batches, dtype=float)
    runs = (B / batches)[None, None, :]  # runs of a leaf of sub-batch b in all: B/b
    g = np.arange(1, G + 1, dtype=float)[None, :, None]
    weights = np.asarray(an.weight_bytes, dtype=float)
    ext = np.asarray(an.ext, dtype=float)
    src = np.asarray(an.src_total, dtype=float)
    ext_share = np.divide(ext, src, out=np.zeros(L), where=src > 0)
    is_out = np.array([0.0 if an.succs[c] else 1.0 for c in range(L)])

    cs, wf, iff, of = rows[..., _CS], rows[..., _WF], rows[..., _IF], rows[..., _OF]
    mac_buf = (rows[..., _ME] + rows[..., _BE]) * runs
    out_bytes = is_out[:, None, None] * of * runs
    hop_bytes = (np.where(weights > 0, 1.0, 0.0)[:, None, None] * wf
                 + ext_share[:, None, None] * iff * runs + out_bytes)
    noc_j = noc_energy_j(hop_bytes, an.hop_pj)
    dram_out_j = dram_energy_j(out_bytes, hw)
    # one (g, b) per layer: the three energies at the same row, least over rows
    per_layer = (mac_buf + noc_j + dram_out_j).reshape(L, -1)
    k = per_layer.argmin(axis=1)
    pick = (np.arange(L), k)
    e_mac = float(mac_buf.reshape(L, -1)[pick].sum())
    e_noc = float(noc_j.reshape(L, -1)[pick].sum())
    dram_fixed = float((weights + ext * an.prec * B).sum())
    dram_bytes = dram_fixed + float(out_bytes.reshape(L, -1)[pick].sum())
    e_dram = float(dram_energy_j(dram_bytes, hw))
    noc_bh = float(hop_bytes.reshape(L, -1)[pick].sum())

    busy = (g * cs * runs).reshape(L, -1).min(axis=1)  # tile·seconds per layer
    own = (cs * runs).reshape(L, -1).min(axis=1)
    work_s = float(busy.sum()) / G
    longest = float(own.max()) if L else 0.0
    dram_s = float(dram_time_s(dram_bytes, hw))
    energy = e_mac + e_noc + e_dram
    latency = max(work_s, longest, dram_s)
    return LowerBound(objective=float(instance.objective(energy, latency)), energy_j=energy,
                      latency_s=latency, mac_buffer_j=e_mac, dram_j=e_dram, noc_j=e_noc,
                      work_s=work_s, longest_layer_s=longest, dram_s=dram_s,
                      dram_bytes=dram_bytes, noc_byte_hops=noc_bh)
