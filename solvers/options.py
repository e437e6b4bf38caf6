"""Solver settings handled in one place: time limit, threads, seed, gap, warm start."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from chipsched.budget import DECODE_RESERVE, Budget, Callback
from chipsched.errors import InputError

__all__ = ["DECODE_RESERVE", "SolveOptions", "WarmStart", "default_threads"]


def default_threads() -> int:
    """Worker threads when none are asked for: the machine's cores, at most 8."""
    return max(1, min(8, os.cpu_count() or 1))


@dataclass(frozen=True)
class WarmStart:
    """The warm start a method receives (``options.warm``), resolved and checked by the
    face: a solution of the method's decision that the evaluator accepted on this
    instance, its objective (the evaluator's) and where it came from ("heft (seed 0)", a
    file name, "given solution")."""

    solution: Any
    objective: float
    origin: str = ""


@dataclass(frozen=True)
class SolveOptions:
    """Options every method accepts (each uses those that apply to it).

    ``time_limit`` in seconds (``None``: no limit); ``threads`` for exact solvers
    (``None``: :func:`default_threads`); ``seed`` for every random choice;
    ``mip_gap`` the relative gap at which exact solvers may stop (0: prove optimality);
    ``warm_start`` what to start from — a solution of the decision, its ``to_dict()``, a
    ``Result``, a result file or another method's name: the face resolves it, checks it
    with the evaluator and hands the method :attr:`warm` (methods never read
    ``warm_start``); ``milp_solver`` the Pyomo backend ('highs', 'cbc', or any Pyomo
    solver name); ``progress`` a callback ``(done, total, note)`` a long run reports to
    (:meth:`report`; the CLI draws it as a progress bar — methods never draw);
    ``verbose`` shows solver logs; ``auto_warm_start``: an exact method given no warm
    start starts from the best of its decision's quick heuristics (op_placement: HEFT,
    CPOP, seed 003), when the decision names them; ``callback(best, bound)`` hears of
    every improvement a method reports and may stop the run by returning True.

    Set by the face (``chipsched.solve``) for the method it runs: ``budget``, the run's
    :class:`~chipsched.budget.Budget` (one per run, covering everything the run does;
    options built outside the face get one of ``time_limit`` seconds from their
    creation), and ``warm``, the checked :class:`WarmStart` (or ``None``).
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
    callback: Callback | None = None
    budget: Budget | None = field(default=None, compare=False, repr=False)
    warm: WarmStart | None = field(default=None, compare=False, repr=False)

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
        if self.callback is not None and not callable(self.callback):
            raise InputError("callback", f"must be a callable (best, bound) -> bool or None, "
                             f"got {self.callback!r}", "return True from it to stop the run")
        if self.budget is None:
            object.__setattr__(self, "budget", Budget(self.time_limit, callback=self.callback))

    def report(self, done: float, total: float | None = None, note: str = "") -> None:
        """Tell the progress callback (if any) how far the run is: ``done`` of ``total``
        steps (``None``: unknown), with a short ``note`` (the current stage)."""
        if self.progress is not None:
            self.progress(done, total, note)

    def solver_seconds(self) -> float | None:
        """Seconds to give a solver backend: what is left of the run's budget after
        building the model, less :data:`DECODE_RESERVE` of the limit for reading the
        solution back (at least 1 % of the limit, so the backend always gets a try).
        ``None``: no limit."""
        assert self.budget is not None
        return self.budget.solver_seconds()

    @property
    def warm_solution(self) -> Any:
        """The warm start's solution (``None`` without one)."""
        return None if self.warm is None else self.warm.solution

    @property
    def workers(self) -> int:
        return self.threads or default_threads()

    def replace(self, **changes: Any) -> SolveOptions:
        """A copy with ``changes``; a new ``time_limit`` without a new ``budget`` is a
        share of this budget (never more than what is left of it)."""
        if "time_limit" in changes and "budget" not in changes:
            t = changes["time_limit"]
            assert self.budget is not None
            changes["budget"] = (Budget(None, callback=self.callback) if t is None and
                                 not self.budget.limited else self.budget.share(seconds=t))
        return replace(self, **changes)
