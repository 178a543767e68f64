"""The numbers behind the aggregated chart, computed from a ``Summary``.

Every bar is counted in GPUs: each GPU adds exactly 1, split by what holds its cores (the
namespaces' pods, allocation with no pod series), what is free on it when it is partly used
(a fragment) and whether it is free as a whole. A GPU allocated beyond its limit is split in
proportion, so it still counts 1; a GPU whose figures are missing counts 1 "not known". So a
bar's length is its GPU count, and its parts say who holds them and how much room is left.

The same split makes the per-model and the per-node bars, so the panels agree with each other;
namespace rows and their quota use come from the summary's namespace figures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from core.model import GpuSummary, NamespaceSummary, QuotaFigure, Summary
from core.summary.workloads import is_core_resource, is_memory_resource
from core.views import palette
from core.views.chart_text import model_name, model_short_names, node_labels
from core.visible_text import visible

OTHER_KEY: Final = "\x00other"  # keys no namespace can have (RFC 1123 labels)
UNATTRIBUTED_KEY: Final = "\x00unattributed"
FRAGMENT_KEY: Final = "\x00fragment"
FREE_KEY: Final = "\x00free"
UNKNOWN_KEY: Final = "\x00unknown"
NON_NAMESPACE_KEYS: Final = (OTHER_KEY, UNATTRIBUTED_KEY, FRAGMENT_KEY, FREE_KEY, UNKNOWN_KEY)

MAX_MODELS: Final = 6  # more models: the smallest are summed into one row
MAX_NODES: Final = 8  # rows of each node list

Scope = Literal["cluster", "namespace", "node"]


@dataclass(frozen=True, slots=True)
class Style:
    """How one part of a bar is drawn and named."""

    colour: str
    hatch: str
    label: str


@dataclass(frozen=True, slots=True)
class BarRow:
    """One bar: a GPU model or a node, its GPUs split by ``parts`` (key -> GPUs)."""

    key: str
    label: str
    gpus: int
    parts: dict[str, float]
    free_whole: int  # idle GPUs whose figures are all known
    fragment_cores: float  # free cores on partly used GPUs
    held_cores: float = 0.0  # the filtered namespace's cores here (namespace scope)


@dataclass(frozen=True, slots=True)
class QuotaUse:
    """The most used quota limit of a namespace: which resource, and how much of it."""

    resource: str  # "cores", "memory" or HAMi's resource name
    percent: float


@dataclass(frozen=True, slots=True)
class NamespaceRow:
    key: str
    label: str
    cores: float
    mem_mib: float
    core_share_percent: float
    mem_share_percent: float
    quota: QuotaUse | None  # the most used quota limit
    limit_cores: float | None = None  # the cores quota limit, drawn as an outline
    members: int = 1  # namespaces in this row ("other" rows hold several)


@dataclass(frozen=True, slots=True)
class ChartData:
    scope: Scope
    scope_name: str  # the filtered namespace or node
    styles: dict[str, Style]  # part key -> style, in stacking order
    models: tuple[BarRow, ...]
    namespaces: tuple[NamespaceRow, ...]
    first_nodes: tuple[BarRow, ...]  # most free whole GPUs (namespace scope: most held)
    fragmented_nodes: tuple[BarRow, ...]
    label_note: str
    incomplete_gpus: int
    # The filtered namespace's largest pods: (pod, cores, MiB), largest first.
    pods: tuple[tuple[str, float, float], ...] = field(default=())


def chart_data(summary: Summary, ranking: Sequence[str] | None = None) -> ChartData:
    """The aggregated chart's rows; ``ranking`` is the cluster's namespace order, for colours."""
    scope, scope_name = _scope(summary)
    ranked = list(ranking) if ranking is not None else palette.namespace_ranking(summary)
    colours, named = named_colours(ranked, summary, scope_name if scope == "namespace" else None)
    parts_of = _DeviceParts(summary, {name: name for name in named}, scope)
    labels, label_note = node_labels(g.node for g in summary.gpus)
    short_models = model_short_names(g.device_type for g in summary.gpus)
    held: dict[str, float] = defaultdict(float)  # device UUID -> the namespace's cores on it
    if scope == "namespace":
        for w in summary.workloads:
            held[w.device_uuid] += w.cores
    models = _model_rows(summary.gpus, parts_of, held)
    # Every GPU is in one model row, so the rows hold every part key some GPU has.
    used = {key for row in models for key in row.parts}
    styles = _styles(summary, named, colours, used, scope)
    picked = _pick_nodes(summary.gpus, held, scope)
    first, fragmented = (
        [_node_row(node, tally, parts_of, labels, short_models) for node, tally in nodes]
        for nodes in picked
    )
    return ChartData(
        scope=scope,
        scope_name=scope_name,
        styles=styles,
        models=tuple(models),
        namespaces=tuple(_namespace_rows(summary, named, scope)),
        first_nodes=tuple(first),
        fragmented_nodes=tuple(fragmented),
        label_note=label_note,
        incomplete_gpus=sum(1 for g in summary.gpus if "incomplete" in g.flags),
        pods=_top_pods(summary, scope_name) if scope == "namespace" else (),
    )


def named_colours(
    ranking: Sequence[str], summary: Summary, subject: str | None = None
) -> tuple[dict[str, str], list[str]]:
    """The colours of the ranking's first eight namespaces, and those of them in ``summary``.

    Colours come from the ranking alone, so charts drawn with one ranking agree: a namespace
    outside its first eight is "other" in every such chart. ``subject``, a namespace's own
    chart, always gets a colour (the one left after the first eight, if it is not among them).
    """
    top = list(dict.fromkeys(ranking))[: palette.NAMED_NAMESPACES]
    if subject is not None:
        order = top if subject in top else [*top, subject]
        return palette.assign_colours(order, len(order)), [subject]
    present = {w.namespace for w in summary.workloads} | {n.namespace for n in summary.namespaces}
    return palette.assign_colours(top), [name for name in top if name in present]


def _top_pods(summary: Summary, namespace: str) -> tuple[tuple[str, float, float], ...]:
    usage = next((n for n in summary.namespaces if n.namespace == namespace), None)
    return usage.top_pods if usage is not None else ()


def _scope(summary: Summary) -> tuple[Scope, str]:
    filters = dict(summary.filters)
    if "namespace" in filters:
        return "namespace", filters["namespace"]
    if "node" in filters:
        return "node", filters["node"]
    return "cluster", ""


# ------------------------------------------------------------------------------ per device


class _DeviceParts:
    """The GPUs' parts: part key -> the share of a GPU (the parts of one GPU add to 1).

    Worked out as a row adds them up, not kept: the model rows add up every GPU's parts once,
    the node rows only those of a few nodes, so a dict per GPU would cost more than it saves.
    """

    def __init__(self, summary: Summary, key_of: Mapping[str, str], scope: Scope) -> None:
        held: dict[str, dict[str, float]] = defaultdict(dict)
        for w in summary.workloads:
            key = key_of.get(w.namespace, OTHER_KEY)
            cores = held[w.device_uuid]
            cores[key] = cores.get(key, 0.0) + w.cores
        self._held: dict[str, dict[str, float]] = dict(held)
        # In a namespace's chart the rest of each GPU's allocation is other tenants' pods.
        self._beyond = OTHER_KEY if scope == "namespace" else UNATTRIBUTED_KEY

    def total(self, gpus: Iterable[GpuSummary]) -> dict[str, float]:
        """The parts of ``gpus`` added up key by key, in the order of ``gpus``."""
        total: dict[str, float] = {}
        held, beyond = self._held, self._beyond
        none: dict[str, float] = {}
        for g in gpus:
            for key, value in _split(g, held.get(g.device_uuid, none), beyond).items():
                total[key] = total.get(key, 0.0) + value
        return total


def _split(g: GpuSummary, held: dict[str, float], beyond: str) -> dict[str, float]:
    if "incomplete" in g.flags or g.core_limit <= 0:
        return {UNKNOWN_KEY: 1.0}
    if g.state == "idle":
        return {FREE_KEY: 1.0}
    allocated = dict(held)
    rest = g.core_allocated - sum(held.values())
    if rest > 0.5:
        allocated[beyond] = allocated.get(beyond, 0.0) + rest
    used = sum(allocated.values())
    scale = 1.0 / max(g.core_limit, used)  # overcommitted: in proportion, still one GPU
    out = {key: cores * scale for key, cores in allocated.items() if cores > 0}
    free = max(0.0, 1.0 - used * scale)
    if free > 0:
        out[FRAGMENT_KEY] = free
    return out


def _styles(
    summary: Summary,
    named: Sequence[str],
    colours: Mapping[str, str],
    used: AbstractSet[str],
    scope: Scope,
) -> dict[str, Style]:
    """The style of each part key, in stacking order; ``used``: the keys some GPU has."""
    styles = {name: Style(colours[name], "", visible(name)) for name in named}
    present = {w.namespace for w in summary.workloads} | {n.namespace for n in summary.namespaces}
    others = len(present - set(named))
    if scope == "namespace":
        styles[OTHER_KEY] = Style(palette.OTHER_COLOUR, "", "other namespaces")
    elif others or OTHER_KEY in used:
        word = "namespace" if others == 1 else "namespaces"
        styles[OTHER_KEY] = Style(palette.OTHER_COLOUR, "", f"{others:,} other {word}")
    if UNATTRIBUTED_KEY in used:
        styles[UNATTRIBUTED_KEY] = Style(
            palette.UNATTRIBUTED_COLOUR, "xx", "allocated, no pod series"
        )
    styles[FRAGMENT_KEY] = Style(
        palette.FRAGMENT_COLOUR, palette.FRAGMENT_HATCH, "free on partly used GPUs"
    )
    styles[FREE_KEY] = Style(palette.FREE_COLOUR, "", "whole GPUs free")
    if UNKNOWN_KEY in used:
        styles[UNKNOWN_KEY] = Style(palette.UNKNOWN_COLOUR, "..", "figures not known")
    return styles


# ------------------------------------------------------------------------------ rows


def _bar(key: str, label: str, gpus: Sequence[GpuSummary], parts: dict[str, float]) -> BarRow:
    return BarRow(
        key=key,
        label=label,
        gpus=len(gpus),
        parts=parts,
        free_whole=round(parts.get(FREE_KEY, 0.0)),
        fragment_cores=sum(
            g.free_cores for g in gpus if g.state != "idle" and "incomplete" not in g.flags
        ),
    )


def _model_rows(
    gpus: Sequence[GpuSummary],
    parts_of: _DeviceParts,
    held: Mapping[str, float],
) -> list[BarRow]:
    """One row per model, most GPUs first; beyond ``MAX_MODELS`` the smallest share a row.

    ``held``: the filtered namespace's cores per device (empty for a cluster's chart).
    """
    by_model: dict[str, list[GpuSummary]] = defaultdict(list)
    for g in gpus:
        by_model[g.device_type].append(g)
    ordered = sorted(by_model, key=lambda m: (-len(by_model[m]), m))
    if len(ordered) > MAX_MODELS:
        kept, rest = ordered[: MAX_MODELS - 1], ordered[MAX_MODELS - 1 :]
    else:
        kept, rest = ordered, []
    rows = []
    for model in kept:
        rows.append(
            _bar(model, model_name(model), by_model[model], parts_of.total(by_model[model]))
        )
    if rest:
        members = [g for m in rest for g in by_model[m]]
        rows.append(_bar(OTHER_KEY, f"{len(rest)} other models", members, parts_of.total(members)))
    if not held:
        return rows
    groups = [by_model[m] for m in kept] + (
        [[g for m in rest for g in by_model[m]]] if rest else []
    )
    return [
        _with_held(row, sum(held.get(g.device_uuid, 0.0) for g in members))
        for row, members in zip(rows, groups, strict=True)
    ]


@dataclass(slots=True)
class _NodeTally:
    """What ranks a node, gathered in one pass over the GPUs."""

    gpus: list[GpuSummary] = field(default_factory=list)
    free_whole: int = 0
    fragment_cores: float = 0.0
    held_cores: float = 0.0


def _pick_nodes(
    gpus: Sequence[GpuSummary], held: Mapping[str, float], scope: Scope
) -> tuple[list[tuple[str, _NodeTally]], list[tuple[str, _NodeTally]]]:
    """The nodes of the two lists: most whole GPUs free (a namespace's chart: where it holds
    the most), and most cores free on partly used GPUs; ties by name."""
    tallies: dict[str, _NodeTally] = {}
    for g in gpus:
        tally = tallies.get(g.node)
        if tally is None:
            tally = tallies[g.node] = _NodeTally()
        tally.gpus.append(g)
        if "incomplete" in g.flags:
            continue
        if g.state == "idle":
            tally.free_whole += 1
        else:
            tally.fragment_cores += g.free_cores
        tally.held_cores += held.get(g.device_uuid, 0.0)
    items = sorted(tallies.items())
    if scope == "namespace":
        first = sorted(items, key=lambda kv: -kv[1].held_cores)
    else:
        first = sorted(
            (kv for kv in items if kv[1].free_whole > 0),
            key=lambda kv: (-kv[1].free_whole, -kv[1].fragment_cores),
        )
    fragmented = sorted(
        (kv for kv in items if kv[1].fragment_cores >= 0.5), key=lambda kv: -kv[1].fragment_cores
    )
    return first[:MAX_NODES], fragmented[:MAX_NODES]


def _node_row(
    node: str,
    tally: _NodeTally,
    parts_of: _DeviceParts,
    labels: Mapping[str, str],
    short_models: Mapping[str, str],
) -> BarRow:
    parts = parts_of.total(tally.gpus)
    models = " + ".join(sorted({short_models[g.device_type] for g in tally.gpus}))
    row = _bar(node, f"{labels[node]} \u00b7 {models}", tally.gpus, parts)
    return _with_held(row, tally.held_cores)


def _with_held(row: BarRow, cores: float) -> BarRow:
    return replace(row, held_cores=cores) if cores else row


def _namespace_rows(summary: Summary, named: Sequence[str], scope: Scope) -> list[NamespaceRow]:
    by_name = {n.namespace: n for n in summary.namespaces}
    rows = [_namespace_row(by_name[name]) for name in named if name in by_name]
    rest = [n for n in summary.namespaces if n.namespace not in set(named)]
    if rest and scope != "namespace":
        word = "namespace" if len(rest) == 1 else "namespaces"
        rows.append(
            NamespaceRow(
                key=OTHER_KEY,
                label=f"{len(rest):,} other {word}",
                cores=sum(n.cores for n in rest),
                mem_mib=sum(n.mem_mib for n in rest),
                core_share_percent=sum(n.core_share_percent for n in rest),
                mem_share_percent=sum(n.mem_share_percent for n in rest),
                quota=None,
                members=len(rest),
            )
        )
    return rows


def _namespace_row(usage: NamespaceSummary) -> NamespaceRow:
    quota = quota_use(usage.quota)
    limit_cores = next(
        (q.limit for q in usage.quota if is_core_resource(q.resource) and q.limit), None
    )
    return NamespaceRow(
        key=usage.namespace,
        label=visible(usage.namespace),
        cores=usage.cores,
        mem_mib=usage.mem_mib,
        core_share_percent=usage.core_share_percent,
        mem_share_percent=usage.mem_share_percent,
        quota=quota,
        limit_cores=limit_cores,
    )


def quota_use(figures: Iterable[QuotaFigure]) -> QuotaUse | None:
    """The resource whose quota limit is the most used, or None without any limit."""
    best: QuotaUse | None = None
    for figure in figures:
        if not figure.limit:
            continue
        use = figure.used / figure.limit * 100.0
        kind = figure.resource
        if is_core_resource(kind):
            kind = "cores"
        elif is_memory_resource(kind):
            kind = "memory"
        if best is None or use > best.percent:
            best = QuotaUse(kind, use)
    return best
