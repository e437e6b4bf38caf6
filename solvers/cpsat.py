"""CP-SAT backend (OR-Tools): time limit, workers, seed, hints and bound in one place."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any

from ortools.sat.python import cp_model

from chipsched.errors import SolverError
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions
from chipsched.solvers.outcome import ExactOutcome


def _to_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def solve_cpsat(model: cp_model.CpModel, options: SolveOptions,
                hints: Mapping[Any, int] | None = None,
                parameters: Mapping[str, Any] | None = None
                ) -> tuple[ExactOutcome, cp_model.CpSolver]:
    """Solve ``model`` and return the outcome and the solver (to read values from).

    ``hints`` (variable → value) become CP-SAT solution hints, the warm start; the
    returned bound is CP-SAT's ``best_objective_bound``. A run stopped by the time
    limit with a solution is ``time_limit`` (not ``feasible``), so that callers can
    tell "no proof yet" from "the method never proves".
    """
    options.budget.checkpoint("handing the model to CP-SAT")
    if hints:
        model.clear_hints()
        for var, value in hints.items():
            model.add_hint(var, int(value))
    solver = cp_model.CpSolver()
    p = solver.parameters
    seconds = options.solver_seconds()  # what the run's budget has left for the search
    if seconds is not None:
        p.max_time_in_seconds = seconds
    p.num_workers = options.workers
    p.random_seed = int(options.seed) % (2**31 - 1)  # CP-SAT takes a 32-bit seed
    p.relative_gap_limit = float(options.mip_gap)
    p.log_search_progress = bool(options.verbose)
    if options.verbose:  # the log goes to stderr: stdout may carry --json or a table
        p.log_to_stdout = False
        solver.log_callback = _to_stderr
    for key, value in (parameters or {}).items():
        setattr(p, key, value)
    t0 = time.perf_counter()
    code = solver.solve(model)
    wall = time.perf_counter() - t0
    has_obj = model.has_objective()
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif code == cp_model.FEASIBLE:
        status = Status.TIME_LIMIT if seconds is not None else Status.FEASIBLE
    elif code == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    elif code == cp_model.UNKNOWN:
        status = Status.TIME_LIMIT
    else:  # MODEL_INVALID
        raise SolverError(f"CP-SAT rejected the model: {model.validate() or 'invalid'}")
    has_solution = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    objective = solver.objective_value if has_solution and has_obj else None
    bound = solver.best_objective_bound if has_obj and code != cp_model.INFEASIBLE else None
    if status is Status.OPTIMAL and has_obj:
        if options.mip_gap > 0 and abs(objective - bound) > 1e-9 * max(1.0, abs(objective)):
            # CP-SAT says OPTIMAL when it stops at relative_gap_limit: keep its bound, and
            # the run is a solution with a gap, not a proof
            status = Status.FEASIBLE
        else:
            bound = objective
    stats = {"branches": solver.num_branches, "conflicts": solver.num_conflicts,
             "workers": options.workers, "response": solver.response_stats().splitlines()[0]
             if solver.response_stats() else ""}
    return ExactOutcome("cpsat", status, objective, bound, wall, has_solution, stats), solver
