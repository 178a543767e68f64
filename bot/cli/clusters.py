"""``hami-summary clusters``: the kubeconfigs of a directory, their contexts and whether they work,
and the clusters of the bot's registry (``HAMI_CLUSTERS_FILE``). Credentials are never printed,
and names are printed with control characters escaped (a context name holding an escape
sequence must not retitle or clear the terminal)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bot.clusters.discovery import Discovery, default_kubeconfig_dir, discover_kubeconfigs
from bot.clusters.errors import KubeconfigError, RegistryError
from bot.clusters.registry import ClusterEntry, ClusterRegistry, load_registry
from bot.clusters.url_display import display_url
from bot.config import command_settings
from core.visible_text import visible_lines

REGISTRY_ENV = "HAMI_CLUSTERS_FILE"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "clusters",
        help="list kubeconfig files and contexts, and the registered clusters",
        description="List the kubeconfig files of a directory (default KUBECONFIG_DIR or "
        "~/.kube) with their contexts, clusters and users, validate each context, and list the "
        "clusters registered in HAMI_CLUSTERS_FILE. Nothing is scraped.",
    )
    parser.add_argument(
        "--kubeconfig-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="directory to scan (default: $KUBECONFIG_DIR or ~/.kube)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="also check that each context's API server is reachable and accepts its "
        "credentials (GET /version)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="per-context timeout of --check (default 5)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    problems: list[str] = []
    discovery: Discovery | None = None
    settings = command_settings()
    directory = args.kubeconfig_dir or settings.kubeconfig_dir or default_kubeconfig_dir()
    try:
        discovery = discover_kubeconfigs(directory, check=args.check, timeout_seconds=args.timeout)
    except KubeconfigError as exc:
        problems.append(exc.message)
    registry: ClusterRegistry | None = None
    registry_file = settings.clusters_file
    if registry_file:
        try:
            registry = load_registry(registry_file)
        except RegistryError as exc:
            problems.append(f"cluster registry: {exc.message}")
    if args.format == "json":
        sys.stdout.write(json.dumps(_as_json(discovery, registry, registry_file), indent=2) + "\n")
    else:
        sys.stdout.write(visible_lines(_as_text(discovery, registry, registry_file)))
    for problem in problems:
        print(visible_lines(f"hami-summary clusters: {problem}"), file=sys.stderr)
    return 2 if problems else 0


def _context_line(discovered: Any, ctx: Any) -> str:
    server = f" ({display_url(ctx.server)})" if ctx.server else ""
    cluster = f"cluster {ctx.cluster or '?'}{server}"
    user = f"user {ctx.user or '?'}" + (f" ({ctx.auth_kind})" if ctx.auth_kind else "")
    namespace = f", namespace {ctx.namespace}" if ctx.namespace else ""
    if ctx.problems:
        status = "PROBLEM: " + "; ".join(ctx.problems)
    else:
        check = discovered.check(ctx.name)
        status = "ok" if check is None else ("ok, " if check.ok else "FAILED: ") + check.message
    return f"      {ctx.name}: {cluster}, {user}{namespace} -- {status}\n"


def _as_text(
    discovery: Discovery | None, registry: ClusterRegistry | None, registry_file: str | None
) -> str:
    out: list[str] = []
    if discovery is not None:
        count = len(discovery.kubeconfigs)
        out.append(f"Kubeconfig files in {discovery.directory}: {count}\n")
        for discovered in discovery.kubeconfigs:
            info = discovered.info
            current = f" (current context: {info.current_context})" if info.current_context else ""
            out.append(f"  {info.path.name}{current}\n")
            for problem in info.problems:
                out.append(f"    PROBLEM: {problem}\n")
            if info.contexts:
                out.append("    contexts:\n")
                out.extend(_context_line(discovered, ctx) for ctx in info.contexts)
            out.append(f"    clusters: {', '.join(info.clusters) or 'none'}\n")
            out.append(f"    users: {', '.join(info.users) or 'none'}\n")
        if discovery.skipped:
            out.append("  skipped (not kubeconfigs):\n")
            out.extend(f"    {s.path.name}: {s.reason}\n" for s in discovery.skipped)
        if count:
            out.append("  Scrape one with: hami-summary scrape --kubeconfig FILE --context NAME\n")
    out.append("\n")
    if not registry_file:
        out.append(f"Registered clusters: none ({REGISTRY_ENV} is not set).\n")
    elif registry is not None:
        out.append(f"Registered clusters ({registry_file}): {len(registry.entries)}\n")
        out.extend(_entry_line(entry) for entry in registry.entries)
    return "".join(out)


def _access(entry: ClusterEntry) -> str:
    parts = [
        f"{len(ids)} {what}" if "*" not in ids else f"every {what[:-1]}"
        for ids, what in (
            (entry.allowed_channels, "channels"),
            (entry.allowed_users, "users"),
            (entry.allowed_user_groups, "user groups"),
        )
        if ids
    ]
    return ", ".join(parts) if parts else "nobody yet"


def _entry_line(entry: ClusterEntry) -> str:
    flags = (
        f"runtime {'yes' if entry.runtime_allowed else 'no'}, "
        f"nvidia-smi {'yes' if entry.nvidia_smi_allowed else 'no'}, "
        f"cache {entry.cache_ttl_seconds:g} s"
    )
    namespace = f", HAMi namespace {entry.hami_namespace}" if entry.hami_namespace else ""
    return (
        f"  {entry.name} ({entry.display_name}): {entry.describe_source()}{namespace}; {flags}; "
        f"access: {_access(entry)}\n"
    )


def _as_json(
    discovery: Discovery | None, registry: ClusterRegistry | None, registry_file: str | None
) -> dict[str, Any]:
    result: dict[str, Any] = {"kubeconfig_dir": None, "kubeconfigs": [], "skipped": []}
    if discovery is not None:
        result["kubeconfig_dir"] = str(discovery.directory)
        for discovered in discovery.kubeconfigs:
            info = discovered.info
            contexts = []
            for ctx in info.contexts:
                check = discovered.check(ctx.name)
                contexts.append(
                    {
                        "name": ctx.name,
                        "cluster": ctx.cluster,
                        "user": ctx.user,
                        "namespace": ctx.namespace,
                        "server": display_url(ctx.server) if ctx.server else None,
                        "credentials": ctx.auth_kind,
                        "problems": list(ctx.problems),
                        "check": None
                        if check is None
                        else {"ok": check.ok, "message": check.message},
                    }
                )
            result["kubeconfigs"].append(
                {
                    "path": str(info.path),
                    "current_context": info.current_context,
                    "contexts": contexts,
                    "clusters": list(info.clusters),
                    "users": list(info.users),
                    "problems": list(info.problems),
                }
            )
        result["skipped"] = [{"path": str(s.path), "reason": s.reason} for s in discovery.skipped]
    result["registry_file"] = registry_file
    result["registered"] = [
        {
            "name": e.name,
            "display_name": e.display_name,
            "source": e.source_kind,
            "describe": e.describe_source(),
            "contexts": list(e.contexts),
            "hami_namespace": e.hami_namespace,
            "cache_ttl_seconds": e.cache_ttl_seconds,
            "runtime_allowed": e.runtime_allowed,
            "nvidia_smi_allowed": e.nvidia_smi_allowed,
            "access": _access(e),
        }
        for e in (registry.entries if registry is not None else ())
    ]
    return result
