"""The face's time budget (chipsched.budget): the clock, shares, polls, stops, the trace,
calls that cannot poll — and the face's use of it: one budget per run, warm starts on
a share of it, the rule "never report worse than the start" in one place."""

from __future__ import annotations

import time

import pytest

from chipsched.api import ConsistencyError, solve
from chipsched.budget import Budget, BudgetExhausted
from chipsched.method import MethodOutput, method
from chipsched.registry import Decision, Registry
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions, WarmStart

from . import toy


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_clock_and_what_is_left():
    c = Clock()
    b = Budget(10, clock=c)
    assert b.remaining() == 10 and b.elapsed() == 0 and not b.exhausted()
    c.t = 4
    assert b.remaining() == 6 and b.elapsed() == 4
    c.t = 11
    assert b.remaining() == 0 and b.exhausted() and b.stop_reason == "time limit"
    with pytest.raises(BudgetExhausted, match="time limit reached while building"):
        b.checkpoint("building")
    free = Budget(None, clock=c)
    assert free.remaining() is None and not free.exhausted() and free.solver_seconds() is None


def test_a_budget_made_unstarted_starts_with_the_run():
    c = Clock()
    b = Budget(5, clock=c, start=False)
    c.t = 100
    assert not b.running and b.remaining() == 5 and b.elapsed() == 0
    b.start()
    c.t = 103
    assert b.remaining() == 2


def test_shares_end_no_later_than_their_parent_and_stop_with_it():
    c = Clock()
    b = Budget(10, clock=c)
    half = b.share(0.5)
    assert half.remaining() == 5 and half.time_limit == 5
    c.t = 6
    assert half.exhausted() and not b.exhausted()
    c.t = 8
    late = b.share(seconds=5)  # 2 s left: a share never outlasts its parent
    assert late.remaining() == 2
    b.stop("stopped by the user")
    assert late.exhausted() and late.stop_reason == "stopped by the user"
    unlimited = Budget(None, clock=c).share(seconds=3)
    assert unlimited.remaining() == 3


def test_a_poll_budget_is_deterministic_and_counts_the_polls_of_its_shares():
    b = Budget(polls=3)
    child = b.share()
    assert [child.exhausted() for _ in range(5)] == [False, False, False, True, True]
    assert b.stop_reason == "poll budget" and b.polls == 5 and b.polls_after_stop == 1
    with pytest.raises(BudgetExhausted, match="poll budget"):
        Budget(polls=0).checkpoint("x")
    ticks = Budget(polls=1)
    for _ in range(2 * 4 - 1):
        ticks.tick("rows", every=4)  # a poll every 4th tick: 1 poll, allowed
    with pytest.raises(BudgetExhausted):
        ticks.tick("rows", every=4)


def test_solver_seconds_keep_a_reserve_and_a_minimum():
    c = Clock()
    b = Budget(100, clock=c)
    assert b.solver_seconds() == pytest.approx(97)
    c.t = 99.5
    assert b.solver_seconds() == pytest.approx(1.0)  # at least 1 % of the limit
    assert Budget(polls=0).solver_seconds() is None
    stopped = Budget(polls=0)
    stopped.exhausted()
    assert stopped.solver_seconds() == pytest.approx(1e-3)


def test_improvements_make_a_trace_and_the_callback_may_stop_the_run():
    seen = []

    def callback(best, bound):
        seen.append(best)
        return best is not None and best < 5

    b = Budget(None, callback=callback)
    child = b.share()
    child.improved(9.0)
    assert not b.exhausted()
    child.improved(4.0, bound=1.0)
    assert seen == [9.0, 4.0] and b.exhausted() and child.exhausted()
    assert [p[1:] for p in b.trace] == [(9.0, None), (4.0, 1.0)]
    assert b.stop_reason == "the callback asked to stop"


def _slow(x: int) -> int:
    time.sleep(x)
    return x


def _fail() -> None:
    raise ValueError("bad input inside")


def test_a_call_that_cannot_poll_is_killed_at_the_end_of_the_budget():
    b = Budget(0.5)
    t0 = time.perf_counter()
    with pytest.raises(BudgetExhausted, match="running the sleeper"):
        b.call("running the sleeper", _slow, 30)
    assert time.perf_counter() - t0 < 10
    assert Budget(20).call("adding", lambda a, b: a + b, 2, b=3) == 5
    with pytest.raises(ValueError, match="bad input inside"):
        Budget(20).call("failing", _fail)
    assert Budget(None).call("unlimited, in-process", _slow, 0) == 0
    with pytest.raises(BudgetExhausted):
        Budget(polls=0).share(seconds=5).call("never started", _slow, 0)


