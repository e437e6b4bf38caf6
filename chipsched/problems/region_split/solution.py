"""region_split solutions: contiguous regions with sub-chiplets and a grid placement
(chiplet grid) or with a processor of the chain (processor chain)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from chipsched.errors import InputError

if TYPE_CHECKING:
    from .instance import ChipletInstance

@dataclass(frozen=True)
class ChipletSolution:
    """Pipeline regions of items on a chiplet grid (seed 000).

    ``order`` is a topological order of the items (empty: the instance's own item
    order 0..n−1); ``regions[r] = (first, last)`` are positions in that order
    (inclusive), in order, covering every item once — so every region is a convex set
    of the item DAG and the regions are its pipeline stages in dependency order.
    ``counts[r]`` the sub-chiplets of region r; ``placement[r]`` their node ids
    (row-major; empty: seed 000's serpentine placement).
    """

    regions: tuple[tuple[int, int], ...]
    counts: tuple[int, ...]
    placement: tuple[tuple[int, ...], ...] = ()
    order: tuple[int, ...] = ()

    platform = "chiplet"

    def items(self, n: int) -> list[tuple[int, ...]]:
        """The items of every region (``n`` = the instance's item count)."""
        order = self.order or tuple(range(n))
        return [tuple(order[a:b + 1]) for a, b in self.regions]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"regions": [list(r) for r in self.regions],
                             "counts": list(self.counts)}
        if self.placement:
            d["placement"] = [list(p) for p in self.placement]
        if self.order:
            d["order"] = list(self.order)
        return d


@dataclass(frozen=True)
class SocSolution:
    """Contiguous sub-models of the layers on a processor chain (seed 001).

    ``regions[r] = (first, last)`` layers (inclusive), in order, covering every layer
    once; ``processors[r]`` the chain position running sub-model r (increasing).
    """

    regions: tuple[tuple[int, int], ...]
    processors: tuple[int, ...]

    platform = "soc"

    def to_dict(self) -> dict[str, Any]:
        return {"regions": [list(r) for r in self.regions],
                "processors": list(self.processors)}


Solution = ChipletSolution | SocSolution


def _int_tuple(x: Any, where: str) -> tuple[int, ...]:
    if not isinstance(x, (list, tuple)) or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in x):
        raise InputError(where, f"must be a list of integers, got {x!r}")
    return tuple(int(v) for v in x)


