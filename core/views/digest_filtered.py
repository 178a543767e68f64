"""The first page under a filter: the namespace or node first, then the whole cluster.

``ns=team-a``: the namespace's own totals and quota, its pods (the largest first, then where
the rest are), the GPUs and nodes it uses with its share of each. ``node=gpu-node-7``: every
GPU of the node (idle ones too), each namespace's totals on it, its pods. Runtime and real usage
show the filter's containers and pods. What needs attention is counted within the filter. The
page ends with the whole cluster, labelled so: its headline and its GPU models.
"""

from __future__ import annotations

from core import number_style
from core.model import Focus, NamespaceSummary, NodeSummary, QuotaFigure, Summary
from core.summary.input_notes import ALLOCATION_ONLY_NOTE
from core.summary.workloads import is_core_resource, is_memory_resource
from core.views import digest_tables, focus_tables
from core.views.attention import Fact, Hints, Line
from core.views.digest import (
    ALL_GPUS_UP_TO,
    Digest,
    Section,
    attention_section,
    cluster_headline,
    containers_section,
    host_section,
    measured,
    more_line,
    real_usage_section,
    warnings_of,
)
from core.views.names import short_type

# The page stays one screen (45 lines in a Slack thread) at any cluster size: a few rows of
# each list, then how many more and where they are.
TOP_PODS = 8
TOP_SHARES = 4  # GPUs and nodes a namespace uses, its largest share first
# A node's page lists every GPU of the node, so its other lists get fewer rows; fewer still
# for a node of more than 8 GPUs.
TOP_NODE_ROWS = 5
TOP_NODE_ROWS_BIG = 3
# Beside runtime and real usage (``digest.measured``) every list of the filter is shorter, the
# GPUs a namespace uses come from the GPUs button, and the runtime table of a node's host GPUs
# stands for its GPU table (it has their allocation).
TOP_MEASURED = 3
TOP_PODS_MEASURED = 5


def _node_rows(summary: Summary, focus: Focus) -> int:
    if measured(summary) or len(focus.gpus) > 8:
        return TOP_NODE_ROWS_BIG
    return TOP_NODE_ROWS


def _runtime_covers_gpus(summary: Summary) -> bool:
    """Whether the runtime table lists every GPU of the filter (so no second GPU table)."""
    runtime = summary.runtime
    if runtime is None or not summary.gpus:
        return False
    hosts = {h.device_uuid for h in runtime.host_gpus}
    return all(g.device_uuid in hosts for g in summary.gpus)


def filter_words(focus: Focus) -> str:
    """``namespace team-a``, ``node gpu-node-7``, ``namespace team-a on node gpu-node-7``."""
    if focus.namespace is not None and focus.node is not None:
        return f"namespace {focus.namespace} on node {focus.node}"
    if focus.namespace is not None:
        return f"namespace {focus.namespace}"
    return f"node {focus.node}"


def _more(count: int, noun: str, where: str) -> str:
    """``211 more pods: Workloads button``; nothing when none is left out."""
    return f"{number_style.counted(count, 'more ' + noun)}: {where}" if count > 0 else ""


def _top_title(what: str, shown: int, total: int) -> str:
    return f"{what}: top {shown:,} of {total:,}" if total > shown else f"{what} ({total:,})"


def _quota_fact(row: NamespaceSummary | None) -> Fact:
    """``quota use 91.6% (cores 9,155 / 10,000 cores) — near its limit``."""
    if row is None or not row.quota:
        return Fact(number_style.NOT_KNOWN, " (no quota series)", "quota: ")
    limited = [q for q in row.quota if q.limit is not None]
    if not limited or row.quota_use_percent is None:
        return Fact("no limit", "", "quota: ")

    def amount(q: QuotaFigure) -> str:
        limit = q.limit or 0.0
        if is_memory_resource(q.resource):
            return f"memory {number_style.mem_total_pair(q.used, limit)}"
        if is_core_resource(q.resource):
            return f"cores {number_style.cores_pair(q.used, limit)}"
        return f"{q.resource} {number_style.count(q.used)} / {number_style.count(limit)}"

    state = {"over": ", over quota", "near": ", near its limit"}.get(row.quota_state, "")
    details = "; ".join(amount(q) for q in limited)
    return Fact(number_style.percent(row.quota_use_percent), f" ({details}){state}", "quota use ")


