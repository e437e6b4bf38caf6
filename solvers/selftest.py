"""One tiny model written for every backend, to check they agree in one process.

Identical-machine load balancing (P‖Cmax): put n jobs with integer durations on k
identical units, minimizing the largest load. ``chipsched demo`` and the tests solve
it with CP-SAT, the Pyomo MILP (HiGHS and CBC) and brute force; the durations come
from the shared cost model (cycles of layers on one tile).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pyomo.environ as pyo
from ortools.sat.python import cp_model

from chipsched.solvers.bruteforce import enumerate_best
from chipsched.solvers.cpsat import solve_cpsat
from chipsched.solvers.milp import solve_pyomo
from chipsched.solvers.options import SolveOptions
from chipsched.solvers.outcome import ExactOutcome


def makespan(durations: Sequence[int], assignment: Sequence[int], k: int) -> int:
    loads = [0] * k
    for d, a in zip(durations, assignment, strict=True):
        loads[a] += d
    return max(loads)


def balance_cpsat(durations: Sequence[int], k: int, options: SolveOptions
                  ) -> tuple[ExactOutcome, list[int]]:
    m = cp_model.CpModel()
    n = len(durations)
    x = [[m.new_bool_var(f"x{i}_{u}") for u in range(k)] for i in range(n)]
    cmax = m.new_int_var(0, sum(durations), "cmax")
    for i in range(n):
        m.add_exactly_one(x[i])
    for u in range(k):
        m.add(sum(durations[i] * x[i][u] for i in range(n)) <= cmax)
    m.add(x[0][0] == 1)  # symmetry: job 0 on unit 0
    m.minimize(cmax)
    out, solver = solve_cpsat(m, options)
    assign = [next(u for u in range(k) if solver.value(x[i][u])) for i in range(n)] \
        if out.has_solution else []
    return out, assign


def balance_pyomo(durations: Sequence[int], k: int, options: SolveOptions,
                  solver: str = "highs") -> tuple[ExactOutcome, list[int]]:
    n = len(durations)
    M = pyo.ConcreteModel()
    M.x = pyo.Var(range(n), range(k), domain=pyo.Binary)
    M.cmax = pyo.Var(domain=pyo.NonNegativeReals)
    M.one = pyo.Constraint(range(n), rule=lambda M, i: sum(M.x[i, u] for u in range(k)) == 1)
    M.unit_load = pyo.Constraint(range(k), rule=lambda M, u: sum(
        durations[i] * M.x[i, u] for i in range(n)) <= M.cmax)
    M.sym = pyo.Constraint(expr=M.x[0, 0] == 1)
    M.obj = pyo.Objective(expr=M.cmax, sense=pyo.minimize)
    out = solve_pyomo(M, options, solver)
    assign = [max(range(k), key=lambda u: pyo.value(M.x[i, u])) for i in range(n)] \
        if out.has_solution else []
    return out, assign


def balance_bruteforce(durations: Sequence[int], k: int) -> tuple[int, list[int]]:
    n = len(durations)
    res = enumerate_best((a for a in itertools.product(range(k), repeat=n)),
                         lambda a: makespan(durations, a, k), size=k ** n)
    return int(res.value), list(res.best)