def solution_from_dict(instance: Any, data: Mapping[str, Any]) -> Solution:
    """The solution of ``instance``'s platform from its ``to_dict()`` form."""
    chiplet = getattr(instance, "platform", "") == "chiplet"
    allowed = {"regions", "counts", "placement", "order"} if chiplet else {"regions", "processors"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InputError(f"solution.{unknown[0]}", "unknown field for a "
                         f"{'chiplet grid' if chiplet else 'processor chain'} solution",
                         f"fields: {', '.join(sorted(allowed))}")
    if "regions" not in data:
        raise InputError("solution.regions", "is required")
    regions = tuple(tuple(_int_tuple(r, f"solution.regions[{k}]")) for k, r in
                    enumerate(data["regions"]))
    if any(len(r) != 2 for r in regions):
        raise InputError("solution.regions", "every region is [first, last]")
    regs = tuple((a, b) for a, b in regions)
    if chiplet:
        if "counts" not in data:
            raise InputError("solution.counts", "is required on a chiplet grid")
        placement = tuple(_int_tuple(p, f"solution.placement[{k}]")
                          for k, p in enumerate(data.get("placement") or ()))
        order = _int_tuple(data.get("order") or [], "solution.order")
        return ChipletSolution(regs, _int_tuple(data["counts"], "solution.counts"), placement,
                               order)
    if "processors" not in data:
        raise InputError("solution.processors", "is required on a processor chain")
    return SocSolution(regs, _int_tuple(data["processors"], "solution.processors"))


def serpentine_order(rows: int, cols: int) -> list[int]:
    """Node ids of the grid row by row, every other row reversed (a boustrophedon).

    Seed 000, step 6: "deploy the regions in dependency order row by row; when the
    rest of a row cannot hold a region, fold to the next row and continue in the
    opposite direction".
    """
    order = []
    for r in range(rows):
        cs = range(cols) if r % 2 == 0 else range(cols - 1, -1, -1)
        order.extend(r * cols + c for c in cs)
    return order


def serpentine_placement(rows: int, cols: int, counts: Sequence[int]
                         ) -> tuple[tuple[int, ...], ...]:
    """Seed 000, step 6: region r takes the next ``counts[r]`` nodes of the serpentine.

    The default of every method; the chain step ``placement=bnb|cpsat|milp``
    (``chipsched.chains.RegionPlacement``) replaces it by the core_assignment QAP's
    placement of the same regions; the evaluator accepts every valid placement and
    reports its traffic.
    """
    order = serpentine_order(rows, cols)
    if sum(counts) > len(order):
        raise InputError("counts", f"{sum(counts)} sub-chiplets asked, the grid has "
                         f"{len(order)}")
    out, k = [], 0
    for m in counts:
        out.append(tuple(order[k:k + m]))
        k += m
    return tuple(out)


def chiplet_solution(inst: ChipletInstance, regions: Sequence[tuple[int, int]],
                     counts: Sequence[int], order: Sequence[int] = ()) -> ChipletSolution:
    """A chiplet solution with the serpentine placement (``order``: the item order the
    regions cut, when not the instance's own; the identity is stored as empty)."""
    h = inst.hardware
    order = tuple(int(v) for v in order)
    if order == tuple(range(len(order))):
        order = ()
    return ChipletSolution(tuple((int(a), int(b)) for a, b in regions),
                           tuple(int(m) for m in counts),
                           serpentine_placement(h.rows, h.cols, counts), order)


def check_order(inst: ChipletInstance, order: Sequence[int]) -> None:
    """``order`` is a permutation of the items and a topological order of their DAG."""
    n = inst.n_items
    if sorted(int(v) for v in order) != list(range(n)):
        raise InputError("solution.order", f"is not a permutation of the items 0..{n - 1}",
                         "list every item once, in a topological order")
    pos = np.empty(n, dtype=np.int64)
    pos[np.asarray(order, dtype=np.int64)] = np.arange(n)
    p, q = inst.item_edges[:, 0], inst.item_edges[:, 1]
    bad = np.flatnonzero(pos[p] >= pos[q])
    if bad.size:
        k = int(bad[0])
        raise InputError("solution.order", f"puts item {int(q[k])} before item {int(p[k])}, "
                         f"which feeds it", "give a topological order of the item DAG")


def soc_solution(regions: Sequence[tuple[int, int]], processors: Sequence[int]
                 ) -> SocSolution:
    return SocSolution(tuple((int(a), int(b)) for a, b in regions),
                       tuple(int(p) for p in processors))


def check_regions(regions: Sequence[tuple[int, int]], n: int, limit: int,
                  max_regions: int | None) -> None:
    """Regions are contiguous, in order, cover items 0..n−1 exactly once, ≤ the limit."""
    if not regions:
        raise InputError("solution.regions", "is empty", "give at least one region")
    expect = 0
    for k, (a, b) in enumerate(regions):
        if a != expect or b < a:
            raise InputError(f"solution.regions[{k}]", f"({a}, {b}) is not contiguous "
                             f"with the previous region (expected to start at {expect})")
        expect = b + 1
    if expect != n:
        raise InputError("solution.regions", f"cover items 0..{expect - 1}, not 0..{n - 1}")
    if max_regions is not None and len(regions) > max_regions:
        raise InputError("solution.regions", f"{len(regions)} regions, max_regions is "
                         f"{max_regions}")
    if len(regions) > limit:
        raise InputError("solution.regions", f"{len(regions)} regions, at most {limit} fit")
