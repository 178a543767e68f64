"""Collect HAMi metrics for one registered cluster (or one kubeconfig context) in one call.

The caller then summarises them::

    cm = collect_metrics(entry, context, runtime=True)
    summary = core.api.summarize_text(cm.text, cm.source, monitor_texts=cm.monitor_texts,
                                      missing_monitors=cm.missing_monitors,
                                      real_usage=cm.real_usage)

``CollectedMetrics`` round-trips through JSON (``to_json`` / ``from_json``) so a cache can keep
it. Every failure is a ``CollectionError`` whose message names the cluster, what failed and what
to do; nothing else escapes except programming errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from bot.clusters import kube_scrape
from bot.clusters.deadline import Deadline
from bot.clusters.errors import CollectionError, KubeconfigError, RefusedByRegistry
from bot.clusters.exec_usage import DEFAULT_BUDGET_SECONDS, collect_real_usage
from bot.clusters.hami_text import pods_with_allocations, scheduler_problem
from bot.clusters.http_fetch import http_get
from bot.clusters.kube_client import api_client_for_context, api_client_in_cluster
from bot.clusters.kube_errors import Target
from bot.clusters.pending_pods import read_pending_pods
from bot.clusters.prometheus import fetch_from_prometheus
from bot.clusters.registry import ClusterEntry
from bot.clusters.url_display import display_url, url_secrets
from core.model import GpuReading, PodExecResult, SourceInfo
from core.pending.pending_list import PendingCount, count_pending
from core.settings import DEFAULT_SETTINGS
from core.summary.input_notes import over_input_limit

JSON_VERSION = 1


@dataclass(frozen=True, slots=True)
class CollectedMetrics:
    cluster: str
    context: str | None
    text: str  # scheduler exposition
    monitor_texts: tuple[str, ...]
    missing_monitors: tuple[str, ...]
    real_usage: tuple[PodExecResult, ...] | None
    fetched_at: datetime  # UTC
    source: SourceInfo  # kind="cluster"
    notes: tuple[str, ...] = ()  # how the metrics were reached (fallback routes, skipped parts)
    # The pods pending on HAMi's resources at scrape time; None: not read (no Kubernetes API,
    # or RBAC does not let the bot list pods there).
    pending: PendingCount | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": JSON_VERSION,
            "cluster": self.cluster,
            "context": self.context,
            "text": self.text,
            "monitor_texts": list(self.monitor_texts),
            "missing_monitors": list(self.missing_monitors),
            "real_usage": None
            if self.real_usage is None
            else [_exec_to_json(r) for r in self.real_usage],
            "fetched_at": self.fetched_at.isoformat(),
            "source": {
                "kind": self.source.kind,
                "label": self.source.label,
                "cluster": self.source.cluster,
                "context": self.source.context,
                "fetched_at": self.source.fetched_at.isoformat()
                if self.source.fetched_at
                else None,
            },
            "notes": list(self.notes),
            "pending": None
            if self.pending is None
            else {
                "pods": self.pending.pods,
                "oldest_since": self.pending.oldest_since.isoformat()
                if self.pending.oldest_since
                else None,
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CollectedMetrics:
        if data.get("version") != JSON_VERSION:
            raise ValueError(f"unsupported CollectedMetrics version {data.get('version')!r}")
        source = data["source"]
        real = data.get("real_usage")
        return cls(
            cluster=str(data["cluster"]),
            context=data.get("context"),
            text=str(data["text"]),
            monitor_texts=tuple(data.get("monitor_texts") or ()),
            missing_monitors=tuple(data.get("missing_monitors") or ()),
            real_usage=None if real is None else tuple(_exec_from_json(r) for r in real),
            fetched_at=datetime.fromisoformat(data["fetched_at"]),
            source=SourceInfo(
                kind=source["kind"],
                label=source["label"],
                cluster=source.get("cluster"),
                context=source.get("context"),
                fetched_at=datetime.fromisoformat(source["fetched_at"])
                if source.get("fetched_at")
                else None,
            ),
            notes=tuple(data.get("notes") or ()),
            pending=_pending_from_json(data.get("pending")),
        )


def _pending_from_json(data: Mapping[str, Any] | None) -> PendingCount | None:
    if data is None:
        return None
    since = data.get("oldest_since")
    return PendingCount(int(data["pods"]), datetime.fromisoformat(since) if since else None)


def _exec_to_json(result: PodExecResult) -> dict[str, Any]:
    return {
        "namespace": result.namespace,
        "pod": result.pod,
        "container": result.container,
        "readings": [
            {
                "index": r.index,
                "uuid": r.uuid,
                "utilization_percent": r.utilization_percent,
                "mem_used_mib": r.mem_used_mib,
                "mem_total_mib": r.mem_total_mib,
                "name": r.name,
            }
            for r in result.readings
        ],
        "failure": result.failure,
        "detail": result.detail,
    }


def _exec_from_json(data: Mapping[str, Any]) -> PodExecResult:
    return PodExecResult(
        namespace=data["namespace"],
        pod=data["pod"],
        container=data.get("container"),
        readings=tuple(GpuReading(**reading) for reading in data.get("readings") or ()),
        failure=data.get("failure"),
        detail=data.get("detail", ""),
    )


def collect_metrics(
    entry: ClusterEntry,
    context: str | None,
    *,
    runtime: bool = False,
    nvidia_smi: bool = False,
    timeout_seconds: float | None = None,
    nvidia_smi_budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    max_bytes: int = DEFAULT_SETTINGS.limits.max_input_bytes,
) -> CollectedMetrics:
    """Collect from a registered cluster. ``context`` must be one of ``entry.contexts`` for
    kubeconfig entries (None is accepted when there is exactly one). ``timeout_seconds``
    defaults to the entry's ``timeout_seconds`` (10 s); a scheduler page over ``max_bytes``
    is refused while it streams in. Raises ``CollectionError``."""
    budget = timeout_seconds if timeout_seconds is not None else entry.timeout_seconds
    if runtime and not entry.runtime_allowed:
        raise RefusedByRegistry(entry.name, entry.defined_at, "runtime_allowed")
    if nvidia_smi and not entry.nvidia_smi_allowed:
        raise RefusedByRegistry(entry.name, entry.defined_at, "nvidia_smi_allowed")
    if entry.source_kind in ("kubeconfig", "in-cluster"):
        api, target, chosen = open_cluster_api(entry, context)
        return _collect_kube(
            api,
            target,
            entry,
            chosen,
            runtime,
            nvidia_smi,
            budget,
            nvidia_smi_budget_seconds,
            max_bytes,
        )
    if entry.source_kind == "metrics-url":
        return _collect_metrics_url(entry, runtime, nvidia_smi, budget, max_bytes)
    return _collect_prometheus(entry, runtime, nvidia_smi, budget)


def open_cluster_api(
    entry: ClusterEntry, context: str | None
) -> tuple[k8s.ApiClient, Target, str | None]:
    """The Kubernetes API of a kubeconfig or in-cluster entry, and the context chosen (None
    in the cluster). The caller closes the client. Raises ``CollectionError``."""
    if entry.source_kind == "in-cluster":
        try:
            api, target = api_client_in_cluster(entry.name)
        except KubeconfigError as exc:
            raise CollectionError(exc.message) from exc
        return api, target, None
    chosen = _choose_context(entry, context)
    assert entry.kubeconfig_path is not None
    try:
        api, target = api_client_for_context(entry.kubeconfig_path, chosen, entry.name)
    except KubeconfigError as exc:
        raise CollectionError(f'Cluster "{entry.name}": {exc.message}') from exc
    return api, target, chosen


def collect_from_kubeconfig(
    kubeconfig_path: str | Path,
    context: str,
    *,
    namespace: str | None = None,
    runtime: bool = False,
    nvidia_smi: bool = False,
    timeout_seconds: float = 10.0,
    nvidia_smi_budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    max_bytes: int = DEFAULT_SETTINGS.limits.max_input_bytes,
) -> CollectedMetrics:
    """Collect from one kubeconfig context chosen explicitly (the ``scrape`` command)."""
    path = Path(kubeconfig_path).expanduser()
    try:
        api, target = api_client_for_context(path, context)
    except KubeconfigError as exc:
        raise CollectionError(exc.message) from exc
    entry = ClusterEntry(
        name=context,
        display_name=context,
        source_kind="kubeconfig",
        contexts=(context,),
        kubeconfig_path=path,
        hami_namespace=namespace,
        timeout_seconds=timeout_seconds,
        runtime_allowed=True,
        nvidia_smi_allowed=True,
    )
    return _collect_kube(
        api,
        target,
        entry,
        context,
        runtime,
        nvidia_smi,
        timeout_seconds,
        nvidia_smi_budget_seconds,
        max_bytes,
    )


def _choose_context(entry: ClusterEntry, context: str | None) -> str:
    if context is None:
        if len(entry.contexts) == 1:
            return entry.contexts[0]
        raise CollectionError(
            f'Cluster "{entry.name}" has several contexts ({", ".join(entry.contexts)}); pick one.'
        )
    if context not in entry.contexts:
        raise CollectionError(
            f'Context "{context}" is not registered for cluster "{entry.name}" (registered: '
            f"{', '.join(entry.contexts)}). Pick one of those, or ask an admin to add it "
            f"({entry.defined_at})."
        )
    return context


def _source(entry: ClusterEntry, context: str | None, fetched_at: datetime) -> SourceInfo:
    label = entry.display_name if context is None else f"{entry.display_name} ({context})"
    return SourceInfo(
        kind="cluster", label=label, cluster=entry.name, context=context, fetched_at=fetched_at
    )


def _collect_kube(
    api: k8s.ApiClient,
    target: Target,
    entry: ClusterEntry,
    context: str | None,
    runtime: bool,
    nvidia_smi: bool,
    budget_seconds: float,
    nvidia_smi_budget_seconds: float,
    max_bytes: int,
) -> CollectedMetrics:
    try:
        fetched_at = datetime.now(UTC)
        scheduler = kube_scrape.scrape_scheduler(
            api, target, entry.hami_namespace, Deadline(budget_seconds), max_bytes=max_bytes
        )
        notes = list(scheduler.notes)
        monitor_texts: tuple[str, ...] = ()
        missing: tuple[str, ...] = ()
        if runtime:
            monitors = kube_scrape.scrape_monitors(
                api, target, scheduler.namespace, Deadline(budget_seconds)
            )
            monitor_texts, missing = monitors.texts, monitors.missing
        pending = _pending_count(api, target, entry, Deadline(budget_seconds))
        real_usage: tuple[PodExecResult, ...] | None = None
        if nvidia_smi:
            pods = pods_with_allocations(scheduler.text)
            real_usage = collect_real_usage(
                api, target, pods, budget_seconds=nvidia_smi_budget_seconds
            )
    finally:
        api.close()  # type: ignore[no-untyped-call]
    return CollectedMetrics(
        cluster=entry.name,
        context=context,
        text=scheduler.text,
        monitor_texts=monitor_texts,
        missing_monitors=missing,
        real_usage=real_usage,
        fetched_at=fetched_at,
        source=_source(entry, context, fetched_at),
        notes=(f"Read through {scheduler.route}.", *notes),
        pending=pending,
    )


def _pending_count(
    api: k8s.ApiClient, target: Target, entry: ClusterEntry, deadline: Deadline
) -> PendingCount | None:
    """The pods pending on HAMi's resources where the entry lets the bot read pods; None when
    they cannot be listed (the summary then says nothing of them, and the scrape stands)."""
    try:
        pods = [
            pod
            for namespace in entry.pod_namespaces or (None,)
            for pod in read_pending_pods(api, target, namespace, deadline, with_events=False)
        ]
    except CollectionError:
        return None
    return count_pending(pods)


def _not_kube_notes(entry: ClusterEntry, runtime: bool, nvidia_smi: bool) -> list[str]:
    notes = []
    if nvidia_smi:
        notes.append(
            f"nvidia-smi exec needs Kubernetes access; {entry.describe_source()} has none, so "
            "real usage was not collected."
        )
    if runtime and entry.source_kind == "metrics-url":
        notes.append(
            "vGPU monitor scrapes need Kubernetes access or Prometheus; only the metrics URL "
            "was read."
        )
    return notes


def _collect_metrics_url(
    entry: ClusterEntry, runtime: bool, nvidia_smi: bool, budget_seconds: float, max_bytes: int
) -> CollectedMetrics:
    assert entry.metrics_url is not None
    label = f'cluster "{entry.name}"'
    shown_url = display_url(entry.metrics_url)
    fetched_at = datetime.now(UTC)
    answer = http_get(
        entry.metrics_url,
        label=label,
        what="the metrics URL",
        deadline=Deadline(budget_seconds),
        max_bytes=max_bytes,
        accept="text/plain;version=0.0.4;q=1,*/*;q=0.1",
        too_large_advice=over_input_limit(max_bytes),
    )
    if answer.status != 200:
        raise CollectionError(
            f"{label}: the metrics URL {shown_url} answered HTTP {answer.status}. "
            'Check the URL (HAMi serves /metrics on the scheduler\'s Service port "monitor").'
        )
    problem = scheduler_problem(answer.text, url_secrets(entry.metrics_url))
    if problem is not None:
        raise CollectionError(
            f"{label}: the metrics URL {shown_url} answered, but not with HAMi scheduler "
            f"metrics: {problem}. Point it at the scheduler's /metrics (Service port "
            '"monitor", default 31993, or the pod\'s port 9395).'
        )
    return CollectedMetrics(
        cluster=entry.name,
        context=None,
        text=answer.text,
        monitor_texts=(),
        missing_monitors=(),
        real_usage=None,
        fetched_at=fetched_at,
        source=_source(entry, None, fetched_at),
        notes=(f"Read from {shown_url}.", *_not_kube_notes(entry, runtime, nvidia_smi)),
    )


def _collect_prometheus(
    entry: ClusterEntry, runtime: bool, nvidia_smi: bool, budget_seconds: float
) -> CollectedMetrics:
    assert entry.prometheus_url is not None
    label = f'cluster "{entry.name}"'
    fetched_at = datetime.now(UTC)
    text = fetch_from_prometheus(
        entry.prometheus_url,
        entry.prometheus_selector,
        label=label,
        deadline=Deadline(budget_seconds),
    )
    notes = [f"Rebuilt from {entry.describe_source()} (instant query)."]
    notes += _not_kube_notes(entry, runtime, nvidia_smi)
    if runtime:
        notes.append(
            "Runtime (vGPU monitor) figures are not read from Prometheus; the summary shows "
            "allocation only."
        )
    return CollectedMetrics(
        cluster=entry.name,
        context=None,
        text=text,
        monitor_texts=(),
        missing_monitors=(),
        real_usage=None,
        fetched_at=fetched_at,
        source=_source(entry, None, fetched_at),
        notes=tuple(notes),
    )
