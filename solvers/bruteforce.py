"""Brute-force oracles: enumerate a finite space, keep the best; guarded by a size limit."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from chipsched.budget import Budget
from chipsched.errors import InputError

T = TypeVar("T")

#: Default largest number of candidates an oracle will enumerate.
MAX_CANDIDATES = 2_000_000
#: The message of an oracle stopped by its budget.
STOPPED = "the enumeration stopped at the time limit: the best candidate so far, no proof"


@dataclass(frozen=True)
class Enumerated:
    best: Any
    value: float
    count: int  # candidates evaluated (feasible ones)
    ties: int  # how many candidates reach the best value
    complete: bool = True  # False: stopped by the budget, the best so far (no proof)


def enumerate_best(candidates: Iterable[T], value: Callable[[T], float | None],
                   size: int | None = None, max_candidates: int = MAX_CANDIDATES,
                   what: str = "instance", budget: Budget | None = None) -> Enumerated:
    """Minimum of ``value`` over ``candidates`` (``None`` = infeasible, skipped).

    ``size`` (the number of candidates, when known up front) is checked against
    ``max_candidates`` before anything runs, so an oracle fails fast and clearly on an
    instance too large for it. ``budget`` (the run's, ``SolveOptions.budget``): polled
    every 128 candidates; once it is over the best so far is returned with
    ``complete=False``.
    """
    if size is not None and size > max_candidates:
        raise InputError(what, f"too large for brute force ({size:,} candidates > "
                         f"{max_candidates:,})", "use an exact or heuristic method")
    best, best_v, count, ties = None, float("inf"), 0, 0
    for k, cand in enumerate(candidates):
        if budget is not None and k % 128 == 127 and budget.exhausted():
            return Enumerated(best, best_v, count, ties, complete=False)
        v = value(cand)
        if v is None:
            continue
        count += 1
        if count > max_candidates:
            raise InputError(what, f"too large for brute force (> {max_candidates:,} "
                             "candidates)", "use an exact or heuristic method")
        tol = 1e-12 * max(1.0, abs(best_v)) if best_v != float("inf") else 0.0
        if v < best_v - tol:
            best, best_v, ties = cand, v, 1
        elif abs(v - best_v) <= tol:
            ties += 1
    return Enumerated(best, best_v, count, ties)
