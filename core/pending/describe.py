"""A pasted ``kubectl describe pod`` or ``kubectl get events``, read into what ``why`` needs.

``kubectl describe pod`` prints ``Key:  value`` lines, sections indented by two spaces
(``Containers:`` / ``Init Containers:`` with ``Limits:`` and ``Requests:`` per container,
``Annotations:`` continued on aligned lines) and an ``Events:`` table whose columns are
``Type Reason Age From Message``. Ages are ``18m`` or ``11s (x14 over 18m)`` (an event seen 14
times). ``kubectl get events`` prints ``LAST SEEN TYPE REASON OBJECT MESSAGE`` (``NAMESPACE``
first with ``-A``). Pastes lose alignment and get cut, so rows are read by their shape, not by
column offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime

# Every pattern reads pasted text, so each is linear: possessive runs over disjoint classes.
_AGE = r"(?:<unknown>|[^\s(]++(?: \(x\d++ over [^\s)]++\))?+)"
_EVENT_TAIL = r"(?P<type>Normal|Warning)\s++(?P<reason>\S++)\s++"
_DESCRIBE_EVENT = re.compile(
    rf"^\s*+{_EVENT_TAIL}(?P<age>{_AGE})\s++(?P<source>\S++)\s++(?P<message>.*+)$"
)
_GET_EVENT_ROW = rf"(?P<age>{_AGE})\s++{_EVENT_TAIL}(?P<object>[a-z]++/\S++)\s++(?P<message>.*+)$"
_GET_EVENT = re.compile(rf"^\s*+{_GET_EVENT_ROW}")
_GET_EVENT_WITH_NAMESPACE = re.compile(rf"^\s*+(?P<namespace>\S++)\s++{_GET_EVENT_ROW}")
_SEEN = re.compile(r"\(x(\d++) over")
_KEY_VALUE = re.compile(r"^(?P<indent> *+)(?P<key>[A-Za-z][\w .\-/]*+):(?:\s++(?P<value>.*+))?+$")
_QUANTITY = re.compile(r"^(\d++)(k|M|G|T|Ki|Mi|Gi|Ti)?+$")
_QUANTITY_FACTOR = {
    None: 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
}  # fmt: skip

# Resource names HAMi schedules (its device config's defaults, per vendor); an extra name of a
# custom config is still shown, from its domain.
HAMI_RESOURCE_DOMAINS = (
    "nvidia.com/gpu",
    "cambricon.com/",
    "hygon.com/",
    "huawei.com/ascend",
    "iluvatar.ai/",
    "metax-tech.com/",
    "mthreads.com/",
    "enflame.com/",
    "kunlunxin.com/",
    "aws.amazon.com/neuron",
)


def is_hami_resource(name: str) -> bool:
    lowered = name.lower()
    return any(lowered.startswith(domain) for domain in HAMI_RESOURCE_DOMAINS)


@dataclass(frozen=True, slots=True)
class PodEvent:
    type: str
    reason: str
    age: str  # as kubectl writes it: ``11s (x14 over 18m)``
    source: str
    message: str
    times_seen: int = 1


def _times_seen(age: str) -> int:
    seen = _SEEN.search(age)
    return int(seen.group(1)) if seen else 1


@dataclass(frozen=True, slots=True)
class ContainerResources:
    name: str
    init: bool
    limits: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)

    def hami_resources(self) -> dict[str, str]:
        """HAMi's resources of the container: its limits, or its requests where no limit is set."""
        merged = {**self.requests, **self.limits}
        return {name: value for name, value in merged.items() if is_hami_resource(name)}


@dataclass(frozen=True, slots=True)
class PodDescription:
    name: str = ""
    namespace: str = ""
    status: str = ""
    node: str = ""
    annotations: dict[str, str] = field(default_factory=dict)
    containers: tuple[ContainerResources, ...] = ()
    events: tuple[PodEvent, ...] = ()
    events_shown: bool = False  # an Events section or event table was found (maybe empty)
    scheduler_name: str = ""  # spec.schedulerName; a describe output does not show it
    pending_since: datetime | None = None  # from the API: when the pod became unschedulable

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def quantity(text: str) -> int | None:
    """A whole Kubernetes quantity (``3000``, ``20k``, ``2``); None when it is not one."""
    found = _QUANTITY.match(text.strip().strip('"'))
    if not found:
        return None
    return int(found.group(1)) * _QUANTITY_FACTOR[found.group(2)]


