"""The ``digests`` and ``alerts`` fields of a registry entry, read with file, line and field.

    digests:
      - channel: C0GPUOPS            # where it is posted
        at: "09:00"                   # local time of day (quote it: YAML reads 9:00 as a number)
        time_zone: Europe/Berlin      # IANA name; default UTC
        weekdays: mon-fri             # or [mon, wed, fri], or daily (the default)
    alerts:
      - channel: C0GPUOPS
        free_whole_gpus_below: 2      # one condition per rule, see RULE_KEYS
        model: H100
        for: 10m                      # optional: how long it must hold before it fires

The values themselves are read by ``core.notify.values``; this module finds them in the YAML
tree and puts the location in front of its messages.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Protocol

import yaml

from bot.clusters.errors import RegistryError
from core.notify import values
from core.notify.rules import AlertRule, RuleKind
from core.notify.schedule import Digest, DigestSchedule

Fields = dict[str, tuple[yaml.Node, yaml.Node]]

_CHANNEL = re.compile(r"^[CG][A-Z0-9]{2,30}$")
_RULE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,62}$")
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

DIGEST_FIELDS = ("name", "channel", "at", "time_zone", "weekdays", "context", "report", "since")
# The condition of a rule, one per rule: registry key -> (kind, what its value is).
RULE_KEYS: dict[str, tuple[RuleKind, str]] = {
    "free_whole_gpus_below": ("free_whole_gpus_below", "gpus"),
    "namespace_quota_above_percent": ("namespace_quota_above", "percent"),
    "cores_allocated_above_percent": ("cores_allocated_above", "percent"),
    "memory_allocated_above_percent": ("memory_allocated_above", "percent"),
    "inconsistent_gpus": ("inconsistent_gpus", "true"),
    "scrape_failing_for": ("scrape_failing", "duration"),
    "utilisation_below_percent": ("low_utilisation", "percent"),
    "pods_pending_longer_than": ("pods_pending", "duration"),
}
# Fields that only go with one condition.
_ONLY_WITH = {
    "model": ("free_whole_gpus_below",),
    "namespace": ("namespace_quota_above_percent", "pods_pending_longer_than"),
}
ALERT_FIELDS = ("name", "channel", "context", "for", "model", "namespace", *RULE_KEYS)


def _usable_name(text: str) -> str:
    """A default name from declared words (a model such as "NVIDIA H100 80GB")."""
    usable = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_.:-") else "-" for ch in text)
    return usable.strip("-")[:63]


class NodeReader(Protocol):
    """What the registry parser offers: located errors and values of YAML nodes."""

    file: Path

    def error(self, node: yaml.Node | None, what: str) -> RegistryError: ...

    def value(self, node: yaml.Node) -> Any: ...

    def mapping(self, node: yaml.MappingNode, where: str) -> Fields: ...


class _Items:
    """Reads one list of declarations (``digests`` or ``alerts``) of one cluster."""

    def __init__(
        self, reader: NodeReader, label: str, contexts: tuple[str, ...], runtime_allowed: bool
    ) -> None:
        self.reader = reader
        self.label = label
        self.contexts = contexts
        self.runtime_allowed = runtime_allowed

    def bodies(self, fields: Fields, key: str) -> list[tuple[str, yaml.MappingNode, Fields]]:
        if key not in fields:
            return []
        node = fields[key][1]
        if isinstance(node, yaml.ScalarNode) and self.reader.value(node) is None:
            return []
        if not isinstance(node, yaml.SequenceNode):
            raise self.reader.error(node, f'{self.label}: field "{key}" must be a list')
        found = []
        for index, item in enumerate(node.value):
            where = f"{self.label}: {key}[{index}]"
            if not isinstance(item, yaml.MappingNode):
                raise self.reader.error(item, f"{where} must be a mapping")
            found.append((where, item, self.reader.mapping(item, where)))
        return found

    def check_known(self, where: str, fields: Fields, known: tuple[str, ...]) -> None:
        for key, (key_node, _) in fields.items():
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                raise self.reader.error(
                    key_node, f'{where}: unknown field "{key}"{hint}. Known: ' + ", ".join(known)
                )

    def read(self, where: str, fields: Fields, key: str, parse: Any) -> Any:
        """``parse(value)`` of field ``key``, its ``NotifyValueError`` located."""
        node = fields[key][1]
        raw = self.reader.value(node)
        if key == "at" and isinstance(raw, int) and isinstance(node, yaml.ScalarNode):
            raw = node.value  # YAML 1.1 reads an unquoted 9:30 as the number 570
        try:
            return parse(raw)
        except values.NotifyValueError as error:
            raise self.reader.error(node, f'{where}: field "{key}": {error.message}') from None

    def required(self, where: str, body: yaml.Node, fields: Fields, key: str) -> None:
        if key not in fields:
            raise self.reader.error(body, f'{where}: field "{key}" is required')

    def channel(self, where: str, body: yaml.Node, fields: Fields) -> str:
        self.required(where, body, fields, "channel")
        node = fields["channel"][1]
        raw = self.reader.value(node)
        if not isinstance(raw, str) or not _CHANNEL.match(raw.strip()):
            raise self.reader.error(
                node,
                f'{where}: field "channel": {raw!r} is not a Slack channel id; give the id '
                "(C... or G..., from the channel's details), e.g. C0123ABCD",
            )
        return raw.strip()

    def context(self, where: str, body: yaml.Node, fields: Fields) -> str | None:
        if "context" not in fields:
            if len(self.contexts) > 1:
                raise self.reader.error(
                    body,
                    f"{where}: the cluster has several contexts ({', '.join(self.contexts)}); "
                    'give "context" to say which one',
                )
            return self.contexts[0] if self.contexts else None
        node = fields["context"][1]
        raw = self.reader.value(node)
        if raw not in self.contexts:
            known = ", ".join(self.contexts) if self.contexts else "none: it has no kubeconfig"
            raise self.reader.error(
                node,
                f'{where}: field "context": {raw!r} is not a context of this cluster '
                f"(its contexts: {known})",
            )
        return str(raw)

    def name(
        self, where: str, body: yaml.Node, fields: Fields, default: str, seen: dict[str, int]
    ) -> str:
        node = fields["name"][1] if "name" in fields else None
        raw = self.reader.value(node) if node is not None else _usable_name(default)
        if not isinstance(raw, str) or not _RULE_NAME.match(raw):
            raise self.reader.error(
                node or body,
                f'{where}: field "name": {raw!r} is not a usable name; use letters, digits, '
                "'.', '_', ':' and '-' (up to 63 characters)",
            )
        if raw in seen:
            raise self.reader.error(
                node or body,
                f'{where}: the name "{raw}" is already used at line {seen[raw]} of this cluster; '
                'give each one its own "name"',
            )
        return raw


def read_digests(
    reader: NodeReader, fields: Fields, label: str, contexts: tuple[str, ...]
) -> tuple[Digest, ...]:
    items = _Items(reader, label, contexts, runtime_allowed=False)
    digests: list[Digest] = []
    seen: dict[str, int] = {}
    for where, body, item in items.bodies(fields, "digests"):
        items.check_known(where, item, DIGEST_FIELDS)
        channel = items.channel(where, body, item)
        items.required(where, body, item, "at")
        at = items.read(where, item, "at", values.clock_time)
        zone = (
            items.read(where, item, "time_zone", values.time_zone)
            if "time_zone" in item
            else values.time_zone("UTC")
        )
        days = (
            items.read(where, item, "weekdays", values.weekdays)
            if "weekdays" in item
            else frozenset(range(7))
        )
        report = (
            items.read(where, item, "report", values.digest_report)
            if "report" in item
            else "summary"
        )
        if "since" in item and report != "gpu-hours":
            raise reader.error(
                item["since"][0], f'{where}: field "since" goes with report: gpu-hours'
            )
        span = (
            items.read(where, item, "since", values.report_span)
            if "since" in item
            else 7 * 86_400.0
        )
        default_name = f"{channel}-{at:%H%M}" + ("-gpu-hours" if report == "gpu-hours" else "")
        name = items.name(where, body, item, default_name, seen)
        line = body.start_mark.line + 1
        seen[name] = line
        digests.append(
            Digest(
                name=name,
                channel=channel,
                schedule=DigestSchedule(at, zone, days),
                context=items.context(where, body, item),
                defined_at=f"{reader.file}:{line}",
                report=report,
                span_seconds=span,
            )
        )
    return tuple(digests)


def _condition_key(items: _Items, where: str, body: yaml.Node, fields: Fields) -> str:
    given = [key for key in fields if key in RULE_KEYS]  # in the order of the file
    if len(given) != 1:
        at = fields[given[1]][0] if len(given) > 1 else body
        raise items.reader.error(
            at,
            f"{where}: give exactly one condition per rule, one of "
            + ", ".join(RULE_KEYS)
            + f" (found: {', '.join(given) or 'none'})",
        )
    key = given[0]
    for extra, needs in _ONLY_WITH.items():
        if extra in fields and key not in needs:
            raise items.reader.error(
                fields[extra][0],
                f'{where}: field "{extra}" only goes with ' + " or ".join(f'"{n}"' for n in needs),
            )
    return key


def _threshold(items: _Items, where: str, fields: Fields, key: str) -> float:
    what = RULE_KEYS[key][1]
    if what == "gpus":
        return float(items.read(where, fields, key, values.gpu_count))
    if what == "percent":
        return float(items.read(where, fields, key, values.percent))
    if what == "duration":
        return float(items.read(where, fields, key, values.duration_seconds))
    node = fields[key][1]
    if items.reader.value(node) is not True:
        raise items.reader.error(node, f'{where}: field "{key}" must be true')
    return 0.0


def _text(items: _Items, where: str, fields: Fields, key: str) -> str | None:
    if key not in fields:
        return None
    node = fields[key][1]
    raw = items.reader.value(node)
    if not isinstance(raw, str) or not raw.strip():
        raise items.reader.error(node, f'{where}: field "{key}" must be non-empty text')
    if key == "namespace" and not _NAMESPACE.match(raw.strip()):
        raise items.reader.error(
            node, f'{where}: field "namespace": {raw!r} is not a Kubernetes namespace name'
        )
    return raw.strip()


def _rule(
    items: _Items, where: str, body: yaml.Node, fields: Fields, seen: dict[str, int]
) -> AlertRule:
    items.check_known(where, fields, ALERT_FIELDS)
    key = _condition_key(items, where, body, fields)
    kind = RULE_KEYS[key][0]
    threshold = _threshold(items, where, fields, key)
    model, namespace = (
        _text(items, where, fields, "model"),
        _text(items, where, fields, "namespace"),
    )
    for_seconds = (
        items.read(where, fields, "for", values.duration_seconds) if "for" in fields else 0.0
    )
    if kind == "scrape_failing":
        if "for" in fields:
            raise items.reader.error(
                fields["for"][0], f'{where}: "scrape_failing_for" is its own duration; drop "for"'
            )
        for_seconds, threshold = threshold, 0.0
    if kind == "low_utilisation":
        if "for" not in fields:
            raise items.reader.error(
                body,
                f'{where}: "utilisation_below_percent" needs "for" (e.g. for: 1h): how '
                "long a pod must stay under it",
            )
        if not items.runtime_allowed:
            raise items.reader.error(
                fields[key][0],
                f'{where}: "utilisation_below_percent" reads the vGPU monitors; '
                "set runtime_allowed: true on this cluster",
            )
    suffix = f"-{model or namespace}" if model or namespace else ""
    name = items.name(where, body, fields, f"{kind}{suffix}", seen)
    return AlertRule(
        name=name,
        kind=kind,
        channel=items.channel(where, body, fields),
        threshold=threshold,
        for_seconds=float(for_seconds),
        model=model,
        namespace=namespace,
        context=items.context(where, body, fields),
        defined_at=f"{items.reader.file}:{body.start_mark.line + 1}",
    )


def read_alerts(
    reader: NodeReader,
    fields: Fields,
    label: str,
    contexts: tuple[str, ...],
    runtime_allowed: bool,
) -> tuple[AlertRule, ...]:
    items = _Items(reader, label, contexts, runtime_allowed)
    rules: list[AlertRule] = []
    seen: dict[str, int] = {}
    for where, body, item in items.bodies(fields, "alerts"):
        rule = _rule(items, where, body, item, seen)
        seen[rule.name] = body.start_mark.line + 1
        rules.append(rule)
    return tuple(rules)
