"""Solver settings handled in one place: time limit, threads, seed, gap, warm start."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from chipsched.errors import InputError

#: Share of the time limit kept back from a solver backend for reading its solution.
DECODE_RESERVE = 0.03


def default_threads() -> int:
    """Worker threads when none are asked for: the machine's cores, at most 8."""
    return max(1, min(8, os.cpu_count() or 1))


@dataclass(frozen=True)
class SolveOptions:
    """Options every method accepts (each uses those that apply to it).

    ``time_limit`` in seconds (``None``: no limit); ``threads`` for exact solvers
    (``None``: :func:`default_threads`); ``seed`` for every random choice;
    ``mip_gap`` the relative gap at which exact solvers may stop (0: prove optimality);
    ``warm_start`` a solution of the same decision (an exact solver's hints and start
    values, a heuristic's first solution; the face turns a ``Result``, a result file or
    another method's name into one); ``milp_solver`` the Pyomo backend ('highs', 'cbc',
    or any Pyomo solver name); ``progress`` a callback ``(done, total, note)`` a long
    run reports to (:meth:`report`; the CLI draws it as a progress bar — methods never
    draw); ``verbose`` shows solver logs; ``auto_warm_start``: an exact method given no
    warm start starts from the best of its decision's quick heuristics (op_placement:
    HEFT, CPOP, seed 003), when the decision names them.
    """

    time_limit: float | None = None
    threads: int | None = None
    seed: int = 0
    mip_gap: float = 0.0
    warm_start: Any = None
    milp_solver: str = "highs"
    progress: Callable[[float, float | None, str], None] | None = None
    verbose: bool = False
    auto_warm_start: bool = True
    #: Set by the face (``chipsched.solve``), not by users: the ``time.perf_counter()``
    #: instant at which the method's clock reaches ``time_limit``, so that exact
    #: solvers give their backend only what model building left (:meth:`solver_seconds`).
    deadline: float | None = None

    def __post_init__(self) -> None:
        if self.time_limit is not None and not 0 < self.time_limit < float("inf"):
            raise InputError("time_limit", f"must be a positive number of seconds, got "
                             f"{self.time_limit}", "give seconds, e.g. --time-limit 60 "
                             "(leave it out for no limit)")
        if self.threads is not None and self.threads < 1:
            raise InputError("threads", f"must be >= 1, got {self.threads}",
                             "give a worker count, e.g. --threads 2")
        if not 0 <= self.mip_gap < 1:
            raise InputError("mip_gap", f"must be in [0, 1), got {self.mip_gap}",
                             "give a relative gap, e.g. 0.01 (0: prove optimality)")
        if not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise InputError("seed", f"must be an integer in [0, 2^63), got {self.seed!r}",
                             "give e.g. --seed 0")
        if self.progress is not None and not callable(self.progress):
            raise InputError("progress", f"must be a callback (done, total, note) or None, "
                             f"got {self.progress!r}", "the CLI draws progress bars itself")

    def report(self, done: float, total: float | None = None, note: str = "") -> None:
        """Tell the progress callback (if any) how far the run is: ``done`` of ``total``
        steps (``None``: unknown), with a short ``note`` (the current stage)."""
        if self.progress is not None:
            self.progress(done, total, note)

    def solver_seconds(self) -> float | None:
        """Seconds to give a solver backend: ``time_limit``, capped — when the face set a
        deadline — by what is left of the method's limit after building the model, less
        :data:`DECODE_RESERVE` of the limit for reading the solution back (at least 1 %
        of the limit, so the backend always gets a try). ``None``: no limit."""
        if self.time_limit is None:
            return None
        limit = float(self.time_limit)
        if self.deadline is None:
            return limit
        left = self.deadline - time.perf_counter() - DECODE_RESERVE * limit
        return max(0.01 * limit, min(limit, left))

    @property
    def workers(self) -> int:
        return self.threads or default_threads()

    def replace(self, **changes: Any) -> SolveOptions:
        return replace(self, **changes)
