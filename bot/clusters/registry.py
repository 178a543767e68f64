"""The cluster registry: which clusters the bot may query, how to reach them, and who may ask.

A YAML file (``HAMI_CLUSTERS_FILE``), validated once at start-up. Every error names the file,
the line and the field, because the person fixing it has the file open in an editor::

    clusters:
      - name: prod                      # what users type: /hami-summary prod
        display_name: Production (eu-west-1)
        kubeconfig: kubeconfigs/prod.yaml   # relative to this file
        contexts: [prod-readonly]       # or context: prod-readonly; default: every context
        hami_namespace: kube-system     # optional; default: search every namespace
        allowed_channels: [C0123ABCD]
        allowed_users: [U0123ABCD]
        allowed_user_groups: [S0123ABCD]
        cache_ttl_seconds: 60
        runtime_allowed: true           # vGPU monitor scrapes
        nvidia_smi_allowed: false       # exec nvidia-smi in pods
        pod_namespaces: [ml, team-a]    # pending / why: only these; default: every namespace
      - name: fleet-eu
        prometheus_url: https://thanos.example.com
        prometheus_selector: 'cluster="eu-1"'
      - name: demo
        metrics_url: http://127.0.0.1:9395/metrics
      - name: here
        in_cluster: true

An entry may also declare ``digests`` and ``alerts`` for the notifier (read by
``bot.clusters.notify_fields``, posted by ``bot.notify``).

``clusters`` may also be a mapping from name to settings. Access is closed by default: a cluster
without ``allowed_*`` entries is visible to nobody (``"*"`` opens a list to everyone).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

import yaml

from bot.clusters.errors import KubeconfigError, RegistryError
from bot.clusters.kubeconfig_file import NotAKubeconfig, read_kubeconfig
from bot.clusters.notify_fields import read_alerts, read_digests
from bot.clusters.url_display import display_url
from core.notify.rules import AlertRule
from core.notify.schedule import Digest

SourceKind = Literal["kubeconfig", "in-cluster", "metrics-url", "prometheus"]

DEFAULT_CACHE_TTL_SECONDS = 60.0
DEFAULT_TIMEOUT_SECONDS = 10.0
EVERYONE = "*"

# Cluster names are typed in Slack commands; keep them to one shell- and URL-safe word.
# The words after /hami-summary that are commands: a cluster of that name could never be asked.
COMMAND_WORDS = frozenset({"help", "usage", "clusters", "list", "fleet", "admin", "digests"})
_NAME = re.compile(r"^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$")
# RFC 1123 label, as Kubernetes requires for namespace names.
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# PromQL label matchers: name op "value", comma separated (op one of = != =~ !~).
_MATCHER = re.compile(r'\s*+[a-zA-Z_][a-zA-Z0-9_]*+\s*+(=~|!~|!=|=)\s*+"(?:[^"\\]++|\\.)*+"\s*+')

_FIELDS = (
    "name",
    "display_name",
    "kubeconfig",
    "context",
    "contexts",
    "in_cluster",
    "metrics_url",
    "prometheus_url",
    "prometheus_selector",
    "hami_namespace",
    "allowed_channels",
    "allowed_users",
    "allowed_user_groups",
    "cache_ttl_seconds",
    "timeout_seconds",
    "runtime_allowed",
    "nvidia_smi_allowed",
    "pod_namespaces",
    "digests",
    "alerts",
)
_SOURCE_FIELDS = ("kubeconfig", "in_cluster", "metrics_url", "prometheus_url")

# field name -> (key node, value node)
Fields = dict[str, tuple[yaml.Node, yaml.Node]]


@dataclass(frozen=True, slots=True)
class ClusterEntry:
    """One registered cluster. Holds paths and URLs, never credentials."""

    name: str
    display_name: str
    source_kind: SourceKind
    contexts: tuple[str, ...] = ()  # empty unless source_kind == "kubeconfig"
    kubeconfig_path: Path | None = None
    metrics_url: str | None = None
    prometheus_url: str | None = None
    prometheus_selector: str | None = None  # e.g. cluster="prod"
    hami_namespace: str | None = None  # None: search every namespace the credentials can list
    allowed_channels: frozenset[str] = frozenset()
    allowed_users: frozenset[str] = frozenset()
    allowed_user_groups: frozenset[str] = frozenset()
    cache_ttl_seconds: float = DEFAULT_CACHE_TTL_SECONDS
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    runtime_allowed: bool = False
    nvidia_smi_allowed: bool = False
    # ``pending`` and ``why`` read pods and events only here; empty: every namespace the
    # credentials can list.
    pod_namespaces: tuple[str, ...] = ()
    defined_at: str = ""  # "file:line", for messages that send an admin to the entry
    # Posted by the bot unasked (``bot.notify``): scheduled summaries and alert rules.
    digests: tuple[Digest, ...] = ()
    alerts: tuple[AlertRule, ...] = ()

    def allows(self, user_id: str, channel_id: str | None, user_groups: Iterable[str] = ()) -> bool:
        """True when the user is listed (directly or by a user group) or asks from a listed
        channel. Nothing listed means nobody: a new install leaks nothing."""
        if EVERYONE in self.allowed_users or user_id in self.allowed_users:
            return True
        if EVERYONE in self.allowed_user_groups or not self.allowed_user_groups.isdisjoint(
            user_groups
        ):
            return True
        return channel_id is not None and (
            EVERYONE in self.allowed_channels or channel_id in self.allowed_channels
        )

    def describe_source(self) -> str:
        """Where the metrics come from, in words (paths and URLs only; no credentials)."""
        if self.source_kind == "kubeconfig":
            return f"kubeconfig {self.kubeconfig_path} (contexts: {', '.join(self.contexts)})"
        if self.source_kind == "in-cluster":
            return "the bot's in-cluster service account"
        if self.source_kind == "metrics-url":
            return f"metrics URL {display_url(self.metrics_url or '')}"
        selector = f" {{{self.prometheus_selector}}}" if self.prometheus_selector else ""
        return f"Prometheus {display_url(self.prometheus_url or '')}{selector}"


@dataclass(frozen=True, slots=True)
class ClusterRegistry:
    entries: tuple[ClusterEntry, ...]
    path: Path | None = None
    _by_name: dict[str, ClusterEntry] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({e.name: e for e in self.entries})

    def get(self, name: str) -> ClusterEntry | None:
        return self._by_name.get(name)

    def visible_to(
        self, user_id: str, channel_id: str | None, user_groups: Iterable[str] = ()
    ) -> list[ClusterEntry]:
        groups = frozenset(user_groups)
        return [e for e in self.entries if e.allows(user_id, channel_id, groups)]


def empty_registry() -> ClusterRegistry:
    return ClusterRegistry(entries=())


def load_registry(path: str | Path) -> ClusterRegistry:
    """Read and validate the registry file; raises ``RegistryError`` naming file, line and field."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise RegistryError(
            f"{file}: cluster registry file not found. Create it (see docs/clusters.md, "
            '"Cluster registry") or unset HAMI_CLUSTERS_FILE to run without live clusters.'
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{file}: cannot read the cluster registry: {exc}") from exc
    return _Parser(file).parse(text)


