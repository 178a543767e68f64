"""The admin report: kubeconfig discovery and who may query each registered cluster.

Shown to the Slack users listed in ``HAMI_SUMMARY_ADMINS`` (ephemerally) and to the local
operator in ``hami-summary chat``. The discovery is ``bot.clusters.discovery``, the same as
``hami-summary clusters``; this module decides who may see it and lays it out, once, for both
surfaces (``Markup`` says how to write bold text, code and Slack ids on each).

Credentials never appear: discovery tells only which *kind* of credential a kubeconfig user has,
and URLs are shown without user-info or secret query values (``display_url``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


@dataclass(frozen=True, slots=True)
class Markup:
    """How one surface writes emphasis, code and Slack ids."""

    bold: Callable[[str], str]
    code: Callable[[str], str]
    user: Callable[[str], str]
    channel: Callable[[str], str]
    group: Callable[[str], str]
    text: Callable[[str], str]  # free text from files (names, messages)
    warning: str


PLAIN_MARKUP = Markup(
    bold=str,
    code=str,
    user=str,
    channel=str,
    group=str,
    text=str,
    warning="PROBLEM:",
)


def _context_line(m: Markup, discovered: DiscoveredKubeconfig, ctx: ContextInfo) -> str:
    cluster = f"cluster {m.code(ctx.cluster or '?')}"
    if ctx.server:
        cluster += f" ({m.text(display_url(ctx.server))})"
    user = f"user {m.code(ctx.user or '?')}" + (f" ({m.text(ctx.auth_kind)})"
                                                 if ctx.auth_kind else "")
    namespace = f", namespace {m.code(ctx.namespace)}" if ctx.namespace else ""
    if ctx.problems:
        status = f"{m.warning} " + m.text("; ".join(ctx.problems))
    else:
        check = discovered.check(ctx.name)
        if check is None:
            status = "valid (resolves; credentials present)"
        elif check.ok:
            status = "ok, " + m.text(check.message)
        else:
            status = f"{m.warning} " + m.text(check.message)
    return f"    ◦ {m.code(ctx.name)}: {cluster}, {user}{namespace} — {status}"


def _kubeconfig_lines(m: Markup, report: AdminReport, check_hint: str) -> list[str]:
    where = f"{m.code(str(report.directory))} (folder from {report.directory_from})"
    if report.discovery is None:
        return [
            f"{m.bold('Kubeconfig files')} in {where}: none read.",
            f"{m.warning} {m.text(report.discovery_problem or '')}",
        ]
    discovery = report.discovery
    lines = [
        f"{m.bold('Kubeconfig files')} in {where}: {len(discovery.kubeconfigs)} found"
        + (f", {len(discovery.skipped)} skipped" if discovery.skipped else "")
        + ". Nothing is scraped from them until a file and context are registered and asked for."
    ]
    for discovered in discovery.kubeconfigs:
        info = discovered.info
        current = (f" — current context {m.code(info.current_context)}"
                   if info.current_context else "")
        lines.append(f"• {m.code(info.path.name)}{current}")
        lines.extend(f"    {m.warning} {m.text(problem)}" for problem in info.problems)
        lines.extend(_context_line(m, discovered, ctx) for ctx in info.contexts)
        clusters = ", ".join(m.code(name) for name in info.clusters) or "none"
        users = ", ".join(m.code(name) for name in info.users) or "none"
        lines.append(f"    clusters: {clusters} · users: {users}")
    if discovery.skipped:
        lines.append(m.bold("Skipped") + " (not kubeconfigs):")
        lines.extend(f"• {m.code(s.path.name)}: {m.text(s.reason)}" for s in discovery.skipped)
    if not report.checked and any(d.info.contexts for d in discovery.kubeconfigs):
        lines.append(
            "Each context was checked offline. To also ask each API server with the context's "
            f"credentials (GET /version): {check_hint}."
        )
    return lines


def _access(m: Markup, entry: ClusterEntry) -> str:
    kinds = (
        ("channels", entry.allowed_channels, m.channel),
        ("users", entry.allowed_users, m.user),
        ("user groups", entry.allowed_user_groups, m.group),
    )
    parts = []
    for what, ids, show in kinds:
        if not ids:
            continue
        if EVERYONE in ids:
            parts.append(f"every one of the {what}")
        else:
            parts.append(f"{what} " + ", ".join(show(i) for i in sorted(ids)))
    if not parts:
        return (
            "nobody yet (add allowed_channels, allowed_users or allowed_user_groups"
            + (f" at {m.text(entry.defined_at)}" if entry.defined_at else "")
            + ")"
        )
    return "; ".join(parts)


def _cluster_lines(m: Markup, report: AdminReport) -> list[str]:
    if report.registry_file is None and not report.clusters:
        return [
            f"{m.bold('Registered clusters')}: none (HAMI_CLUSTERS_FILE is not set). Register "
            "one with a kubeconfig file and context from the list above."
        ]
    where = f" ({m.code(str(report.registry_file))})" if report.registry_file else ""
    lines = [f"{m.bold('Registered clusters')}{where}: {len(report.clusters)}"]
    for entry in report.clusters:
        name = m.bold(entry.name)
        if entry.display_name != entry.name:
            name += f" ({m.text(entry.display_name)})"
        flags = (
            f"runtime {'allowed' if entry.runtime_allowed else 'off'} · nvidia-smi "
            f"{'allowed' if entry.nvidia_smi_allowed else 'off'} · cache "
            f"{entry.cache_ttl_seconds:g} s"
        )
        namespace = (f" · HAMi namespace {m.code(entry.hami_namespace)}"
                     if entry.hami_namespace else "")
        lines.append(f"• {name}: {m.text(entry.describe_source())}{namespace}"
                     f" · {flags}")
        lines.append(f"    may query: {_access(m, entry)}")
    return lines


def admin_lines(report: AdminReport, markup: Markup, *, check_hint: str) -> list[str]:
    """The report as lines; ``check_hint`` is how this surface asks for ``admin check``."""
    lines = [*_kubeconfig_lines(markup, report, check_hint), "", *_cluster_lines(markup, report)]
    if report.access_notes:
        lines += ["", markup.bold("Access that could not be checked") + ":"]
        lines += [f"• {markup.text(note)}" for note in report.access_notes]
    return lines


def admin_text(
    report: AdminReport, markup: Markup, *, check_hint: str, max_chars: int | None = None
) -> str:
    """The report as text. With ``max_chars`` (a Slack message's room) whole lines are kept up
    to that size and the rest is counted, with where to see all of it."""
    lines = admin_lines(report, markup, check_hint=check_hint)
    if max_chars is None:
        return "\n".join(lines)
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > max_chars:
            left = len(lines) - len(kept)
            kept.append(
                f"…and {left:,} more lines. The whole report: `hami-summary clusters` on the "
                "bot's host (add --check to ask each API server)."
            )
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept)
