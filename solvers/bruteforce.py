"""Brute-force oracles: enumerate a finite space, keep the best; guarded by a size limit."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from chipsched.errors import InputError

T = TypeVar("T")

#: Default largest number of candidates an oracle will enumerate.
MAX_CANDIDATES = 2_000_000
#: The message of an oracle stopped by its deadline.
STOPPED = "the enumeration stopped at the time limit: the best candidate so far, no proof"


@dataclass(frozen=True)
class Enumerated:
    best: Any
    value: float
    count: int  # candidates evaluated (feasible ones)
    ties: int  # how many candidates reach the best value
    complete: bool = True  # False: stopped at the deadline, the best so far (no proof)


def enumerate_best(candidates: Iterable[T], value: Callable[[T], float | None],
                   size: int | None = None, max_candidates: int = MAX_CANDIDATES,
                   what: str = "instance", deadline: float | None = None) -> Enumerated:
    """Minimum of ``value`` over ``candidates`` (``None`` = infeasible, skipped).

    ``size`` (the number of candidates, when known up front) is checked against
    ``max_candidates`` before anything runs, so an oracle fails fast and clearly on an
    instance too large for it. ``deadline`` (a ``time.perf_counter()`` value, e.g.
    ``SolveOptions.deadline``): checked every 128 candidates; past it the best so far
    is returned with ``complete=False``.
    """
    if size is not None and size > max_candidates:
        raise InputError(what, f"too large for brute force ({size:,} candidates > "
                         f"{max_candidates:,})", "use an exact or heuristic method")
    best, best_v, count, ties = None, float("inf"), 0, 0
    for k, cand in enumerate(candidates):
        if deadline is not None and k % 128 == 127 and time.perf_counter() > deadline:
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
