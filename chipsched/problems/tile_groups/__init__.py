"""tile_groups (seed 002, SET): resource allocation trees on tiled accelerators.

The problem layer: the tree (:mod:`.tree` — nodes, text form, structural checks), the
mesh geometry (:mod:`.geometry`) and the analyzer/evaluator (:mod:`.model`). See
``docs/tile_groups.md`` for every model choice.

    from chipsched.problems.tile_groups import Instance, Solution, evaluate
    inst = Instance(get_network("tiny"), get_chip("edge-4x4"), batch=4)
    sol = Solution.parse(inst, "T(1)[ S(2)[ conv1 conv2 ] T(2)[ conv3a conv3b add3 pool fc ] ]")
    objective, metrics = evaluate(inst, sol)
"""

from chipsched.problems.tile_groups.model import (
    Analysis,
    Analyzer,
    Infeasible,
    Instance,
    Job,
    SegmentCost,
    Solution,
    Totals,
    analyze,
    as_tree,
    evaluate,
    ls_tree,
    metrics,
    optimal_allocation,
    pipeline_finish,
)
from chipsched.problems.tile_groups.tree import (
    CUT_KINDS,
    LEAF,
    SCUT,
    TCUT,
    Node,
    check_structure,
    cut,
    get,
    iter_nodes,
    leaf,
    leaf_paths,
    normalize,
    parse_tree,
    path_str,
    replace_at,
    short_text,
    to_text,
)

__all__ = [
    "CUT_KINDS", "LEAF", "SCUT", "TCUT", "Analysis", "Analyzer", "Infeasible", "Instance", "Job",
    "Node", "SegmentCost", "Solution", "Totals", "analyze", "as_tree", "check_structure", "cut",
    "evaluate", "get", "iter_nodes", "leaf", "leaf_paths", "ls_tree", "metrics", "normalize",
    "optimal_allocation", "parse_tree", "path_str", "pipeline_finish", "replace_at",
    "short_text", "to_text",
]