def _namespace_headline(summary: Summary, focus: Focus) -> list[Line]:
    whole = focus.whole.cluster
    name = filter_words(focus)
    if not focus.pods and focus.namespace_row is None:
        return [
            (Fact(number_style.NOT_KNOWN, ": no scheduler allocation series for it", f"{name}: "),),
            (
                Fact(
                    number_style.counted(focus.containers, "container"),
                    " measured by the vGPU monitor",
                ),
            ),
        ]
    if focus.node is not None and focus.node_row is not None:
        of_what = "the node's"
        core_base, mem_base = focus.node_row.core_limit, focus.node_row.mem_limit_mib
    else:
        of_what = "the cluster's allocation"
        core_base, mem_base = whole.core_allocated, whole.mem_allocated_mib
    nodes = len({node for pod in focus.pods for node, _ in pod.devices})
    return [
        (
            Fact(
                number_style.cores(focus.cores),
                f" ({number_style.share(focus.cores, core_base)} of {of_what})",
                f"{name}: ",
            ),
            Fact(
                number_style.mem_total(focus.mem_mib),
                f" ({number_style.share(focus.mem_mib, mem_base)})",
            ),
        ),
        (
            Fact(
                number_style.counted(len(focus.pods), "pod"),
                f" on {number_style.counted(len(focus.gpus), 'GPU')} of "
                f"{number_style.counted(nodes, 'node')}",
            ),
            _quota_fact(focus.namespace_row),
        ),
    ]


def _node_headline(focus: Focus, node: NodeSummary | None) -> list[Line]:
    name = filter_words(focus)
    if node is None:
        return [
            (Fact(number_style.NOT_KNOWN, ": no scheduler device series for it", f"{name}: "),),
            (
                Fact(
                    number_style.counted(focus.containers, "container"),
                    " measured by the vGPU monitor",
                ),
            ),
        ]
    models = list(map(short_type, node.device_types))
    gpus = (
        f"{number_style.count(node.gpus)} × {models[0]}"
        if len(models) == 1
        else f"{number_style.counted(node.gpus, 'GPU')} ({', '.join(models) or 'model not known'})"
    )
    states = (
        f", {number_style.count(node.partial_gpus)} partly allocated, "
        f"{number_style.count(node.full_gpus)} full"
        + (
            f", {number_style.count(node.inconsistent_gpus)} inconsistent"
            if node.inconsistent_gpus
            else ""
        )
    )
    noun = "whole GPU" if node.free_whole_gpus == 1 else "whole GPUs"
    memory = number_style.mem_total_pair(node.mem_allocated_mib, node.mem_limit_mib)
    return [
        (
            Fact(name, f": {gpus}"),
            Fact(number_style.count(node.idle_gpus), f" idle{states}"),
        ),
        (
            Fact(
                number_style.percent(node.core_allocated_percent),
                f" allocated ({number_style.cores_pair(node.core_allocated, node.core_limit)})",
                "cores ",
            ),
            Fact(
                number_style.percent(node.mem_allocated_percent),
                f" allocated ({memory})",
                "memory ",
            ),
        ),
        (
            Fact(number_style.count(node.free_whole_gpus), f" {noun} free"),
            Fact(
                f"{number_style.cores(node.largest_free_cores)}, "
                f"{number_style.mem_each(node.largest_free_mem_mib)}",
                "",
                "largest free on one GPU: ",
            ),
            Fact(
                number_style.counted(len(focus.pods), "pod"),
                f" of {number_style.counted(len(focus.namespaces), 'namespace')}",
            ),
        ),
    ]


def _pods_section(summary: Summary, focus: Focus, hints: Hints) -> Section | None:
    if not focus.pods:
        return None
    if focus.namespace is None and summary.real_usage is not None:
        return None  # a node's real usage lists its pods, with what they hold and use
    if focus.namespace is None:
        top = _node_rows(summary, focus)
    else:
        top = TOP_PODS_MEASURED if measured(summary) else TOP_PODS
    shown = focus.pods[:top]
    omitted = len(focus.pods) - len(shown)
    spec = focus_tables.PODS if focus.namespace is not None else focus_tables.NODE_PODS
    what = "Its pods" if focus.namespace is not None else "Pods on the node"
    return Section(
        "focus pods",
        _top_title(what, len(shown), len(focus.pods)),
        "largest first",
        spec.table("Pods", shown, omitted),
        after=_more(omitted, "pod", hints.workloads),
    )


