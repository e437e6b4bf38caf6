"""Solver backends and settings: CP-SAT (:mod:`.cpsat`), Pyomo → HiGHS/CBC/… (:mod:`.milp`),
brute-force oracles (:mod:`.bruteforce`), the options every method takes (:mod:`.options`).

Import a backend from its module (``from chipsched.solvers.cpsat import solve_cpsat``):
this package imports none of OR-Tools, Pyomo or highspy, so that ``import chipsched``
and the heuristics load no solver.
"""

from chipsched.solvers.options import SolveOptions
from chipsched.solvers.outcome import ExactOutcome

__all__ = ["ExactOutcome", "SolveOptions"]
