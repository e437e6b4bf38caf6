"""tile_groups (seed 002, SET): resource allocation trees on tiled accelerators.

The problem layer: the tree (:mod:`.tree` — nodes, text form, structural checks), the
mesh geometry (:mod:`.geometry`), the instance and solution (:mod:`.instance`), the
analyzer that costs a tree (:mod:`.analyzer`) and the evaluator (:mod:`.evaluate`). See
``docs/tile_groups.md`` for every model choice.

    from chipsched.problems.tile_groups import Instance, Solution, evaluate
    inst = Instance(get_network("tiny"), get_chip("edge-4x4"), batch=4)
    sol = Solution.parse(inst, "T(1)[ S(2)[ conv1 conv2 ] T(2)[ conv3a conv3b add3 pool fc ] ]")
    objective, metrics = evaluate(inst, sol)
"""

from __future__ import annotations

from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.objective import Objective
from chipsched.problem import Problem
from chipsched.problems.tile_groups.analyzer import (
    Analyzer,
    Infeasible,
    LayerRow,
    SegmentCost,
    Totals,
    optimal_allocation,
    pipeline_finish,
)
from chipsched.problems.tile_groups.evaluate import Analysis, Job, analyze, evaluate, metrics
from chipsched.problems.tile_groups.instance import (
    Instance,
    Solution,
    as_tree,
    ls_tree,
)
from chipsched.problems.tile_groups.objectives import OBJECTIVES, energy_delay
from chipsched.problems.tile_groups.tree import (
    CUT_KINDS,
    LEAF,
    SCUT,
    TCUT,
    Node,
    assemble,
    check_structure,
    cut,
    get,
    iter_nodes,
    leaf,
    leaf_paths,
    least_tiles,
    normalize,
    parse_tree,
    path_str,
    replace_at,
    resized,
    short_text,
    to_text,
)
from chipsched.workload import Workload

__all__ = [
    "CUT_KINDS", "LEAF", "OBJECTIVES", "PROBLEM", "SCUT", "TCUT", "Analysis", "Analyzer",
    "Infeasible", "Instance", "Job", "LayerRow", "assemble", "default_objective", "energy_delay",
    "make_instance",
    "Node", "SegmentCost", "Solution", "Totals", "analyze", "as_tree", "check_structure", "cut",
    "evaluate", "get", "iter_nodes", "leaf", "leaf_paths", "least_tiles", "ls_tree", "metrics",
    "normalize",
    "optimal_allocation", "parse_tree", "path_str", "pipeline_finish", "replace_at",
    "resized", "short_text", "to_text",
]


def default_objective(hardware: Hardware) -> str:
    """'e2d' (SET's edge platform) for chips of at most 16 tiles, else 'ed2' (cloud)."""
    return "e2d" if hardware.n_units <= 16 else "ed2"


def make_instance(source: Workload | Instance, hardware: Hardware, *,
                  objective: str | Objective | None = None, batch: int | None = None,
                  stripe_width: int | None = None, given: Node | None = None,
                  weight_accounting: str | None = None) -> Instance:
    """A tile_groups instance of ``source`` (a ``Workload``) on a tiled chip; defaults:
    batch 1, the objective of :func:`default_objective`, weights charged per segment
    run (``weight_accounting="set"``: SET's once per total batch). A ready instance is
    returned with ``objective`` applied (other options cannot change a built
    instance)."""
    if isinstance(source, Instance):
        if batch is not None or stripe_width is not None or given is not None \
                or weight_accounting is not None:
            raise InputError("instance", "is already built", "pass a network to set options")
        if objective is None:
            return source
        from dataclasses import replace

        return replace(source, objective=OBJECTIVES.parse(objective))
    if not isinstance(source, Workload):
        raise InputError("instance", f"a {type(source).__name__} is not a network",
                         "give a Workload (chipsched.get_network)")
    return Instance(source, hardware, batch=1 if batch is None else batch,
                    objective=objective or default_objective(hardware),
                    stripe_width=stripe_width, given=given,
                    weight_accounting=weight_accounting or "per_run")


PROBLEM = Problem(
    name="tile_groups",
    summary="resource allocation trees (S/T cuts, sub-batches) for tiled accelerators (SET)",
    default_chip="edge-4x4",
    instance_types=(Instance,),
    solution_types=(Solution,),
    make_instance=make_instance,
    evaluate=evaluate,
    solution_from_dict=Solution.from_dict,
    objectives=lambda instance: OBJECTIVES,
    instance_options=("objective", "batch", "weight_accounting"),
    instance_size=lambda inst: float(len(inst.workload)),
    size_unit="layers",
)
