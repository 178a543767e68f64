"""The admin report: kubeconfig discovery and who may query each registered cluster.

Shown to the Slack users listed in ``HAMI_SUMMARY_ADMINS`` (ephemerally) and to the local
operator in ``hami-summary chat``. The discovery is ``bot.clusters.discovery``, the same as
``hami-summary clusters``; this module decides who may see it and lays it out, once, for both
surfaces (as ``bot.conversation.rich`` spans that each writes its own way).

Credentials never appear: discovery tells only which *kind* of credential a kubeconfig user has,
and URLs are shown without user-info or secret query values (``display_url``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.clusters.discovery import (
    DiscoveredKubeconfig,
    Discovery,
    default_kubeconfig_dir,
    discover_kubeconfigs,
)
from bot.clusters.errors import KubeconfigError
from bot.clusters.kubeconfig_file import ContextInfo
from bot.clusters.registry import EVERYONE, ClusterEntry, ClusterRegistry, empty_registry
from bot.clusters.url_display import display_url
from bot.conversation.rich import Alarm, Code, Line, Mention, MentionKind, Rich, Span, Strong, plain

ADMINS_SETTING = "HAMI_SUMMARY_ADMINS"
CHECK_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class AdminReport:
    """What an admin sees; built by ``AdminAccess.report``."""

    directory: Path
    directory_from: str  # "KUBECONFIG_DIR" or "the default"
    discovery: Discovery | None
    discovery_problem: str | None
    registry_file: Path | None
    clusters: tuple[ClusterEntry, ...]
    access_notes: tuple[str, ...] = ()
    checked: bool = False


@dataclass(frozen=True, slots=True)
class AdminAccess:
    """Who the bot's admins are and where discovery looks."""

    admins: frozenset[str] = frozenset()
    registry: ClusterRegistry = field(default_factory=empty_registry)
    # None: discovery's default, as for ``hami-summary clusters`` ($KUBECONFIG_DIR or ~/.kube).
    kubeconfig_dir: Path | None = None
    check_timeout_seconds: float = CHECK_TIMEOUT_SECONDS

    def allows(self, user: str | None) -> bool:
        """``user`` None is the local operator of ``hami-summary chat``: always an admin."""
        return user is None or user in self.admins

    def report(self, *, check: bool, access_notes: Sequence[str] = ()) -> AdminReport:
        """Scan the kubeconfig folder (and with ``check`` ask each usable context's API server
        ``GET /version``); nothing is scraped."""
        directory = self.kubeconfig_dir or default_kubeconfig_dir()
        directory_from = "KUBECONFIG_DIR" if self.kubeconfig_dir is not None else "the default"
        discovery: Discovery | None = None
        problem: str | None = None
        try:
            discovery = discover_kubeconfigs(
                directory, check=check, timeout_seconds=self.check_timeout_seconds
            )
        except KubeconfigError as error:
            problem = error.message
        return AdminReport(
            directory=directory,
            directory_from=directory_from,
            discovery=discovery,
            discovery_problem=problem,
            registry_file=self.registry.path,
            clusters=self.registry.entries,
            access_notes=tuple(access_notes),
            checked=check,
        )

    def refusal(self, user: str | None) -> str:
        """The polite no for someone who is not an admin, naming the setting."""
        return (
            "The admin report (kubeconfig files and who may query each cluster) is only for "
            f"the bot's admins: the Slack user ids listed in its {ADMINS_SETTING} setting"
            + (f" (your id is {user})" if user else "")
            + ". Ask whoever runs the bot to add you. Meanwhile `/hami-summary clusters` lists "
            "the clusters you may query here."
        )


# -- layout ----------------------------------------------------------------------------------
# The report is laid out once, as lines of spans (``bot.conversation.rich``): names from files
# are ``Code``, allowed Slack ids ``Mention``, problems marked with ``Alarm``; each surface
# writes them its own way.

WARN = Alarm()


def _context_line(discovered: DiscoveredKubeconfig, ctx: ContextInfo) -> tuple[Span, ...]:
    cluster: list[Span] = ["cluster ", Code(ctx.cluster or "?")]
    if ctx.server:
        cluster.append(f" ({display_url(ctx.server)})")
    user: list[Span] = ["user ", Code(ctx.user or "?")]
    if ctx.auth_kind:
        user.append(f" ({ctx.auth_kind})")
    namespace: list[Span] = [", namespace ", Code(ctx.namespace)] if ctx.namespace else []
    status: list[Span]
    if ctx.problems:
        status = [WARN, " " + "; ".join(ctx.problems)]
    else:
        check = discovered.check(ctx.name)
        if check is None:
            status = ["valid (resolves; credentials present)"]
        elif check.ok:
            status = ["ok, " + check.message]
        else:
            status = [WARN, " " + check.message]
    return ("    ◦ ", Code(ctx.name), ": ", *cluster, ", ", *user, *namespace, " — ", *status)


def _kubeconfig_file_lines(discovered: DiscoveredKubeconfig) -> list[Line]:
    info = discovered.info
    current: tuple[Span, ...] = (
        (" — current context ", Code(info.current_context)) if info.current_context else ()
    )
    lines: list[Line] = [("• ", Code(info.path.name), *current)]
    lines.extend(("    ", WARN, f" {problem}") for problem in info.problems)
    lines.extend(_context_line(discovered, ctx) for ctx in info.contexts)
    lines.append(("    clusters: ", *_names(info.clusters), " · users: ", *_names(info.users)))
    return lines