class _Parser:
    """Walks the YAML node tree (not plain data) so every message can carry a line number."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.loader: yaml.SafeLoader | None = None

    def error(self, node: yaml.Node | None, what: str) -> RegistryError:
        line = f":{node.start_mark.line + 1}" if node is not None else ""
        return RegistryError(f"{self.file}{line}: {what}")

    def value(self, node: yaml.Node) -> Any:
        assert self.loader is not None
        return self.loader.construct_object(node, deep=True)

    def parse(self, text: str) -> ClusterRegistry:
        self.loader = yaml.SafeLoader(text)
        try:
            root = self.loader.get_single_node()
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise RegistryError(
                f"{self.file}{where}: not valid YAML ({problem}). Fix the syntax at that line."
            ) from exc
        finally:
            self.loader.dispose()
        if root is None:
            return ClusterRegistry(entries=(), path=self.file)
        if not isinstance(root, yaml.MappingNode):
            raise self.error(root, 'the file must be a mapping with a "clusters" key')
        top = self.mapping(root, "the top level")
        unknown = [k for k in top if k != "clusters"]
        if unknown:
            key_node = top[unknown[0]][0]
            raise self.error(key_node, f'unknown top-level key "{unknown[0]}"; expected "clusters"')
        if "clusters" not in top:
            return ClusterRegistry(entries=(), path=self.file)
        clusters_node = top["clusters"][1]
        items = self.cluster_items(clusters_node)
        entries: list[ClusterEntry] = []
        seen: dict[str, int] = {}
        for name_node, name, body, label in items:
            entry = self.entry(name_node, name, body, label)
            entry = self.notifications(entry, body, label)
            if entry.name in seen:
                raise self.error(
                    name_node,
                    f'{label} ("{entry.name}"): cluster name "{entry.name}" is already used at '
                    f"line {seen[entry.name]}; names must be unique",
                )
            seen[entry.name] = name_node.start_mark.line + 1 if name_node else 0
            entries.append(entry)
        return ClusterRegistry(entries=tuple(entries), path=self.file)

    def notifications(
        self, entry: ClusterEntry, body: yaml.MappingNode, label: str
    ) -> ClusterEntry:
        """The entry with its ``digests`` and ``alerts`` (``bot.clusters.notify_fields``)."""
        fields = self.mapping(body, label)
        label = f'{label} ("{entry.name}")'
        return replace(
            entry,
            digests=read_digests(self, fields, label, entry.contexts),
            alerts=read_alerts(self, fields, label, entry.contexts, entry.runtime_allowed),
        )

    def mapping(self, node: yaml.MappingNode, where: str) -> Fields:
        """key -> (key node, value node); duplicate keys are an error (YAML would keep the last)."""
        result: Fields = {}
        for key_node, value_node in node.value:
            key = self.value(key_node)
            if not isinstance(key, str):
                raise self.error(key_node, f"{where}: keys must be text, got {key!r}")
            if key in result:
                raise self.error(key_node, f'{where}: "{key}" is given twice')
            result[key] = (key_node, value_node)
        return result

    def cluster_items(
        self, node: yaml.Node
    ) -> list[tuple[yaml.Node | None, str | None, yaml.MappingNode, str]]:
        """(node of the name, name if given by a mapping key, body node, label for messages)."""
        items: list[tuple[yaml.Node | None, str | None, yaml.MappingNode, str]] = []
        if isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                if not isinstance(item, yaml.MappingNode):
                    raise self.error(item, f"clusters[{i}]: each cluster must be a mapping")
                items.append((item, None, item, f"clusters[{i}]"))
        elif isinstance(node, yaml.MappingNode):
            for key, (key_node, body) in self.mapping(node, "clusters").items():
                if not isinstance(body, yaml.MappingNode):
                    raise self.error(body, f"clusters.{key}: settings must be a mapping")
                items.append((key_node, key, body, f"clusters.{key}"))
        elif isinstance(node, yaml.ScalarNode) and self.value(node) is None:
            return []
        else:
            raise self.error(node, '"clusters" must be a list (or a mapping by name) of clusters')
        return items

    def entry(
        self, name_node: yaml.Node | None, key_name: str | None, body: yaml.MappingNode, label: str
    ) -> ClusterEntry:
        """One cluster of the registry, every field checked, its source applied."""
        fields = self.mapping(body, label)
        name, name_at = self.entry_name(fields, name_node, key_name, body, label)
        label = f'{label} ("{name}")'
        self.check_known(fields, label)
        source = self.source_field(fields, body, label)
        base = ClusterEntry(
            name=name,
            display_name=self.text(fields, "display_name", label) or name,
            source_kind="in-cluster",
            hami_namespace=self.namespace(fields, label),
            allowed_channels=self.id_list(fields, "allowed_channels", label),
            allowed_users=self.id_list(fields, "allowed_users", label),
            allowed_user_groups=self.id_list(fields, "allowed_user_groups", label),
            cache_ttl_seconds=self.seconds(
                fields, "cache_ttl_seconds", label, DEFAULT_CACHE_TTL_SECONDS, allow_zero=True
            ),
            timeout_seconds=self.seconds(
                fields, "timeout_seconds", label, DEFAULT_TIMEOUT_SECONDS, allow_zero=False
            ),
            runtime_allowed=self.flag(fields, "runtime_allowed", label),
            nvidia_smi_allowed=self.flag(fields, "nvidia_smi_allowed", label),
            pod_namespaces=self.namespaces(fields, "pod_namespaces", label),
            defined_at=f"{self.file}:{(name_at or body).start_mark.line + 1}",
        )
        return self.with_source(base, source, fields, label)

    def entry_name(
        self,
        fields: Fields,
        name_node: yaml.Node | None,
        key_name: str | None,
        body: yaml.MappingNode,
        label: str,
    ) -> tuple[str, yaml.Node | None]:
        """The cluster's name (from its mapping key or its ``name`` field) and where it is
        written; a name must be valid and must not be a word of the command itself."""
        if key_name is not None:
            if "name" in fields:
                raise self.error(
                    fields["name"][0], f'{label}: "name" is given by the mapping key already'
                )
            name = key_name
            name_at = name_node
        else:
            if "name" not in fields:
                raise self.error(body, f'{label}: field "name" is required')
            name_at = fields["name"][1]
            name = self.text(fields, "name", label) or ""
        if not _NAME.match(name):
            raise self.error(
                name_at,
                f'{label}: field "name": "{name}" is not a valid cluster name; use lower-case '
                "letters, digits, '.', '_' and '-' (up to 63 characters), e.g. prod-eu",
            )
        if name in COMMAND_WORDS:
            raise self.error(
                name_at,
                f'{label}: field "name": "{name}" is a word of /hami-summary itself '
                f"(/hami-summary {name} does something else), so no cluster could be asked by "
                "that name; choose another, e.g. gpu-" + name,
            )
        return name, name_at

    def check_known(self, fields: Fields, label: str) -> None:
        """Every field is one the registry knows; a misspelt one names the closest."""
        for key, (key_node, _) in fields.items():
            if key not in _FIELDS:
                close = difflib.get_close_matches(key, _FIELDS, n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                raise self.error(
                    key_node,
                    f'{label}: unknown field "{key}"{hint}. Known fields: ' + ", ".join(_FIELDS),
                )

    def source_field(self, fields: Fields, body: yaml.MappingNode, label: str) -> str:
        """The one source field given (kubeconfig, in_cluster, metrics_url, prometheus_url);
        the fields that belong to another source are an error."""
        given = [
            k
            for k in _SOURCE_FIELDS
            if k in fields and self.value(fields[k][1]) not in (None, False)
        ]
        if len(given) != 1:
            at = fields[given[1]][0] if len(given) > 1 else body
            found = ", ".join(given) if given else "none"
            raise self.error(
                at,
                f"{label}: give exactly one source: kubeconfig (with context/contexts), "
                f"in_cluster: true, metrics_url or prometheus_url (found: {found})",
            )
        source = given[0]
        for dependent, needs in (
            ("context", "kubeconfig"),
            ("contexts", "kubeconfig"),
            ("prometheus_selector", "prometheus_url"),
        ):
            if dependent in fields and source != needs:
                raise self.error(
                    fields[dependent][0], f'{label}: field "{dependent}" only applies with {needs}'
                )
        return source

    def with_source(
        self, base: ClusterEntry, source: str, fields: Fields, label: str
    ) -> ClusterEntry:
        """``base`` reading its metrics from ``source``, with that source's fields."""
        if source == "kubeconfig":
            path, contexts = self.kubeconfig(fields, label)
            return replace(base, source_kind="kubeconfig", kubeconfig_path=path, contexts=contexts)
        if source == "in_cluster":
            if self.value(fields["in_cluster"][1]) is not True:
                raise self.error(fields["in_cluster"][1], f'{label}: "in_cluster" must be true')
            return base
        if source == "metrics_url":
            url = self.url(fields, "metrics_url", label)
            return replace(base, source_kind="metrics-url", metrics_url=url)
        url = self.url(fields, "prometheus_url", label)
        selector = self.text(fields, "prometheus_selector", label)
        if selector is not None:
            self.check_selector(fields["prometheus_selector"][1], selector, label)
        return replace(
            base, source_kind="prometheus", prometheus_url=url, prometheus_selector=selector
        )

    # --- field readers -------------------------------------------------------------------

    def text(self, fields: Fields, key: str, label: str) -> str | None:
        if key not in fields:
            return None
        node = fields[key][1]
        value = self.value(node)
        if not isinstance(value, str) or not value.strip():
            raise self.error(node, f'{label}: field "{key}" must be non-empty text, got {value!r}')
        return value.strip()

    def flag(self, fields: Fields, key: str, label: str) -> bool:
        if key not in fields:
            return False
        node = fields[key][1]
        value = self.value(node)
        if not isinstance(value, bool):
            raise self.error(node, f'{label}: field "{key}" must be true or false, got {value!r}')
        return value

    def seconds(
        self,
        fields: Fields,
        key: str,
        label: str,
        default: float,
        *,
        allow_zero: bool,
    ) -> float:
        if key not in fields:
            return default
        node = fields[key][1]
        value = self.value(node)
        ok = (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and (value >= 0 if allow_zero else value > 0)
        )
        if not ok:
            bound = "0 or more" if allow_zero else "more than 0"
            raise self.error(
                node, f'{label}: field "{key}" must be a number of seconds, {bound}; got {value!r}'
            )
        return float(value)

    def id_list(self, fields: Fields, key: str, label: str) -> frozenset[str]:
        if key not in fields:
            return frozenset()
        node = fields[key][1]
        value = self.value(node)
        if isinstance(value, str):
            value = [value]
        if value is None:
            return frozenset()
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.error(
                node,
                f'{label}: field "{key}" must be a list of Slack IDs (e.g. [C0123ABCD]) or "*", '
                f"got {value!r}",
            )
        return frozenset(v.strip() for v in value)

    def namespace(self, fields: Fields, label: str) -> str | None:
        value = self.text(fields, "hami_namespace", label)
        if value is not None and not _NAMESPACE.match(value):
            raise self.error(
                fields["hami_namespace"][1],
                f'{label}: field "hami_namespace": "{value}" is not a Kubernetes namespace name',
            )
        return value

    def namespaces(self, fields: Fields, key: str, label: str) -> tuple[str, ...]:
        if key not in fields:
            return ()
        node = fields[key][1]
        value = self.value(node)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(
                node,
                f'{label}: field "{key}" must be a list of Kubernetes namespace names '
                f"(e.g. [ml, team-a]), got {value!r}",
            )
        bad = [v for v in value if not _NAMESPACE.match(v)]
        if bad:
            raise self.error(
                node,
                f'{label}: field "{key}": "{bad[0]}" is not a Kubernetes namespace name '
                "(lower-case letters, digits and '-', up to 63 characters)",
            )
        return tuple(sorted(set(value)))

    def url(self, fields: Fields, key: str, label: str) -> str:
        value = self.text(fields, key, label) or ""
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise self.error(
                fields[key][1],
                f'{label}: field "{key}": "{display_url(value)}" is not an http(s) URL, e.g. '
                "http://hami-scheduler.kube-system:31993/metrics",
            )
        return value

    def check_selector(self, node: yaml.Node, selector: str, label: str) -> None:
        problem = selector_problem(selector)
        if problem is not None:
            raise self.error(node, f'{label}: field "prometheus_selector": {problem}')

    def kubeconfig(self, fields: Fields, label: str) -> tuple[Path, tuple[str, ...]]:
        node = fields["kubeconfig"][1]
        raw = self.text(fields, "kubeconfig", label) or ""
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = (self.file.parent / path).resolve()
        if "context" in fields and "contexts" in fields:
            raise self.error(
                fields["contexts"][0], f'{label}: give "context" or "contexts", not both'
            )
        try:
            info = read_kubeconfig(path)
        except (KubeconfigError, NotAKubeconfig) as exc:
            reason = exc.message if isinstance(exc, KubeconfigError) else exc.reason
            if not path.exists():
                reason = "the file does not exist"
            raise self.error(
                node, f'{label}: field "kubeconfig": {path} cannot be used: {reason}'
            ) from exc
        known = info.context_names
        if "context" in fields:
            wanted_node = fields["context"][1]
            wanted: tuple[str, ...] = (self.text(fields, "context", label) or "",)
        elif "contexts" in fields:
            wanted_node = fields["contexts"][1]
            value = self.value(wanted_node)
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(v, str) and v for v in value)
            ):
                raise self.error(
                    wanted_node, f'{label}: field "contexts" must be a non-empty list of names'
                )
            wanted = tuple(value)
        else:
            if not known:
                raise self.error(node, f'{label}: field "kubeconfig": {path} defines no contexts')
            return path, known
        missing = [c for c in wanted if c not in known]
        if missing:
            field_name = "context" if "context" in fields else "contexts"
            raise self.error(
                wanted_node,
                f'{label}: field "{field_name}": context "{missing[0]}" is not in {path} '
                f"(it has: {', '.join(known) or 'no contexts'})",
            )
        return path, wanted


def selector_problem(selector: str) -> str | None:
    """Why ``selector`` is not a list of PromQL label matchers, or None when it is."""
    position = 0
    while position < len(selector):
        match = _MATCHER.match(selector, position)
        if match is None:
            return (
                f"cannot read {selector!r} as PromQL label matchers; write e.g. "
                'cluster="prod" or cluster="prod",region=~"eu.*"'
            )
        position = match.end()
        if position < len(selector):
            if selector[position] != ",":
                return f'expected "," at character {position + 1} of {selector!r}'
            position += 1
    return None