def _share_gpus_section(summary: Summary, focus: Focus, hints: Hints) -> Section | None:
    if not focus.gpus or measured(summary):
        # Beside measurements the GPUs button brings them (runtime lists them measured).
        return None
    shown = focus.gpus[:TOP_SHARES]
    omitted = len(focus.gpus) - len(shown)
    return Section(
        "focus gpus",
        _top_title("GPUs it uses", len(shown), len(focus.gpus)),
        focus_tables.SHARE_GPUS_NOTE,
        focus_tables.SHARE_GPUS.table("GPUs", shown, omitted),
        after=_more(omitted, "GPU", hints.gpus),
    )


def _share_nodes_section(summary: Summary, focus: Focus, hints: Hints) -> Section | None:
    if not focus.nodes or focus.node is not None:
        return None
    shown = focus.nodes[: TOP_MEASURED if measured(summary) else TOP_SHARES]
    omitted = len(focus.nodes) - len(shown)
    return Section(
        "focus nodes",
        _top_title("Nodes it uses", len(shown), len(focus.nodes)),
        focus_tables.SHARE_NODES_NOTE,
        focus_tables.SHARE_NODES.table("Nodes", shown, omitted),
        after=_more(omitted, "node", hints.everything),
    )


def _node_gpus_section(summary: Summary, hints: Hints) -> Section | None:
    """Every GPU of the node, idle ones included (a node has at most a few dozen)."""
    gpus = sorted(summary.gpus, key=lambda g: g.device_index)
    if not gpus or _runtime_covers_gpus(summary):
        return None
    shown = gpus[: max(ALL_GPUS_UP_TO, 2 * ALL_GPUS_UP_TO)]
    omitted = len(gpus) - len(shown)
    return Section(
        "focus gpus",
        f"Every GPU of the node ({len(gpus):,})",
        "cores, memory: allocated of the GPU's",
        digest_tables.ALL_GPUS.table("GPUs", shown, omitted),
        after=_more(omitted, "GPU", hints.gpus),
    )


def _node_namespaces_section(summary: Summary, focus: Focus, hints: Hints) -> Section | None:
    if not focus.namespaces or focus.namespace is not None:
        return None
    shown = focus.namespaces[: _node_rows(summary, focus)]
    omitted = len(focus.namespaces) - len(shown)
    return Section(
        "focus namespaces",
        _top_title("Namespaces on the node", len(shown), len(focus.namespaces)),
        focus_tables.NODE_NAMESPACES_NOTE,
        focus_tables.NODE_NAMESPACES.table("Namespaces", shown, omitted),
        after=_more(omitted, "namespace", hints.everything),
    )


def _cluster_section(focus: Focus) -> Section:
    """The whole cluster, labelled so."""
    whole = focus.whole
    label = whole.source.cluster or whole.source.label
    return Section("cluster", f"Whole cluster ({label})", lines=tuple(cluster_headline(whole)))


def filtered_digest(summary: Summary, hints: Hints) -> Digest:
    """The first page of a filtered ``summary`` (``summary.focus`` is set)."""
    focus = summary.focus
    if focus is None:
        raise ValueError("filtered_digest needs a filtered summary")
    if focus.namespace is not None:
        headline = _namespace_headline(summary, focus)
        first = [
            _pods_section(summary, focus, hints),
            _share_gpus_section(summary, focus, hints),
            _share_nodes_section(summary, focus, hints),
        ]
    else:
        headline = _node_headline(focus, focus.node_row)
        first = [
            _node_gpus_section(summary, hints),
            _node_namespaces_section(summary, focus, hints),
            _pods_section(summary, focus, hints),
        ]
    sections = [
        section
        for section in (
            *first,
            host_section(summary, hints),
            containers_section(summary, hints),
            real_usage_section(summary, hints),
            attention_section(summary, hints, nodes=focus.namespace is None),
        )
        if section is not None
    ]
    sections.append(_cluster_section(focus))
    words = filter_words(focus)
    return Digest(
        title=f"{focus.whole.source.cluster or summary.source.label}, {words}",
        warnings=warnings_of(summary),
        basis=ALLOCATION_ONLY_NOTE if ALLOCATION_ONLY_NOTE in summary.headline else None,
        headline=tuple(headline),
        sections=tuple(sections),
        more=more_line(hints),
    )
