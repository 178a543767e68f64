"""A summary narrowed to one namespace (``ns=``), one node (``node=``), or both.

The whole summary is built first and then filtered here, so a filtered answer can still say
what the cluster is (the overview, the GPU models and the outlook stay whole) and keeps the
whole summary for what only it knows (the namespace ranking that gives charts their colours).

What a filter narrows:

* the rows: the GPUs, nodes and pods in the filter; a node's GPUs include its idle ones;
* its shares (``core.model.Focus``): for a namespace, its part of each GPU and node it uses;
  for a node, every namespace's totals on that node;
* runtime and real usage: the containers and pods in the filter, and the GPUs they run on.

A name that is not in the metrics is answered with the three closest names (``difflib``), never
a list of every node.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from core.errors import InputError
from core.model import (
    Focus,
    GpuShare,
    GpuSummary,
    NamespaceShare,
    NodeShare,
    NodeSummary,
    PodShare,
    RuntimeSection,
    Summary,
    Workload,
)

SUGGESTIONS = 3
# Up to this many names are all listed when none is close to the one asked for.
LIST_ALL_UP_TO = 8
_DIGITS = re.compile(r"[0-9]++")


def _same_number_key(name: str) -> str:
    """``gpu-node-051`` and ``gpu-node-51`` read as one name: numbers without leading zeros."""
    return _DIGITS.sub(lambda m: str(int(m.group())), name.lower())


def closest_names(
    name: str, known: Iterable[str], n: int = SUGGESTIONS, cutoff: float = 0.6
) -> list[str]:
    """The (at most ``n``) names of ``known`` closest to ``name``, closest first.

    Names are compared by ``difflib``'s ratio with case and leading zeros ignored (so
    ``gpu-node-51`` finds ``gpu-node-051`` first), then as written, then alphabetically;
    those below ``cutoff`` are never suggested.
    """
    import difflib  # only for a name that is not in the metrics: most summaries never ask

    key = _same_number_key(name)
    matcher = difflib.SequenceMatcher(b=key)
    scored: list[tuple[float, float, str]] = []
    for candidate in set(known):
        if candidate == name:
            continue
        matcher.set_seq1(_same_number_key(candidate))
        if matcher.real_quick_ratio() < cutoff or matcher.quick_ratio() < cutoff:
            continue
        ratio = matcher.ratio()
        if ratio >= cutoff:
            as_written = difflib.SequenceMatcher(None, candidate.lower(), name.lower()).ratio()
            scored.append((-ratio, -as_written, candidate))
    return [candidate for _, _, candidate in sorted(scored)[:n]]


def _or_list(names: Sequence[str]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + f" or {names[-1]}"


def not_found_message(
    kind: str, name: str, known: Sequence[str], where: str, *, ranked: bool = False
) -> str:
    """``No node named 'x' in these metrics. Did you mean a, b or c?``, or what is there when
    no name is close: all of them when few, else the first three of ``known`` when it is
    ``ranked`` (largest first), else the range the names run over."""
    lead = f"No {kind} named '{name}' {where}."
    if not known:
        return f"{lead} These metrics name no {kind}."
    close = closest_names(name, known)
    if close:
        return f"{lead} Did you mean {_or_list(close)}?"
    if len(known) <= LIST_ALL_UP_TO:
        return f"{lead} The {kind}s here: {', '.join(sorted(known))}."
    if ranked:
        return (
            f"{lead} No {kind} here is named like it; the largest of the {len(known):,}: "
            f"{', '.join(known[:SUGGESTIONS])}."
        )
    ordered = sorted(known)
    return (
        f"{lead} No {kind} here is named like it; the {len(ordered):,} {kind}s run from "
        f"{ordered[0]} to {ordered[-1]}."
    )


def known_namespaces(summary: Summary) -> list[str]:
    """Every namespace the metrics name, the largest allocation first: allocations and
    quotas, then those only runtime or real usage name."""
    ranked = sorted(summary.namespaces, key=lambda ns: (-ns.cores, -ns.mem_mib, ns.namespace))
    names = dict.fromkeys(ns.namespace for ns in ranked)
    names.update(dict.fromkeys(sorted({w.namespace for w in summary.workloads})))
    if summary.runtime is not None:
        names.update(dict.fromkeys(sorted({c.namespace for c in summary.runtime.containers})))
    names.update(dict.fromkeys(sorted({u.namespace for u in summary.real_usage or ()})))
    return list(names)


def known_nodes(summary: Summary) -> list[str]:
    """Every node the metrics name: the scheduler's and the vGPU monitors'."""
    names = {n.node for n in summary.nodes}
    if summary.runtime is not None:
        names.update(h.node for h in summary.runtime.host_gpus)
    return sorted(names)


@dataclass(slots=True)
class _Tally:
    """What the workloads added so far hold (filled in as they are read)."""

    cores: float = 0.0
    mem_mib: float = 0.0
    pods: set[tuple[str, str]] = field(default_factory=set)
    gpus: set[tuple[str, str]] = field(default_factory=set)

    def add(self, w: Workload) -> None:
        self.cores += w.cores
        self.mem_mib += w.mem_mib
        self.pods.add((w.namespace, w.pod))
        self.gpus.add((w.node, w.device_uuid))


def _pods(workloads: Sequence[Workload], index: dict[tuple[str, str], int]) -> list[PodShare]:
    grouped: dict[tuple[str, str], list[Workload]] = defaultdict(list)
    for w in workloads:
        grouped[(w.namespace, w.pod)].append(w)
    pods = [
        PodShare(
            namespace,
            pod,
            sum(w.cores for w in rows),
            sum(w.mem_mib for w in rows),
            tuple(sorted({(w.node, index.get((w.node, w.device_uuid), -1)) for w in rows})),
            sum(1 for w in rows if w.whole_gpu),
        )
        for (namespace, pod), rows in grouped.items()
    ]
    pods.sort(key=lambda p: (-p.cores, -p.mem_mib, p.namespace, p.pod))
    return pods


def _gpu_shares(
    gpus: Sequence[GpuSummary], workloads: Sequence[Workload], by_share: bool
) -> list[GpuShare]:
    tallies: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    for w in workloads:
        tallies[(w.node, w.device_uuid)].add(w)
    shares = []
    for g in gpus:
        tally = tallies.get((g.node, g.device_uuid), _Tally())
        shares.append(GpuShare(g, tally.cores, tally.mem_mib, len(tally.pods)))
    if by_share:
        shares.sort(key=lambda s: (-s.cores, -s.mem_mib, s.gpu.node, s.gpu.device_index))
    else:
        shares.sort(key=lambda s: (s.gpu.node, s.gpu.device_index))
    return shares


def _node_shares(nodes: Sequence[NodeSummary], workloads: Sequence[Workload]) -> list[NodeShare]:
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    for w in workloads:
        tallies[w.node].add(w)
    shares = []
    for n in nodes:
        tally = tallies.get(n.node, _Tally())
        shares.append(NodeShare(n, len(tally.gpus), tally.cores, tally.mem_mib, len(tally.pods)))
    shares.sort(key=lambda s: (-s.cores, -s.mem_mib, s.node.node))
    return shares


def _namespace_shares(
    workloads: Sequence[Workload], gpus: Sequence[GpuSummary]
) -> list[NamespaceShare]:
    core_limit = sum(g.core_limit for g in gpus)
    mem_limit = sum(g.mem_limit_mib for g in gpus)
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    for w in workloads:
        tallies[w.namespace].add(w)
    shares = [
        NamespaceShare(
            namespace,
            t.cores,
            t.mem_mib,
            len(t.gpus),
            len(t.pods),
            t.cores / core_limit * 100.0 if core_limit else 0.0,
            t.mem_mib / mem_limit * 100.0 if mem_limit else 0.0,
        )
        for namespace, t in tallies.items()
    ]
    shares.sort(key=lambda s: (-s.cores, -s.mem_mib, s.namespace))
    return shares


def _check_names(whole: Summary, namespace: str | None, node: str | None) -> None:
    """``InputError`` with the closest names when a filter names nothing in the metrics."""
    if node is not None:
        nodes = known_nodes(whole)
        if node not in nodes:
            raise InputError(not_found_message("node", node, nodes, "in these metrics"))
    if namespace is None:
        return
    namespaces = known_namespaces(whole)
    if namespace not in namespaces:
        raise InputError(
            not_found_message(
                "namespace", namespace, namespaces, "holds GPUs in these metrics", ranked=True
            )
        )
    if node is not None:
        there = {w.namespace for w in whole.workloads if w.node == node}
        if whole.runtime is not None:
            on_node = {h.device_uuid for h in whole.runtime.host_gpus if h.node == node}
            there.update(c.namespace for c in whole.runtime.containers if c.device_uuid in on_node)
        if namespace not in there:
            listed = ", ".join(sorted(there)) or "none"
            raise InputError(
                f"Namespace '{namespace}' holds no GPU on node {node}. Namespaces there: "
                f"{listed}. Ask for ns={namespace} alone to see where it runs."
            )


def _runtime(
    runtime: RuntimeSection | None,
    namespace: str | None,
    node: str | None,
    gpu_uuids: set[str],
) -> RuntimeSection | None:
    """The runtime rows in the filter: its containers, and the host GPUs of its GPUs, of the
    node, or that its containers run on."""
    if runtime is None:
        return None
    hosts = runtime.host_gpus
    if node is not None:
        hosts = tuple(h for h in hosts if h.node == node)
    on_hosts = {h.device_uuid for h in hosts} | gpu_uuids
    containers = tuple(
        c
        for c in runtime.containers
        if (namespace is None or c.namespace == namespace)
        and (node is None or c.device_uuid in on_hosts)
    )
    if namespace is not None:
        used = gpu_uuids | {c.device_uuid for c in containers}
        hosts = tuple(h for h in hosts if h.device_uuid in used)
    missing, partial = runtime.missing_monitors, runtime.partial_collections
    if node is not None:
        missing = tuple(m for m in missing if m.split(":", 1)[0] == node)
        partial = tuple(p for p in partial if p == node)
    return RuntimeSection(hosts, containers, missing, partial)


def _scope_note(filters: Sequence[tuple[str, str]]) -> str:
    named = " and ".join(f"{key} {value}" for key, value in filters)
    return (
        f"Filtered to {named}: its pods, GPUs and nodes (with its share of each), runtime and "
        "real usage; the overview, the GPU models, the capacity outlook, the findings and the "
        "checks cover the whole cluster."
    )


def _rows(
    whole: Summary, namespace: str | None, node: str | None
) -> tuple[list[GpuSummary], list[NodeSummary], list[Workload]]:
    """The GPUs, nodes and allocations in the filter: all of a node's GPUs (idle ones too);
    the GPUs and nodes a namespace's pods hold a part of."""
    gpus = list(whole.gpus)
    nodes = list(whole.nodes)
    workloads = list(whole.workloads)
    if node is not None:
        gpus = [g for g in gpus if g.node == node]
        nodes = [n for n in nodes if n.node == node]
        workloads = [w for w in workloads if w.node == node]
    if namespace is not None:
        workloads = [w for w in workloads if w.namespace == namespace]
        touched = {(w.node, w.device_uuid) for w in workloads}
        gpus = [g for g in gpus if (g.node, g.device_uuid) in touched]
        node_names = {g.node for g in gpus}
        nodes = [n for n in nodes if n.node in node_names]
    return gpus, nodes, workloads