def looks_like_pod_text(text: str) -> bool:
    """Whether ``text`` is a describe output or an event list (so a paste is read as one)."""
    has_events = "FilteringFailed" in text or "FailedScheduling" in text
    return has_events or (text.lstrip().startswith("Name:") and "\nEvents:" in text)


def starts_pod_text(line: str) -> bool:
    """Whether ``line`` is the first line of a describe output (``Name:``) or of an event
    list (its ``LAST SEEN`` header, after ``NAMESPACE`` with ``-A``): a terminal reads the
    lines after it as one paste."""
    words = line.split()
    return (
        line.startswith("Name:")
        or words[:2] == ["LAST", "SEEN"]
        or words[1:3]
        == [
            "LAST",
            "SEEN",
        ]
    )


def read_pod_text(text: str) -> PodDescription:
    """Read a describe output or an event list; fields it does not hold stay empty."""
    lines = text.replace("\r\n", "\n").replace("\t", "    ").split("\n")
    top: dict[str, str] = {}
    annotations: dict[str, str] = {}
    containers: list[ContainerResources] = []
    events: list[PodEvent] = []
    events_shown = False
    section = ""
    container: ContainerResources | None = None
    block = ""  # Limits / Requests under a container
    for line in lines:
        if not line.strip():
            continue
        if section == "Events":
            _event_row(line, events)
            continue
        entry = _KEY_VALUE.match(line)
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0 and entry:
            section = entry["key"]
            container, block = None, ""
            value = (entry["value"] or "").strip()
            top[section] = value
            if section == "Events":
                events_shown = True
            elif section == "Annotations" and value and value != "<none>":
                _annotation(value, annotations)
            continue
        if indent == 0 and _get_event(line):
            events_shown = True
            _event_row(line, events)
            continue
        if line.lstrip().startswith("LAST SEEN"):
            events_shown = True
            continue
        if section == "Annotations" and indent > 0:
            _annotation(line.strip(), annotations)
        elif section in ("Containers", "Init Containers") and entry:
            if indent == 2 and entry["value"] is None:
                container = ContainerResources(entry["key"], init=section == "Init Containers")
                containers.append(container)
                block = ""
            elif container is not None and indent == 4:
                block = entry["key"] if entry["value"] is None else ""
            elif container is not None and indent >= 6 and block in ("Limits", "Requests"):
                target = container.limits if block == "Limits" else container.requests
                target[entry["key"].strip()] = (entry["value"] or "").strip()
    return PodDescription(
        name=top.get("Name", ""),
        namespace=top.get("Namespace", ""),
        status=top.get("Status", ""),
        node=top.get("Node", ""),
        annotations=annotations,
        containers=tuple(containers),
        events=tuple(events),
        events_shown=events_shown,
    )


def _annotation(text: str, annotations: dict[str, str]) -> None:
    key, _, value = text.partition(":")
    if key.strip() and "=" not in key:
        annotations[key.strip()] = value.strip()
    elif "=" in text:  # older kubectl prints key=value
        key, _, value = text.partition("=")
        annotations[key.strip()] = value.strip()


def _get_event(line: str) -> re.Match[str] | None:
    """A ``kubectl get events`` row, with or without its NAMESPACE column (``-A``)."""
    return _GET_EVENT.match(line) or _GET_EVENT_WITH_NAMESPACE.match(line)


def _event_row(line: str, events: list[PodEvent]) -> None:
    stripped = line.strip()
    if stripped in ("<none>",) or stripped.startswith(("Type ", "----", "LAST SEEN")):
        return
    found = _DESCRIBE_EVENT.match(line) or _get_event(line)
    if found:
        events.append(
            PodEvent(
                type=found["type"],
                reason=found["reason"],
                age=found["age"],
                source=found["source"] if "source" in found.groupdict() else "",
                message=found["message"].strip(),
                times_seen=_times_seen(found["age"]),
            )
        )
    elif events:  # a message continued on the next line
        last = events[-1]
        events[-1] = replace(last, message=f"{last.message} {stripped}")
