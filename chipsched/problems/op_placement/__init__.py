"""Op placement (seed 003): ops of a DAG onto heterogeneous processors, with a schedule.

The problem
-----------
An **instance** is a DAG of ops in topological order (every edge goes from a lower to a
higher index), a set of processors (a processor with ``c`` cores is ``c`` identical
resources; cores of one processor share its memory, so moving data between them is
free), per-(op, processor) execution time and energy, and per-edge transfer times
between processors. A **solution** puts every op on one core of one processor and
gives it a start time; the op then runs for ``time[op, processor]``.

A schedule is **feasible** when

* every op runs on a processor that can run it (finite time) and on an existing core;
* precedence with transfers: for every edge ``i → j``,
  ``start[j] ≥ end[i] + transfer[e, proc[i], proc[j]]`` (0 on the same processor);
* exclusivity: ops on the same core do not overlap.

Objectives (all minimized; :func:`objectives_for`): ``makespan`` (default; the last
end time), ``energy`` (the sum of the ops' energies; the interconnect has no energy
figure in the shared cost model, so transfers cost time only), or ``weighted:WT,WE`` =
``WT·makespan + WE·energy``. The evaluator always also reports the **gain over the best
single processor**: the objective of the best all-on-one-processor schedule divided by
the solution's (> 1 means the placement beats every single processor).

Times are in seconds for instances built from a chip, and in the file's own time unit
(``Instance.time_unit``) for task graphs read from STG/CSV files.

:func:`evaluate` is the only place objective values are computed; the per-op times and
energies come from ``chipsched.cost.processor_time_s`` / ``processor_energy_j`` (built
from a network by :mod:`.network`, seed 003's expansion) and transfers from :func:`transfer_table`,
the vectorized form of ``chipsched.cost.transfer_time_s`` (a test checks they agree).
"""

from __future__ import annotations

from typing import Any

from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.objective import Objective
from chipsched.problem import Problem
from chipsched.workload import Workload

from .evaluate import check_schedule, evaluate
from .instance import (
    OP_CLASSES,
    Instance,
    find_cycle,
    topological_order,
    transfer_table,
)
from .network import (
    BLOCK_BYTES,
    FunctionLibrary,
    expand_scalar_ops,
    from_workload,
    fused_pairs,
    library_rows,
    tile_blocks,
)
from .objectives import objectives_for
from .schedule import (
    bottom_levels,
    identical_processor_groups,
    list_schedule,
    lower_bound,
    order_by_start,
    priority_order,
    single_processor_schedule,
)
from .solution import Solution, makespan_energy

__all__ = [
    "BLOCK_BYTES", "OP_CLASSES", "PROBLEM", "FunctionLibrary", "Instance", "Solution",
    "bottom_levels", "check_schedule", "evaluate", "expand_scalar_ops", "find_cycle",
    "from_workload", "fused_pairs", "identical_processor_groups", "library_rows",
    "list_schedule", "lower_bound", "make_instance", "makespan_energy", "objectives_for",
    "order_by_start", "priority_order", "single_processor_schedule", "tile_blocks",
    "topological_order", "transfer_table",
]


def make_instance(source: Workload | Instance, hardware: Hardware, *,
                  objective: str | Objective | None = None, batch: int | None = None,
                  library: Any = None, scalar_ops: bool | None = None,
                  block_bytes: int | None = None, static_shapes: bool | None = None,
                  fuse_loops: bool | None = None) -> Instance:
    """An op-placement instance of ``source`` (a ``Workload``, expanded with the compiler's
    scalar ops of seed 003 unless ``scalar_ops=False``) on the processors of
    ``hardware``; ``library`` is a :class:`FunctionLibrary` or the path of its CSV
    (measured costs instead of the cost model's); ``fuse_loops`` adds the scalar ops of
    the optimizer's loop fusion ([0047]). A ready instance gets ``objective`` applied."""
    net = {"batch": batch, "library": library, "scalar_ops": scalar_ops,
           "block_bytes": block_bytes, "static_shapes": static_shapes,
           "fuse_loops": fuse_loops}
    if isinstance(source, Instance):
        given = sorted(k for k, v in net.items() if v is not None)
        if given:
            raise InputError(f"op_placement option {given[0]!r}",
                             "applies to networks, not to an instance")
        return source.with_objective(objective)
    if not isinstance(source, Workload):
        raise InputError("instance", f"a {type(source).__name__} is not a network",
                         "give a Workload (chipsched.get_network)")
    lib = library
    if lib is not None and not isinstance(lib, FunctionLibrary):
        lib = FunctionLibrary.from_csv(lib)
    return from_workload(source, hardware, batch=batch or 1, library=lib, objective=objective,
                         scalar_ops=True if scalar_ops is None else bool(scalar_ops),
                         block_bytes=block_bytes or BLOCK_BYTES,
                         static_shapes=bool(static_shapes), fuse_loops=bool(fuse_loops))


PROBLEM = Problem(
    name="op_placement",
    summary="tensor and scalar ops onto CPU/GPU/NPU cores with a schedule (seed 003)",
    default_chip="soc-npu-gpu-cpu",
    instance_types=(Instance,),
    solution_types=(Solution,),
    make_instance=make_instance,
    evaluate=evaluate,
    solution_from_dict=Solution.from_dict,
    objectives=lambda instance: objectives_for(instance.time_unit),
    instance_options=("objective", "processors", "ccr", "batch", "library", "scalar_ops",
                      "block_bytes", "static_shapes", "fuse_loops"),
    instance_size=lambda inst: float(inst.n_ops),
    size_unit="ops",
)
