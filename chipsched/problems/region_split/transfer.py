"""Seed 000's transfer costs: C = f(M, d, N) inside a region and t3 between regions."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.hardware import Hardware

COLLECTIVES = ("chain", "ring")


@dataclass(frozen=True)
class TransferModel:
    """Seed 000's data-transfer costs, the formula the scraped document lost.

    ``within(M, d)`` — C = f(M, d, N), the cost of moving the internal data volume ``d``
    (bytes; the sum of the region's edge weights in S) of a region on M sub-chiplets of
    N NPUs each. Every operator of a region is split over all its NPUs and the next
    operator needs the whole tensor on every NPU, so each tensor is broadcast to all
    of them. Two collectives (``collective``):

    ``"chain"`` (default) — store-and-forward broadcast along the chain of the region's
    M sub-chiplets (the serpentine order they are placed in), each of the M − 1 hops
    forwarding the whole tensor, then along the N NPUs of a sub-chiplet on the on-die
    interconnect (linear-array broadcast, Grama et al., *Introduction to Parallel
    Computing*, §4.1)::

        C = (M − 1)·(α + d/B) + (N − 1)·d/B_intra

    ``"ring"`` — a ring all-gather, all links busy at once (Thakur, Rabenseifner and
    Gropp 2005)::

        C = (M − 1)·(α + d/(M·B)) + (N − 1)·d/(N·B_intra)

    C grows with M under ``chain`` — the only way the document's rule
    t0 > t1 + t2 + t3 can favour a split (under ``ring`` C hardly depends on M, fewer
    sub-chiplets per region only slow the compute, and seed 000 almost never splits
    the library networks; docs/region_split.md). C = 0 when d = 0.

    ``between(w)`` — t3, sending ``w`` bytes from one region to another over one
    die-to-die hop: ``α + w/B`` (0 when w = 0).

    α = die-to-die hop latency (s), B = die-to-die link bandwidth (B/s), B_intra =
    on-die bandwidth of a sub-chiplet (B/s), N = NPUs per sub-chiplet. Subclass and
    override both methods (vectorized over numpy arrays) to try another formula;
    every method and the evaluator use the instance's model.
    """

    hop_latency_s: float
    link_bytes_per_s: float
    intra_bytes_per_s: float
    npus: int
    collective: str = "chain"

    def __post_init__(self) -> None:
        if self.collective not in COLLECTIVES:
            raise InputError("transfer", f"unknown collective {self.collective!r}",
                             f"use one of {', '.join(COLLECTIVES)}")

    def within(self, m: Any, d: Any) -> Any:
        """C = f(M, d, N) in seconds (vectorized over ``m`` and ``d``)."""
        m = np.asarray(m, dtype=float)
        d = np.asarray(d, dtype=float)
        n = self.npus
        if self.collective == "chain":
            d2d = (m - 1) * (self.hop_latency_s + d / self.link_bytes_per_s)
            intra = (n - 1) * d / self.intra_bytes_per_s if n > 1 else 0.0 * d
        else:
            d2d = (m - 1) * (self.hop_latency_s + d / (m * self.link_bytes_per_s))
            intra = (n - 1) * d / (n * self.intra_bytes_per_s) if n > 1 else 0.0 * d
        out = np.where(d > 0, d2d + intra, 0.0)
        return out if out.ndim else float(out)

    def between(self, w: Any) -> Any:
        """t3 in seconds: one die-to-die hop carrying ``w`` bytes (vectorized)."""
        w = np.asarray(w, dtype=float)
        out = np.where(w > 0, self.hop_latency_s + w / self.link_bytes_per_s, 0.0)
        return out if out.ndim else float(out)

    @classmethod
    def of_chip(cls, hw: Hardware, collective: str = "chain") -> TransferModel:
        """The model's numbers from a chiplet (or tiled) chip's ``noc`` and ``chiplet``."""
        if hw.noc is None or hw.unit is None:
            raise InputError(f"chip {hw.name!r}.noc", "a chiplet grid needs 'unit' and 'noc' "
                             "sections (die-to-die links)")
        npus = hw.chiplet.npus if hw.chiplet else 1
        intra = hw.chiplet.intra_bandwidth_gb_s * 1e9 if hw.chiplet else math.inf
        return cls(hop_latency_s=hw.noc.hop_latency_cycles / hw.unit.frequency_hz,
                   link_bytes_per_s=hw.noc.link_bytes_per_s, intra_bytes_per_s=intra,
                   npus=npus, collective=collective)