def test_options_made_outside_the_face_get_a_budget_and_a_narrower_limit_is_a_share():
    c = Clock()
    opts = SolveOptions(time_limit=10, budget=Budget(10, clock=c))
    c.t = 7
    narrower = opts.replace(time_limit=5)
    assert narrower.budget.remaining() == pytest.approx(3)
    assert narrower.replace(seed=3).budget is narrower.budget
    assert SolveOptions(time_limit=3).budget.time_limit == 3


# ---------------------------------------------------------------------------------------
# the face: one budget per run, the warm-start rule


def _registry(*extra) -> Registry:
    base = toy.registry().decision("toy")
    methods = dict(base.methods)
    for f in extra:
        m = f.__chipsched_method__
        methods[m.name] = m
    return Registry([Decision(base.problem, methods, base.load_instance)])


@method("toy", "claims", "exact", "proves index 3 optimal (a bug)", warm_start=True)
def _claims(inst, options):
    return MethodOutput(Status.OPTIMAL, 3, float(inst[3]), float(inst[3]))


@method("toy", "stops", "exact", "stops without a solution, with a bound", warm_start=True)
def _stops(inst, options):
    return MethodOutput(Status.TIME_LIMIT, None, bound=2.0)


@method("toy", "own-start", "heuristic", "ends on index 3, started from index 1",
        warm_start=True)
def _own_start(inst, options):
    return MethodOutput(Status.FEASIBLE, 3, float(inst[3]), incumbent=1)


@method("toy", "builds", "exact", "polls its budget while building", warm_start=True)
def _builds(inst, options):
    for _ in range(100):
        options.budget.checkpoint("building the toy model")
    return MethodOutput(Status.OPTIMAL, 1, float(inst[1]), float(inst[1]))


INST = toy.Toy((7.0, 3.0, 5.0, 9.0))


def test_the_face_keeps_the_better_of_the_method_the_warm_start_and_its_own_start():
    reg = _registry(_claims, _stops, _own_start, _builds)
    r = solve("toy", INST, "stops", registry_=reg, warm_start=2, time_limit=5)
    assert r.status is Status.TIME_LIMIT and r.solution == 2 and r.objective == 5.0
    assert r.bound == 2.0 and r.metrics["solver"]["returned"] == "warm start"
    r = solve("toy", INST, "own-start", registry_=reg)
    assert r.solution == 1 and r.objective == 3.0 and r.status is Status.FEASIBLE
    assert r.metrics["solver"]["returned"] == "its start" and "ended above it" in r.message
    # an optimum worse than a feasible warm start is a bug, never hidden
    with pytest.raises(ConsistencyError, match="optimal"):
        solve("toy", INST, "claims", registry_=reg, warm_start=1)
    # a model that runs out of budget while building: time_limit, the warm start
    r = solve("toy", INST, "builds", registry_=reg, warm_start=2, budget=Budget(polls=10))
    assert r.status is Status.TIME_LIMIT and r.solution == 2
    assert "poll budget reached while building the toy model" in r.message
    r = solve("toy", INST, "builds", registry_=reg, budget=Budget(polls=10))
    assert r.status is Status.TIME_LIMIT and r.solution is None


def test_a_warm_start_the_evaluator_refuses_is_bad_input():
    from chipsched.errors import InputError

    with pytest.raises(InputError, match="warm start: is not a solution of toy"):
        solve("toy", INST, "first", registry_=toy.registry(), warm_start=17)


def test_a_named_warm_start_runs_on_a_share_of_the_budget():
    reg = toy.registry()
    b = Budget(polls=1000)
    r = solve("toy", INST, "first", registry_=reg, warm_start="exact", budget=b)
    assert r.objective == 3.0 and r.metrics["solver"]["warm_start_from"] == "exact (seed 0)"
    assert [p[1] for p in r.metrics["solver"]["trace"]][:1] == [3.0]  # the warm start
    warm = WarmStart(2, 5.0, "by hand")
    r = solve("toy", INST, "first", registry_=reg, warm_start=warm)
    assert r.solution == 2 and r.metrics["solver"]["warm_start_from"] == "by hand"


def test_the_first_ctrl_c_stops_the_run_the_second_aborts():
    import os
    import signal

    from chipsched.cli import _stop_on_interrupt

    outer = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in the CLI
    try:
        b = Budget(None)
        with _stop_on_interrupt(b):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs between bytecodes
            assert b.exhausted() and b.stop_reason == "interrupted (Ctrl-C)"
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(1)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, outer)
