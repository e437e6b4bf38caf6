"""chipsched: exact models and heuristics for mapping DNNs onto multi-core, tiled, chiplet
and heterogeneous hardware, over one shared cost model.

    import chipsched
    w = chipsched.get_network("resnet50")
    hw = chipsched.get_chip("cloud-12x12")
    table = chipsched.CostModel(w, hw).layer_table((1, 8))
    inst = chipsched.make_instance("tile_groups", "resnet50", "edge-4x4", batch=8)
    result = chipsched.solve("tile_groups", inst, "sa", seed=0)

Importing the package loads no solver backend (OR-Tools, Pyomo, HiGHS): a method loads
the one it needs when it runs.
"""

from chipsched.api import compare, make_instance, solve, warm_up
from chipsched.cost import CostModel
from chipsched.errors import ChipschedError, InputError
from chipsched.hardware import Hardware
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network
from chipsched.objective import Objective, parse_objective
from chipsched.problem import Problem
from chipsched.result import Result, Status
from chipsched.solvers.options import SolveOptions
from chipsched.workload import Layer, OpKind, Workload, WorkloadBuilder

__version__ = "0.1.0"

__all__ = [
    "ChipschedError", "CostModel", "Hardware", "InputError", "Layer", "Objective", "OpKind",
    "Problem", "Result", "SolveOptions", "Status", "Workload", "WorkloadBuilder", "compare",
    "get_chip", "get_network", "make_instance", "parse_objective", "solve", "warm_up",
]
