"""The problem definition of each decision: instance, solution, evaluator.

One module per decision (``region_split``, ``tile_groups``, ``op_placement``,
``core_assignment``), each with frozen dataclasses for the instance and the solution
and ``evaluate(instance, solution) -> (objective, metrics)`` built on the shared cost
model. This is the model layer: it imports nothing from formulations, heuristics,
solvers or instances.
"""
