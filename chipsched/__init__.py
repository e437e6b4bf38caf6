"""chipsched: exact models and heuristics for mapping DNNs onto multi-core, tiled, chiplet
and heterogeneous hardware, over one shared cost model.

    import chipsched
    w = chipsched.get_network("resnet50")
    hw = chipsched.get_chip("cloud-12x12")
    table = chipsched.CostModel(w, hw).layer_table((1, 8))
    result = chipsched.solve(decision, instance, method="...", time_limit=60)
"""

from chipsched.api import compare, make_instance, solve
from chipsched.cost import CostModel, parse_objective
from chipsched.errors import ChipschedError, InputError
from chipsched.hardware import Hardware
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network
from chipsched.result import Result, Status
from chipsched.solvers.options import SolveOptions
from chipsched.workload import Layer, OpKind, Workload, WorkloadBuilder

__version__ = "0.1.0"

__all__ = [
    "ChipschedError", "CostModel", "Hardware", "InputError", "Layer", "OpKind", "Result",
    "SolveOptions", "Status", "Workload", "WorkloadBuilder", "compare", "get_chip",
    "get_network", "make_instance", "parse_objective", "solve",
]
