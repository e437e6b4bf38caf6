"""Solver backends (CP-SAT, Pyomo → HiGHS/CBC/…, brute-force oracles) and the method registry."""

from chipsched.solvers.bruteforce import enumerate_best
from chipsched.solvers.cpsat import solve_cpsat
from chipsched.solvers.milp import available_milp_solvers, solve_pyomo
from chipsched.solvers.options import SolveOptions
from chipsched.solvers.outcome import ExactOutcome
from chipsched.solvers.registry import (
    DECISIONS,
    REGISTRY,
    DecisionSpec,
    Method,
    MethodOutput,
    Registry,
    register,
)

__all__ = [
    "DECISIONS", "REGISTRY", "DecisionSpec", "ExactOutcome", "Method", "MethodOutput", "Registry",
    "SolveOptions", "available_milp_solvers", "enumerate_best", "register", "solve_cpsat",
    "solve_pyomo",
]
