"""The tile_groups instance and solution: a network on a tiled chip with a total batch
and an objective E^n·D^m; a resource allocation tree (and its text form) as the
solution. The analyzer that costs trees is :mod:`.analyzer`; the evaluator and the
S-T schedule are :mod:`.evaluate`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.objective import Objective
from chipsched.problems.tile_groups import geometry as geo
from chipsched.problems.tile_groups.objectives import OBJECTIVES
from chipsched.problems.tile_groups.tree import (
    TCUT,
    Node,
    check_structure,
    cut,
    leaf,
    parse_tree,
    to_text,
)
from chipsched.workload import Workload, check_batch

if TYPE_CHECKING:
    from chipsched.problems.tile_groups.analyzer import Analyzer

#: Weight accounting conventions (``Instance.weight_accounting``): charged per segment
#: run (ours, physical) or once per total batch (SET's).
WEIGHT_ACCOUNTING = ("per_run", "set")



@dataclass(frozen=True, eq=False)
class Instance:
    """A network on a tiled chip with a total batch and an objective E^n·D^m.

    ``stripe_width`` sets the stripe-based tile ids (default
    :func:`geometry.default_stripe_width`); ``given`` is a tree read with the
    instance (a ``.tree`` file) for the ``given`` method. ``weight_accounting``:
    ``"per_run"`` (default) charges a segment's weights every time the segment runs (a
    root T cut with k sub-batches reloads them k times); ``"set"`` is SET's convention,
    weights charged once per total batch whatever the tree (SET's ``calcNoC`` divides a
    layer's weight traffic by tot_batch/B). The layer table and the analyzer are built
    on first use and cached on the object.
    """

    workload: Workload
    hardware: Hardware
    batch: int = 1
    objective: Objective = OBJECTIVES.get("e2d")
    stripe_width: int | None = None
    given: Node | None = None
    name: str = ""
    weight_accounting: str = "per_run"

    def __post_init__(self) -> None:
        hw = self.hardware
        if hw.kind() != "tiled" or hw.unit is None or hw.noc is None or hw.dram is None:
            raise InputError(f"chip {hw.name!r}", "tile_groups needs a tiled chip with a NoC "
                             "and DRAM", "use edge-4x4, cloud-12x12 or tiled-RxC")
        object.__setattr__(self, "batch", check_batch(self.batch))
        object.__setattr__(self, "objective", OBJECTIVES.parse(self.objective))
        w = self.stripe_width if self.stripe_width is not None else \
            geo.default_stripe_width(hw.cols)
        if not isinstance(w, (int, np.integer)) or not 1 <= w <= hw.cols:
            raise InputError("stripe_width", f"must be in 1..{hw.cols}, got {w!r}")
        object.__setattr__(self, "stripe_width", int(w))
        if self.weight_accounting not in WEIGHT_ACCOUNTING:
            raise InputError("weight_accounting", f"unknown convention "
                             f"{self.weight_accounting!r}",
                             f"use one of {', '.join(WEIGHT_ACCOUNTING)}")
        if not self.name:
            tag = "/set-weights" if self.weight_accounting == "set" else ""
            object.__setattr__(self, "name",
                               f"{self.workload.name}@{hw.name}/b{self.batch}{tag}")
        if self.given is not None:
            check_structure(self.given, self.workload, self.batch)

    @property
    def n_tiles(self) -> int:
        return self.hardware.n_units

    @property
    def layer_names(self) -> tuple[str, ...]:
        return tuple(ly.name for ly in self.workload.layers)

    @cached_property
    def analyzer(self) -> Analyzer:
        from chipsched.problems.tile_groups.analyzer import Analyzer

        return Analyzer(self)

    def tree(self, text: str) -> Node:
        """Parse a tree in the text form (layer names of this network) and check it."""
        t = parse_tree(text, self.workload)
        check_structure(t, self.workload, self.batch)
        return t


@dataclass(frozen=True)
class Solution:
    """A resource allocation tree and its text form (the JSON ``solution``)."""

    tree: Node
    text: str

    @classmethod
    def of(cls, instance: Instance, tree: Node) -> Solution:
        return cls(tree, to_text(tree, instance.layer_names))

    @classmethod
    def parse(cls, instance: Instance, text: str) -> Solution:
        return cls.of(instance, instance.tree(text))

    def to_dict(self) -> dict[str, Any]:
        return {"tree": self.text}

    @classmethod
    def from_dict(cls, instance: Instance, data: Any) -> Solution:
        """Inverse of :meth:`to_dict` (``{"tree": "T(1)[ … ]"}``), checked against the
        instance's network and batch."""
        if not isinstance(data, dict) or set(data) != {"tree"} or \
                not isinstance(data["tree"], str):
            raise InputError("solution", "a tile_groups solution is {tree: TEXT}",
                             "e.g. {tree: 'T(1)[ conv1 conv2 ]'}")
        return cls.parse(instance, data["tree"])

    def __str__(self) -> str:
        return self.text


def ls_tree(n_layers: int, sb: int = 1) -> Node:
    """All leaves under a root T cut in the network's order (layer-sequential, SA start)."""
    leaves = [leaf(i) for i in range(n_layers)]
    if n_layers == 1:
        return leaves[0] if sb == 1 else cut(TCUT, leaves, sb)
    return cut(TCUT, leaves, sb)



def as_tree(instance: Instance, solution: Solution | Node | str) -> Node:
    """The tree of a :class:`Solution`, a :class:`Node` or a text form, checked."""
    if isinstance(solution, Solution):
        tree = solution.tree
    elif isinstance(solution, Node):
        tree = solution
    elif isinstance(solution, str):
        tree = parse_tree(solution, instance.workload)
    else:
        raise InputError("solution", f"expected a tile_groups Solution, got "
                         f"{type(solution).__name__}")
    check_structure(tree, instance.workload, instance.batch)
    return tree