def _names(names: Sequence[str]) -> tuple[Span, ...]:
    """``a, b, c`` as code, or none."""
    if not names:
        return ("none",)
    spans: list[Span] = []
    for name in names:
        spans += [", ", Code(name)] if spans else [Code(name)]
    return tuple(spans)


def _kubeconfig_lines(report: AdminReport, check_hint: str) -> list[Line]:
    where: tuple[Span, ...] = (
        Code(str(report.directory)),
        f" (folder from {report.directory_from})",
    )
    title = Strong("Kubeconfig files")
    if report.discovery is None:
        return [
            (title, " in ", *where, ": none read."),
            (WARN, f" {report.discovery_problem or ''}"),
        ]
    discovery = report.discovery
    lines: list[Line] = [
        (
            title,
            " in ",
            *where,
            f": {len(discovery.kubeconfigs)} found"
            + (f", {len(discovery.skipped)} skipped" if discovery.skipped else "")
            + ". Nothing is scraped from them until a file and context are registered"
            " and asked for.",
        )
    ]
    for discovered in discovery.kubeconfigs:
        lines.extend(_kubeconfig_file_lines(discovered))
    if discovery.skipped:
        lines.append((Strong("Skipped"), " (not kubeconfigs):"))
        lines.extend(("• ", Code(s.path.name), f": {s.reason}") for s in discovery.skipped)
    if not report.checked and any(d.info.contexts for d in discovery.kubeconfigs):
        lines.append(
            "Each context was checked offline. To also ask each API server with the context's "
            f"credentials (GET /version): {check_hint}."
        )
    return lines


def _access(entry: ClusterEntry) -> tuple[Span, ...]:
    kinds: tuple[tuple[str, Collection[str], MentionKind], ...] = (
        ("channels", entry.allowed_channels, "channel"),
        ("users", entry.allowed_users, "user"),
        ("user groups", entry.allowed_user_groups, "group"),
    )
    parts: list[Span] = []
    for what, ids, kind in kinds:
        if not ids:
            continue
        parts.append("; " if parts else "")
        if EVERYONE in ids:
            parts.append(f"every one of the {what}")
            continue
        parts.append(f"{what} ")
        for number, one in enumerate(sorted(ids)):
            parts += [", ", Mention(kind, one)] if number else [Mention(kind, one)]
    if not parts:
        return (
            "nobody yet (add allowed_channels, allowed_users or allowed_user_groups"
            + (f" at {entry.defined_at}" if entry.defined_at else "")
            + ")",
        )
    return tuple(parts)


def _cluster_line(entry: ClusterEntry) -> tuple[Span, ...]:
    shown = f" ({entry.display_name})" if entry.display_name != entry.name else ""
    flags = (
        f"runtime {'allowed' if entry.runtime_allowed else 'off'} · nvidia-smi "
        f"{'allowed' if entry.nvidia_smi_allowed else 'off'} · cache "
        f"{entry.cache_ttl_seconds:g} s"
    )
    namespace: tuple[Span, ...] = (
        (" · HAMi namespace ", Code(entry.hami_namespace)) if entry.hami_namespace else ()
    )
    return (
        "• ",
        Strong(entry.name),
        f"{shown}: {entry.describe_source()}",
        *namespace,
        f" · {flags}",
    )


def _cluster_lines(report: AdminReport) -> list[Line]:
    title = Strong("Registered clusters")
    if report.registry_file is None and not report.clusters:
        return [
            (
                title,
                ": none (HAMI_CLUSTERS_FILE is not set). Register "
                "one with a kubeconfig file and context from the list above.",
            )
        ]
    where: tuple[Span, ...] = (
        (" (", Code(str(report.registry_file)), ")") if report.registry_file else ()
    )
    lines: list[Line] = [(title, *where, f": {len(report.clusters)}")]
    for entry in report.clusters:
        lines.append(_cluster_line(entry))
        lines.append(("    may query: ", *_access(entry)))
    return lines


def admin_lines(report: AdminReport, *, check_hint: str) -> list[Line]:
    """The report as lines; ``check_hint`` is how this surface asks for ``admin check``."""
    lines = [*_kubeconfig_lines(report, check_hint), "", *_cluster_lines(report)]
    if report.access_notes:
        lines += ["", (Strong("Access that could not be checked"), ":")]
        lines += [f"• {note}" for note in report.access_notes]
    return lines


def admin_text(
    report: AdminReport,
    *,
    check_hint: str,
    max_chars: int | None = None,
    measure: Callable[[Line], int] = lambda line: len(plain(Rich.of(line))),
) -> Rich:
    """The report as text. With ``max_chars`` (a Slack message's room) whole lines are kept up
    to that size (as ``measure`` counts a line on the surface) and the rest is counted, with
    where to see all of it."""
    lines = admin_lines(report, check_hint=check_hint)
    if max_chars is None:
        return Rich(tuple(lines))
    kept: list[Line] = []
    used = 0
    for line in lines:
        size = measure(line)
        if used + size + 1 > max_chars:
            left = len(lines) - len(kept)
            kept.append(
                f"…and {left:,} more lines. The whole report: `hami-summary clusters` on the "
                "bot's host (add --check to ask each API server)."
            )
            break
        kept.append(line)
        used += size + 1
    return Rich(tuple(kept))
