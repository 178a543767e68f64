"""One pending pod's story: its request, HAMi's reasons, and each reason checked against now."""

from __future__ import annotations

from dataclasses import dataclass

from core.fit_shape import Shape
from core.model import Summary
from core.pending import crosscheck
from core.pending.describe import PodDescription, PodEvent
from core.pending.events import (
    FAILED_SCHEDULING,
    FILTERING_FAILED,
    CodedReason,
    NoNodeFits,
    SchedulerVerdict,
    read_message,
)
from core.pending.request import (
    NO_USE_TYPE,
    NO_USE_UUID,
    USE_TYPE,
    USE_UUID,
    ContainerRequest,
    annotation_list,
    container_requests,
)


@dataclass(frozen=True, slots=True)
class EventReading:
    event: PodEvent
    reading: CodedReason | NoNodeFits | SchedulerVerdict | None  # None: a form not known


@dataclass(frozen=True, slots=True)
class PodStory:
    pod: PodDescription
    requests: tuple[ContainerRequest, ...]
    events: tuple[EventReading, ...]  # the scheduling events (HAMi's and the scheduler's)
    reasons: tuple[CodedReason, ...]  # HAMi's reason codes, one per code, most nodes first
    reached_hami: bool  # a FilteringFailed event was recorded
    schedulers: tuple[str, ...]  # the sources of the scheduling events, as written
    findings: tuple[crosscheck.Finding, ...]  # empty without an allocation picture
    checked_against: str | None  # what the findings were computed from (None: not checked)


def pod_story(
    pod: PodDescription,
    summary: Summary | None = None,
    *,
    source: str | None = None,
    split_count: int | None = None,
) -> PodStory:
    requests = container_requests(pod)
    events = tuple(
        EventReading(event, read_message(event.reason, event.message))
        for event in pod.events
        if event.reason in (FILTERING_FAILED, FAILED_SCHEDULING)
    )
    by_code: dict[str, CodedReason] = {}
    for reading in events:
        if isinstance(reading.reading, CodedReason):
            by_code[reading.reading.code] = reading.reading  # events come oldest first
    reasons = tuple(sorted(by_code.values(), key=lambda r: (-r.node_count, r.code)))
    reached = any(reading.event.reason == FILTERING_FAILED for reading in events)
    findings: tuple[crosscheck.Finding, ...] = ()
    if summary is not None:
        findings = _findings(pod, requests, reasons, summary, split_count)
    schedulers = tuple(sorted({r.event.source for r in events if r.event.source}))
    return PodStory(
        pod=pod,
        requests=requests,
        events=events,
        reasons=reasons,
        reached_hami=reached,
        schedulers=schedulers,
        findings=findings,
        checked_against=source if summary is not None else None,
    )


def _main_shape(requests: tuple[ContainerRequest, ...]) -> Shape | None:
    """The container request HAMi filters on: the largest of the app containers' shapes."""
    shapes = [r.shape for r in requests if r.shape is not None and not r.init]
    shapes = shapes or [r.shape for r in requests if r.shape is not None]
    return max(shapes, key=lambda s: s.gpus, default=None)


def _findings(
    pod: PodDescription,
    requests: tuple[ContainerRequest, ...],
    reasons: tuple[CodedReason, ...],
    summary: Summary,
    split_count: int | None,
) -> tuple[crosscheck.Finding, ...]:
    shape = _main_shape(requests)
    models = annotation_list(pod, USE_TYPE)
    avoid = annotation_list(pod, NO_USE_TYPE)
    uuids = annotation_list(pod, USE_UUID) + annotation_list(pod, NO_USE_UUID)
    gpus = crosscheck.allowed_gpus(summary.gpus, models, avoid)
    found: list[crosscheck.Finding] = []
    for reason in reasons:
        code = reason.code
        if code in ("CardTypeMismatch", "CardUuidMismatch"):
            found.append(crosscheck.check_models(code, models, avoid, uuids, summary.gpus))
        elif code == "CardTimeSlicingExhausted":
            found.append(crosscheck.check_time_slicing(gpus, split_count))
        elif shape is None:
            continue
        elif code == "CardInsufficientMemory":
            found.append(crosscheck.check_memory(shape, gpus))
        elif code == "CardInsufficientCore":
            found.append(crosscheck.check_cores(shape, gpus))
        elif code in ("NodeInsufficientDevice", "AllocatedCardsInsufficientRequest"):
            found.append(crosscheck.check_device_count(code, shape, gpus))
        elif code == "ResourceQuotaNotFit":
            found.append(crosscheck.check_quota(pod.namespace, shape, gpus, summary.namespaces))
    return tuple(found)
