"""One run's time budget: the face's termination object (in the spirit of pymoo's
termination objects and scipy's callbacks).

``chipsched.solve`` creates one :class:`Budget` per run, before anything of the run
happens (the automatic warm start, chain steps, model building, the solver, decoding),
and hands it to the method as ``options.budget``. Everything the run does asks the same
object what is left:

* heuristics poll :meth:`Budget.exhausted` in their loops (SA rounds, tabu iterations,
  FM passes, coarsening levels) and return their best so far — status ``time_limit``;
* model building calls :meth:`Budget.checkpoint` between blocks; past the budget it
  raises :class:`BudgetExhausted`, which the face turns into a ``time_limit`` result (the
  warm start, if there is one);
* solver backends get :meth:`Budget.solver_seconds` — what is left, less a reserve for
  reading the solution back;
* nested runs (a warm-start method, the automatic warm start, a chain step) get a
  :meth:`Budget.share` of it, so the whole run stays within the one limit;
* methods report improvements with :meth:`Budget.improved`; the budget keeps a
  best-so-far trace and calls the user's ``callback(best, bound)``, which may ask the
  run to stop by returning True.

A budget may also count its polls (``polls=N``: exhausted after N polls of
:meth:`exhausted` or :meth:`checkpoint`), a deterministic budget for tests of the
contract "the method stops at its budget and returns its best so far", which no wall
clock can test reliably.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Budget", "BudgetExhausted", "Callback", "DECODE_RESERVE"]

#: Share of the time limit kept back from a solver backend for reading its solution.
DECODE_RESERVE = 0.03

#: ``callback(best, bound)`` → True asks the run to stop.
Callback = Callable[[float | None, float | None], "bool | None"]


class BudgetExhausted(Exception):
    """Raised by :meth:`Budget.checkpoint` past the budget; ``where`` names the step
    (e.g. "building the MILP"). The face catches it: the run ends with status
    ``time_limit`` and the warm start, if it has one."""

    def __init__(self, where: str = "", reason: str = "time limit"):
        super().__init__(f"{reason} reached while {where}" if where else reason)
        self.where = where
        self.reason = reason


class Budget:
    """What is left of a run's time limit (``time_limit`` seconds from now; ``None``: no
    limit), a stop flag, an optional poll count and the best-so-far trace.

    ``clock`` is ``time.perf_counter`` unless a test gives another. A child made by
    :meth:`share` ends no later than its parent and stops with it.
    """

    def __init__(self, time_limit: float | None = None, *, polls: int | None = None,
                 callback: Callback | None = None,
                 clock: Callable[[], float] = time.perf_counter,
                 start: bool = True, _parent: Budget | None = None) -> None:
        if time_limit is not None and not (time_limit >= 0 and math.isfinite(time_limit)):
            raise ValueError(f"time_limit must be a finite number of seconds ≥ 0, got "
                             f"{time_limit!r}")
        self.clock = clock
        self.time_limit = None if time_limit is None else float(time_limit)
        self.started: float | None = None
        self.deadline: float | None = None
        if start:
            self.start()
        self.polls_left = polls
        self.callback = callback
        self._parent = _parent
        self._stopped = ""
        self._ticks = 0
        #: polls of this budget and its shares (on the root), and those made after it
        #: had said stop: a method that honours its budget makes few of the latter
        self.polls = 0
        self.polls_after_stop = 0
        #: (seconds since the start, best objective, bound): improvements reported by the
        #: method (:meth:`improved`) and the face's own points (warm start, final result)
        self.trace: list[tuple[float, float | None, float | None]] = []

    # -- the clock ---------------------------------------------------------------------

    def start(self) -> Budget:
        """Start the clock now (a budget made with ``start=False`` — e.g. by a caller that
        wants to stop the run later — starts when the face begins the run)."""
        self.started = self.clock()
        self.deadline = None if self.time_limit is None else self.started + self.time_limit
        return self

    @property
    def running(self) -> bool:
        return self.started is not None

    def elapsed(self) -> float:
        """Seconds since this budget started (0 before it starts)."""
        return 0.0 if self.started is None else self.clock() - self.started

    def remaining(self) -> float | None:
        """Seconds left (≥ 0), the parent's limit included; ``None``: no limit."""
        if self.deadline is None:
            left = self.time_limit  # not started yet: all of it
        else:
            left = max(0.0, self.deadline - self.clock())
        if self._parent is not None:
            up = self._parent.remaining()
            if up is not None:
                left = up if left is None else min(left, up)
        return left

    @property
    def limited(self) -> bool:
        """True when a clock limit applies (this budget's or a parent's)."""
        return self.remaining() is not None

    # -- polling -----------------------------------------------------------------------

    @property
    def stop_reason(self) -> str:
        """Why the budget is over ("" while it is not): time limit, a stop request (the
        callback's, or :meth:`stop`), or the poll count."""
        if self._stopped:
            return self._stopped
        if self._parent is not None:
            why = self._parent.stop_reason
            if why:
                return why
        if self.deadline is not None and self.clock() >= self.deadline:
            return "time limit"
        return ""

    def exhausted(self) -> bool:
        """True once the time limit has passed, a stop was asked for, or the poll count
        is used up. Every call counts as one poll of a counted budget (and of its
        counted parents)."""
        root = self._root()
        root.polls += 1
        if self.stop_reason:
            root.polls_after_stop += 1
        b: Budget | None = self
        while b is not None:
            if b.polls_left is not None:
                if b.polls_left <= 0:
                    b._stopped = b._stopped or "poll budget"
                else:
                    b.polls_left -= 1
            b = b._parent
        return bool(self.stop_reason)

    def checkpoint(self, where: str = "") -> None:
        """Raise :class:`BudgetExhausted` (naming ``where``) when the budget is over."""
        if self.exhausted():
            raise BudgetExhausted(where, self.stop_reason)

    def tick(self, where: str = "", every: int = 256) -> None:
        """:meth:`checkpoint` on every ``every``-th call: for loops whose single steps
        are too cheap to poll the clock each time (adding a model's rows)."""
        self._ticks += 1
        if self._ticks >= every:
            self._ticks = 0
            self.checkpoint(where)

    def stop(self, reason: str = "stopped") -> None:
        """Ask the run to stop at its next poll (children stop with it)."""
        self._stopped = self._stopped or reason

    # -- what a solver gets ------------------------------------------------------------

    def solver_seconds(self, reserve: float = DECODE_RESERVE) -> float | None:
        """Seconds to give a solver backend: what is left less ``reserve`` of the time
        limit for reading the solution back, at least 1 % of the limit (so the backend
        always gets a try); ``None``: no limit. An exhausted budget gives the minimum."""
        left = self.remaining()
        if left is None:
            return 1e-3 if self.stop_reason else None  # stopped without a clock (polls)
        limit = self._root_limit() or left
        if self.stop_reason:
            left = 0.0
        return max(0.01 * limit, min(limit, left - reserve * limit), 1e-3)

    def _root_limit(self) -> float | None:
        b: Budget | None = self
        while b is not None:
            if b.time_limit is not None:
                return b.time_limit
            b = b._parent
        return None

    # -- calls that cannot poll --------------------------------------------------------

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` bounded by the budget although it cannot poll it (a
        foreign library's call: KaHIP, METIS, scipy's QAP): with a limit, it runs in a
        forked child process that is killed when the budget is over
        (:class:`BudgetExhausted` naming ``what``); its result or exception comes back
        through a pipe. Without a limit, or where processes cannot be forked, it runs
        here."""
        left = self.remaining()
        if left is None or "fork" not in multiprocessing.get_all_start_methods():
            return fn(*args, **kwargs)
        if self.exhausted():
            raise BudgetExhausted(what, self.stop_reason)
        ctx = multiprocessing.get_context("fork")
        recv, send = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_run_and_send, args=(send, fn, args, kwargs), daemon=True)
        child.start()
        send.close()
        try:
            if not recv.poll(left):
                raise BudgetExhausted(what, self.stop_reason or "time limit")
            try:
                ok, value = recv.recv()
            except EOFError:
                child.join(1.0)
                raise RuntimeError(f"{what} died in its process (exit code "
                                   f"{child.exitcode})") from None
        finally:
            if child.is_alive():
                child.kill()
            child.join()
            recv.close()
        if not ok:
            raise value
        return value

    # -- nested runs -------------------------------------------------------------------

    def share(self, fraction: float = 1.0, seconds: float | None = None) -> Budget:
        """A child budget for a nested step: at most ``fraction`` of what is left now (and
        at most ``seconds``), never beyond this budget's end; it stops when this one
        stops, and its polls of a counted parent count there."""
        left = self.remaining()
        limit = None if left is None else max(0.0, fraction * left)
        if seconds is not None:
            limit = seconds if limit is None else min(limit, seconds)
        return Budget(limit, clock=self.clock, _parent=self)

    # -- the trace ---------------------------------------------------------------------

    def improved(self, best: float | None, bound: float | None = None) -> None:
        """Record a new best objective (and/or bound) found by the method; the root's
        callback hears of it and may ask the run to stop (by returning True)."""
        root = self._root()
        root.trace.append((root.elapsed(), None if best is None else float(best),
                           None if bound is None else float(bound)))
        if root.callback is not None and root.callback(best, bound):
            root.stop("the callback asked to stop")

    def _root(self) -> Budget:
        b = self
        while b._parent is not None:
            b = b._parent
        return b

    def __repr__(self) -> str:
        left = self.remaining()
        return (f"Budget(time_limit={self.time_limit!r}, remaining="
                f"{'∞' if left is None else f'{left:.3g} s'}, "
                f"stopped={self.stop_reason!r})")


def _run_and_send(conn: Any, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """The child side of :meth:`Budget.call`."""
    try:
        out: tuple[bool, Any] = (True, fn(*args, **kwargs))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which re-raises
        out = (False, exc)
    try:
        conn.send(out)
    except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception
        conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    conn.close()
