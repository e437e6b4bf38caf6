"""Seed-000 graph operations: computation graph, chain reduction, pipeline groups, group graph S.

Source: CN115421897A (chiplet-oriented DNN pipeline-parallel scheduling), claims 2–4;
seed 000 (``docs/sources.md``), steps 1–3.

1. :func:`computation_graph` — G = (V, E): a node per operator with [in-degree,
   out-degree, compute]; an edge per data dependency with weight = the data volume of
   the source operator's output.
2. :func:`reduce_chains` — for every node vi with in-degree = out-degree = 1 whose
   successor vj also has in-degree = out-degree = 1, merge vi and vj (compute summed);
   repeat until nothing merges → G'.
3. :func:`pipeline_groups` and :func:`group_graph` — operators of G' at the same
   depth with no dependency between them form one pipeline group; of several edges
   from one node to different nodes of the same group keep only the first; then
   merge all edges between two groups into one edge whose weight is the sum → S.

Depth is the longest-path distance from a source (the ASAP level). With that
definition two operators at the same depth never depend on each other, so the
document's "no data dependency between them" holds by construction (a test checks
it); a shortest-path depth would need the extra split and is not offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chipsched.workload import Workload


@dataclass(frozen=True)
class OpGraph:
    """A weighted DAG of operator nodes (G or G' of seed 000).

    ``members[i]`` lists the workload layers merged into node i (in execution
    order); ``edges`` are ``(src, dst, weight)`` with weight in bytes; nodes are in a
    topological order (every edge has src < dst).
    """

    compute: tuple[float, ...]
    members: tuple[tuple[int, ...], ...]
    edges: tuple[tuple[int, int, float], ...]

    def __len__(self) -> int:
        return len(self.compute)

    @property
    def in_degree(self) -> tuple[int, ...]:
        d = [0] * len(self)
        for _, v, _ in self.edges:
            d[v] += 1
        return tuple(d)

    @property
    def out_degree(self) -> tuple[int, ...]:
        d = [0] * len(self)
        for u, _, _ in self.edges:
            d[u] += 1
        return tuple(d)

    def succs(self) -> list[list[int]]:
        s: list[list[int]] = [[] for _ in range(len(self))]
        for u, v, _ in self.edges:
            s[u].append(v)
        return s


@dataclass(frozen=True)
class GroupGraph:
    """The pipeline-group graph S = (P, E_S) of seed 000.

    ``groups[p]`` are the G' nodes of group p, ``layers[p]`` the workload layers they
    cover; ``compute[p]`` is the group's summed compute; ``edges`` are
    ``(p, q, weight)`` after the reduction rules; ``depth[p] == p`` (groups are
    numbered by depth).
    """

    graph: OpGraph
    groups: tuple[tuple[int, ...], ...]
    layers: tuple[tuple[int, ...], ...]
    compute: tuple[float, ...]
    edges: tuple[tuple[int, int, float], ...]

    def __len__(self) -> int:
        return len(self.groups)

    @property
    def data_volume(self) -> float:
        """d of seed 000, step 5: the sum of the edge weights of S."""
        return float(sum(w for _, _, w in self.edges))


def computation_graph(workload: Workload) -> OpGraph:
    """G of seed 000: one node per layer, compute = MACs + non-MAC ops (``Layer.work``),
    edge weight = bytes of the tensor on the edge (the producer's output)."""
    compute = tuple(float(layer.work) for layer in workload.layers)
    members = tuple((i,) for i in range(len(workload)))
    edges = tuple((s, d, float(e * workload.precision_bytes)) for s, d, e in workload.edges)
    return OpGraph(compute, members, edges)


def reduce_chains(graph: OpGraph) -> OpGraph:
    """G → G': merge runs of nodes with in-degree = out-degree = 1 (seed 000, step 2).

    A node vi with in = out = 1 is merged with its successor vj when vj also has
    in = out = 1; repeating this until nothing merges collapses every maximal run of
    such nodes into one node whose compute is the run's sum. The edge into the run
    and the edge out of it are kept; edges inside the run disappear.
    """
    n = len(graph)
    indeg, outdeg = graph.in_degree, graph.out_degree
    succ = graph.succs()
    simple = [indeg[i] == 1 and outdeg[i] == 1 for i in range(n)]
    # head[i]: the first node of the run i belongs to (i itself if it starts a run)
    head = list(range(n))
    for i in range(n):  # topological order: a run's predecessor is visited first
        if simple[i]:
            nxt = succ[i][0]
            if simple[nxt]:
                head[nxt] = head[i]
    heads = sorted(set(head))
    new_id = {h: k for k, h in enumerate(heads)}
    compute = [0.0] * len(heads)
    members: list[list[int]] = [[] for _ in heads]
    for i in range(n):
        k = new_id[head[i]]
        compute[k] += graph.compute[i]
        members[k].extend(graph.members[i])
    edges = []
    for u, v, w in graph.edges:
        a, b = new_id[head[u]], new_id[head[v]]
        if a != b:
            edges.append((a, b, w))
    # Node ids follow the heads' topological order, so edges still go forward.
    return OpGraph(tuple(compute), tuple(tuple(m) for m in members), tuple(sorted(edges)))


def node_depths(graph: OpGraph) -> list[int]:
    """Longest-path distance of every node from a source (sources have depth 0)."""
    depth = [0] * len(graph)
    for u, v, _ in sorted(graph.edges):  # sorted by src: src depths are final when used
        depth[v] = max(depth[v], depth[u] + 1)
    return depth


def pipeline_groups(graph: OpGraph) -> list[list[int]]:
    """Partition the nodes of G' into pipeline groups, one per depth level (seed 000, step 3)."""
    depth = node_depths(graph)
    groups: list[list[int]] = [[] for _ in range(max(depth) + 1)]
    for i, d in enumerate(depth):
        groups[d].append(i)
    return groups


def group_graph(graph: OpGraph, groups: Sequence[Sequence[int]] | None = None) -> GroupGraph:
    """Build S from G' and its pipeline groups, applying the edge-reduction rules.

    Rule 3.3.1: of several edges that leave the same node for different nodes of the
    same group, only the first (lowest destination id) is kept — the tensor is sent
    to a group once. Rule 3.3.3: all remaining edges between two groups are merged
    into one whose weight is their sum.
    """
    if groups is None:
        groups = pipeline_groups(graph)
    gid = {}
    for p, g in enumerate(groups):
        for v in g:
            gid[v] = p
    kept: dict[tuple[int, int], float] = {}
    sent: set[tuple[int, int]] = set()  # (source node, destination group)
    for u, v, w in sorted(graph.edges):
        key = (u, gid[v])
        if key in sent:
            continue
        sent.add(key)
        pq = (gid[u], gid[v])
        kept[pq] = kept.get(pq, 0.0) + w
    layers = tuple(tuple(sorted(x for v in g for x in graph.members[v])) for g in groups)
    compute = tuple(float(sum(graph.compute[v] for v in g)) for g in groups)
    edges = tuple(sorted((p, q, w) for (p, q), w in kept.items()))
    return GroupGraph(graph, tuple(tuple(g) for g in groups), layers, compute, edges)


def seed000_group_graph(workload: Workload) -> GroupGraph:
    """Steps 1–3 of seed 000 in one call: G → G' → pipeline groups → S."""
    return group_graph(reduce_chains(computation_graph(workload)))
