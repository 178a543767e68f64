"""Read one kubeconfig file and describe it (contexts, clusters, users) without its credentials.

The layout is the ``kind: Config`` document of client-go (``clientcmd/api/v1``): named lists
``clusters``, ``users`` and ``contexts``, and ``current-context``. A user's credentials are one
of: ``token`` / ``tokenFile``, ``client-certificate(-data)`` + ``client-key(-data)``, an ``exec``
plugin, an ``auth-provider``, or ``username`` + ``password``. We only say *which* kind is there;
the values never leave this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.clusters.errors import KubeconfigError

# A kubeconfig with a few hundred contexts is well under 1 MiB; anything far bigger is not one.
MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024


class NotAKubeconfig(Exception):
    """The file is something else (a manifest, a binary, notes); ``reason`` says what."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ContextInfo:
    """One context, and whether it resolves to a cluster with a server and a user with credentials.

    ``problems`` is empty when the context is usable."""

    name: str
    cluster: str | None
    user: str | None
    namespace: str | None
    server: str | None
    auth_kind: str | None  # "token", "client certificate", "exec plugin (aws)", ... or None
    problems: tuple[str, ...]

    @property
    def usable(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class KubeconfigInfo:
    path: Path
    current_context: str | None
    contexts: tuple[ContextInfo, ...]
    clusters: tuple[str, ...]
    users: tuple[str, ...]
    problems: tuple[str, ...]  # file-level problems (current-context unknown, YAML errors, ...)

    def context(self, name: str) -> ContextInfo | None:
        return next((c for c in self.contexts if c.name == name), None)

    @property
    def context_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.contexts)


def read_kubeconfig(path: Path) -> KubeconfigInfo:
    """Describe ``path``. Raises ``NotAKubeconfig`` for foreign files, ``KubeconfigError`` when
    the file cannot be read at all."""
    try:
        size = path.stat().st_size
        if size > MAX_KUBECONFIG_BYTES:
            raise NotAKubeconfig(f"{size} bytes, too large to be a kubeconfig")
        raw = path.read_bytes()
    except OSError as exc:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from exc
    if b"\x00" in raw:
        raise NotAKubeconfig("binary file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotAKubeconfig("not UTF-8 text") from exc
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        if _mentions_kubeconfig_keys(text):
            problem = f"YAML syntax error: {_yaml_where(exc)}"
            return KubeconfigInfo(path, None, (), (), (), (problem,))
        raise NotAKubeconfig(f"not YAML ({_yaml_where(exc)})") from exc
    if not isinstance(document, Mapping):
        raise NotAKubeconfig("YAML, but not a mapping" if document is not None else "empty file")
    kind = document.get("kind")
    if kind not in (None, "Config") or not any(
        key in document for key in ("clusters", "contexts", "users")
    ):
        what = f"kind: {kind}" if kind else "no clusters, contexts or users"
        raise NotAKubeconfig(f"YAML, but not a kubeconfig ({what})")
    return _describe(path, document)


def _mentions_kubeconfig_keys(text: str) -> bool:
    return "kind: Config" in text or ("contexts:" in text and "clusters:" in text)


def _yaml_where(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return str(problem)


def _named(document: Mapping[str, Any], key: str, inner: str) -> dict[str, Mapping[str, Any]]:
    """The named list ``key`` as name -> inner mapping (entries without a name are skipped)."""
    entries = document.get(key) or []
    result: dict[str, Mapping[str, Any]] = {}
    if not isinstance(entries, list):
        return result
    for entry in entries:
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            body = entry.get(inner)
            result[entry["name"]] = body if isinstance(body, Mapping) else {}
    return result


def _describe(path: Path, document: Mapping[str, Any]) -> KubeconfigInfo:
    clusters = _named(document, "clusters", "cluster")
    users = _named(document, "users", "user")
    contexts = _named(document, "contexts", "context")
    base = path.parent
    described = tuple(
        _describe_context(name, body, clusters, users, base) for name, body in contexts.items()
    )
    problems: list[str] = []
    current = document.get("current-context")
    current_name = current if isinstance(current, str) and current else None
    if not contexts:
        problems.append("no contexts defined")
    if current_name is not None and current_name not in contexts:
        problems.append(f'current-context "{current_name}" is not one of the contexts')
    return KubeconfigInfo(
        path=path,
        current_context=current_name,
        contexts=described,
        clusters=tuple(clusters),
        users=tuple(users),
        problems=tuple(problems),
    )


def _describe_context(
    name: str,
    body: Mapping[str, Any],
    clusters: Mapping[str, Mapping[str, Any]],
    users: Mapping[str, Mapping[str, Any]],
    base: Path,
) -> ContextInfo:
    problems: list[str] = []
    cluster_name = body.get("cluster") if isinstance(body.get("cluster"), str) else None
    user_name = body.get("user") if isinstance(body.get("user"), str) else None
    namespace = body.get("namespace") if isinstance(body.get("namespace"), str) else None
    server: str | None = None
    if cluster_name is None:
        problems.append("names no cluster")
    elif cluster_name not in clusters:
        problems.append(f'cluster "{cluster_name}" is not defined in this file')
    else:
        value = clusters[cluster_name].get("server")
        server = value if isinstance(value, str) and value else None
        if server is None:
            problems.append(f'cluster "{cluster_name}" has no server address')
    auth_kind: str | None = None
    if user_name is None:
        problems.append("names no user")
    elif user_name not in users:
        problems.append(f'user "{user_name}" is not defined in this file')
    else:
        auth_kind, auth_problem = _credential_kind(users[user_name], base)
        if auth_problem:
            problems.append(f'user "{user_name}" {auth_problem}')
    return ContextInfo(name, cluster_name, user_name, namespace, server, auth_kind, tuple(problems))


def _credential_kind(user: Mapping[str, Any], base: Path) -> tuple[str | None, str | None]:
    """Which credential the user carries, and a problem if it is missing or points nowhere."""
    if user.get("token"):
        return "token", None
    if user.get("tokenFile"):
        token_file = _resolve(base, str(user["tokenFile"]))
        if not token_file.is_file():
            return "token file", f"token file {token_file} does not exist"
        return "token file", None
    cert = user.get("client-certificate-data") or user.get("client-certificate")
    key = user.get("client-key-data") or user.get("client-key")
    if cert or key:
        if not (cert and key):
            return (
                "client certificate",
                "has a client certificate without its key (or a key without its certificate)",
            )
        for field in ("client-certificate", "client-key"):
            if user.get(field) and not user.get(f"{field}-data"):
                file = _resolve(base, str(user[field]))
                if not file.is_file():
                    return "client certificate", f"{field} file {file} does not exist"
        return "client certificate", None
    exec_plugin = user.get("exec")
    if isinstance(exec_plugin, Mapping):
        command = exec_plugin.get("command")
        if not command:
            return "exec plugin", "has an exec plugin without a command"
        return f"exec plugin ({Path(str(command)).name})", None
    provider = user.get("auth-provider")
    if isinstance(provider, Mapping):
        return f"auth provider ({provider.get('name', 'unnamed')})", None
    if user.get("username") and user.get("password"):
        return "basic auth", None
    return None, "has no credentials (no token, client certificate, exec plugin or auth provider)"


def _resolve(base: Path, value: str) -> Path:
    # client-go resolves relative paths in a kubeconfig against the file's own directory.
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path
