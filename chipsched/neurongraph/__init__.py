"""NeuronGraph: large undirected graphs with vertex sizes and edge weights, as CSR numpy arrays.

The graph of the ``core_assignment`` decision (seed 004, ``docs/sources.md``): vertices
are neurons (or groups of neurons), a vertex's *size* is its neuron count,
an edge's *weight* is the number of synapses between its two ends (the traffic it
carries per inference, in units of ``Instance.weight_bytes``).

Modules, one job each:

* :mod:`.graph` — the :class:`NeuronGraph` type (symmetric CSR; storage and the ``u < v``
  direction convention are described there), its operations and their numba kernels;
* :mod:`.workload` — :func:`from_workload`, the expansion of a
  :class:`~chipsched.workload.Workload` into neurons and receptive-field connections;
* :mod:`.generators` — the synthetic graphs :func:`layered_random` and :func:`stencil`.

Builders:

* :meth:`NeuronGraph.from_edges` — from ``(u, v, w)`` arrays (symmetrized, duplicates
  summed, self-loops dropped);
* :func:`from_workload` — expand a :class:`~chipsched.workload.Workload` into neurons and
  receptive-field connections (conv, depthwise, fc, pool, eltwise, concat), with a
  channel-grouping granularity ``channels_per_vertex``;
* :func:`layered_random` and :func:`stencil` — synthetic generators that reach 1 M+
  vertices and 100 M+ edges (built directly as CSR by numba kernels, O(nnz) memory).

Operations used by the decision: :meth:`NeuronGraph.contract` (quotient by a vertex
labelling: coarsening, groups; its row merge :func:`merge_rows` also serves the on-disk
coarsening), :func:`directed_flows` (traffic between labels in the ``u < v`` direction,
for the evaluator), :func:`multicast_flows` (the same as multicast packets: one per source
vertex, spike and destination label) and :func:`multicast_quotient` (the group graph that
places for multicast traffic), :func:`spike_weighted` (edge weights from per-vertex spike
counts), :meth:`NeuronGraph.validate` (symmetry check for graphs read from
files).
"""

from __future__ import annotations

from .generators import layered_random, layered_random_batches, stencil
from .graph import (
    NeuronGraph,
    directed_flows,
    index_dtype,
    merge_rows,
    multicast_flows,
    multicast_quotient,
    spike_weighted,
)
from .workload import from_workload

__all__ = ["NeuronGraph", "directed_flows", "from_workload", "index_dtype", "layered_random",
           "layered_random_batches", "merge_rows", "multicast_flows", "multicast_quotient",
           "spike_weighted", "stencil"]
