"""The die-to-die flows between the slots of a chiplet solution, and the placement QAP."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.neurongraph import NeuronGraph
from chipsched.problems.core_assignment import Instance as QapInstance

from .instance import ChipletInstance


def region_bytes(inst: ChipletInstance, regions: Sequence[tuple[int, int]],
                 order: Sequence[int] = ()) -> np.ndarray:
    """``between[r, s]``: bytes per frame region r sends region s (S's edges); the diagonal
    is each region's internal volume d. ``order``: the item order the regions cut
    (empty: 0..n−1)."""
    region_of = np.zeros(inst.n_items, dtype=np.int64)
    pos = np.asarray(order or range(inst.n_items), dtype=np.int64)
    for r, (a, b) in enumerate(regions):
        region_of[pos[a:b + 1]] = r
    R = len(regions)
    p, q = np.nonzero(inst.edge_bytes)
    out = np.zeros(R * R)
    np.add.at(out, region_of[p] * R + region_of[q], inst.edge_bytes[p, q])
    return out.reshape(R, R)


@dataclass(frozen=True, eq=False)
class PlacementFlows:
    """Directed byte flows between the *slots* of a solution, per frame.

    Slot ``offsets[r] + k`` is the k-th sub-chiplet of region r (slots numbered
    consecutively, region by region); a placement maps every slot to a grid node. Flow f
    carries ``bytes[f]`` from slot ``src[f]`` to slot ``dst[f]``. Directed, because the
    busiest-link metric needs a direction; the exact placement model only needs the
    undirected :meth:`pairs` (XY routing: a flow's byte·hops are its bytes times the
    Manhattan distance, whatever its direction).
    """

    counts: tuple[int, ...]
    src: np.ndarray
    dst: np.ndarray
    bytes: np.ndarray

    @property
    def n_slots(self) -> int:
        return int(sum(self.counts))

    @property
    def offsets(self) -> np.ndarray:
        """``offsets[r]`` = first slot of region r (length R + 1)."""
        return np.concatenate([[0], np.cumsum(self.counts, dtype=np.int64)])

    def slot_nodes(self, placement: Sequence[Sequence[int]]) -> np.ndarray:
        """The node of every slot under ``placement`` (region r's nodes in slot order)."""
        nodes = [int(v) for p in placement for v in p]
        if [len(p) for p in placement] != list(self.counts):
            raise InputError("placement", f"{[len(p) for p in placement]} nodes per region "
                             f"for counts {list(self.counts)}")
        return np.asarray(nodes, dtype=np.int64)

    def split(self, nodes: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        """The placement (a tuple of nodes per region, in slot order) of a slot → node map."""
        off = self.offsets
        return tuple(tuple(int(v) for v in nodes[off[r]:off[r + 1]])
                     for r in range(len(self.counts)))

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Undirected QAP flows ``(u, v, w)``, u < v, both directions of a slot pair summed:
        Σ w·hops(node(u), node(v)) is the d2d byte·hops of any placement."""
        n = max(self.n_slots, 1)
        a = np.minimum(self.src, self.dst)
        b = np.maximum(self.src, self.dst)
        key, inv = np.unique(a * n + b, return_inverse=True)
        w = np.bincount(inv.ravel(), weights=self.bytes, minlength=key.size)
        return key // n, key % n, w

    def byte_hops(self, nodes: Sequence[int], cols: int) -> float:
        """Σ bytes × Manhattan hops for the slot → node map ``nodes`` (row-major ids)."""
        u, v, w = self.pairs()
        nd = np.asarray(nodes, dtype=np.int64)
        (ur, uc), (vr, vc) = np.divmod(nd[u], cols), np.divmod(nd[v], cols)
        return float((w * (np.abs(ur - vr) + np.abs(uc - vc))).sum())


def placement_flows(inst: ChipletInstance, regions: Sequence[tuple[int, int]],
                    counts: Sequence[int], order: Sequence[int] = ()) -> PlacementFlows:
    """The die-to-die flows of a solution over its slots (slot (r, k) = the k-th
    sub-chiplet of region r) — the single definition behind the ``d2d_*`` metrics and the
    exact placement model.

    * Between regions r ≠ s: the ``between[r, s]`` bytes of S's edges from r to s, spread
      evenly over all (source, destination) slot pairs: ``between[r, s] / (m_r·m_s)``
      each (every sub-chiplet holds a share of every operator of its region).
    * Inside region r (m_r > 1, internal volume d > 0): the ring all-gather of C, slot
      (r, k) forwarding ``d·(m − 1)/m`` bytes to slot (r, (k + 1) mod m) — so the ring
      order is the slot order, i.e. the order of ``placement[r]``.
    """
    counts = tuple(int(m) for m in counts)
    between = region_bytes(inst, regions, order)
    off = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    src, dst, wt = [], [], []
    for r, mr in enumerate(counts):
        a = np.arange(off[r], off[r + 1])
        for s, ms in enumerate(counts):
            if r != s and between[r, s] > 0:
                b = np.arange(off[s], off[s + 1])
                src.append(np.repeat(a, ms))
                dst.append(np.tile(b, mr))
                wt.append(np.full(mr * ms, between[r, s] / (mr * ms)))
        d = between[r, r]
        if mr > 1 and d > 0:
            k = np.arange(mr)
            src.append(off[r] + k)
            dst.append(off[r] + (k + 1) % mr)
            wt.append(np.full(mr, d * (mr - 1) / mr))

    def cat(xs: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(xs).astype(dtype) if xs else np.zeros(0, dtype)

    return PlacementFlows(counts, cat(src, np.int64), cat(dst, np.int64), cat(wt, float))


#: Values of the chiplet methods' ``placement`` parameter → the core_assignment method


def rounded_flows(flows: PlacementFlows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The undirected slot flows (:meth:`PlacementFlows.pairs`) as positive integers.

    core_assignment's graphs have integer weights (synapse counts): every flow is
    rounded to whole bytes, a positive flow to at least 1 byte so that no traffic
    vanishes. Flows are KB–MB per frame on the library networks, so the rounding moves
    the objective by < 1e-5 relative; the model's optimality proof is for these
    rounded flows, the reported d2d metrics are the evaluator's exact ones.
    """
    u, v, w = flows.pairs()
    keep = w > 0
    u, v, w = u[keep], v[keep], w[keep]
    return u, v, np.maximum(1, np.rint(w)).astype(np.int64)


def placement_qap(inst: ChipletInstance, flows: PlacementFlows) -> QapInstance:
    """The core_assignment instance that places ``flows``' slots: one vertex of size 1 per
    slot, capacity 1 (every slot its own grid node), the chiplet grid's rows × cols,
    objective ``traffic`` = Σ rounded bytes × Manhattan hops, the chiplet chip itself
    (its NoC figures give the energy metrics)."""
    u, v, w = rounded_flows(flows)
    graph = NeuronGraph.from_edges(np.ones(flows.n_slots, np.int64), u, v, w,
                                   name=f"{inst.name}-slots")
    h = inst.hardware
    return QapInstance(f"{inst.name}-placement", graph, h, h.rows, h.cols, 1, "traffic",
                       weight_bytes=1.0)