def filter_summary(whole: Summary, *, namespace: str | None, node: str | None) -> Summary:
    """``whole`` narrowed to ``namespace`` and/or ``node``; ``whole`` itself without either.

    Raises ``InputError`` naming the closest names when the metrics have no such namespace
    or node.
    """
    if namespace is None and node is None:
        return whole
    _check_names(whole, namespace, node)
    gpus, nodes, workloads = _rows(whole, namespace, node)
    in_filter = {w.namespace for w in workloads} | ({namespace} if namespace else set())
    namespaces = [ns for ns in whole.namespaces if ns.namespace in in_filter]
    pods = {(w.namespace, w.pod) for w in workloads}

    def kept(ns: str, pod: str) -> bool:
        return (namespace is None or ns == namespace) and (node is None or (ns, pod) in pods)

    runtime = _runtime(whole.runtime, namespace, node, {g.device_uuid for g in gpus})
    real_usage = whole.real_usage
    if real_usage is not None:
        real_usage = tuple(u for u in real_usage if kept(u.namespace, u.pod))
    idle = whole.idle_allocations
    if idle is not None:
        idle = tuple(i for i in idle if kept(i.namespace, i.pod))
    index = {(g.node, g.device_uuid): g.device_index for g in gpus}
    filters = tuple(
        (key, value) for key, value in (("namespace", namespace), ("node", node)) if value
    )
    focus = Focus(
        namespace=namespace,
        node=node,
        whole=whole,
        cores=sum(w.cores for w in workloads),
        mem_mib=sum(w.mem_mib for w in workloads),
        pods=tuple(_pods(workloads, index)),
        gpus=tuple(_gpu_shares(gpus, workloads, by_share=namespace is not None)),
        nodes=tuple(_node_shares(nodes, workloads)),
        namespaces=tuple(_namespace_shares(workloads, gpus)),
        namespace_row=next((ns for ns in namespaces if ns.namespace == namespace), None),
        node_row=nodes[0] if node is not None and nodes else None,
        containers=len(runtime.containers) if runtime is not None else 0,
    )
    return replace(
        whole,
        gpus=tuple(gpus),
        nodes=tuple(nodes),
        workloads=tuple(workloads),
        namespaces=tuple(namespaces),
        runtime=runtime,
        real_usage=real_usage,
        idle_allocations=idle,
        notes=(*whole.notes, _scope_note(filters)),
        filters=filters,
        focus=focus,
    )


def cluster_of(summary: Summary) -> Summary:
    """The whole summary a filtered one narrows; ``summary`` itself when it is not filtered."""
    return summary.focus.whole if summary.focus is not None else summary


def fit_scope(summary: Summary) -> tuple[tuple[GpuSummary, ...], str]:
    """The GPUs a job could be placed on under ``summary``'s filter, and where that is: a node
    filter keeps the node's GPUs (idle ones too); a namespace filter keeps the whole cluster,
    since a namespace's pods may go on any node. Empty words: no filter."""
    focus = summary.focus
    if focus is None:
        return summary.gpus, ""
    if focus.node is None:
        return focus.whole.gpus, "the whole cluster (a namespace's pods may go on any node)"
    return tuple(g for g in focus.whole.gpus if g.node == focus.node), f"node {focus.node}"
