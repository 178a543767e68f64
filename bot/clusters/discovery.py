"""Kubeconfig discovery: which kubeconfig files a directory holds, and whether each context works.

Scans the regular files directly inside the directory (``~/.kube`` by default, or
``KUBECONFIG_DIR``); sub-directories such as ``~/.kube/cache`` are not entered. Files that are
not kubeconfigs are skipped with a reason. Each context is validated offline (it resolves to a
cluster with a server and a user with credentials) and, when asked, online: ``GET /version``
with the context's credentials, which the API server answers 401 when they are rejected.
Nothing is scraped here; credentials are never shown.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client as k8s

from bot.clusters.errors import KubeconfigError
from bot.clusters.kube_client import api_client_for_context
from bot.clusters.kube_errors import Call, classify
from bot.clusters.kubeconfig_file import KubeconfigInfo, NotAKubeconfig, read_kubeconfig

CHECK_CONCURRENCY = 8


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: Path
    reason: str


@dataclass(frozen=True, slots=True)
class ContextCheck:
    """Result of ``GET /version`` with a context's credentials."""

    context: str
    ok: bool
    message: str  # "reachable and authenticated, Kubernetes v1.31.2" or what failed


@dataclass(frozen=True, slots=True)
class DiscoveredKubeconfig:
    info: KubeconfigInfo
    checks: tuple[ContextCheck, ...] = ()

    def check(self, context: str) -> ContextCheck | None:
        return next((c for c in self.checks if c.context == context), None)


@dataclass(frozen=True, slots=True)
class Discovery:
    directory: Path
    kubeconfigs: tuple[DiscoveredKubeconfig, ...]
    skipped: tuple[SkippedFile, ...]


def default_kubeconfig_dir() -> Path:
    """The folder scanned when neither ``--kubeconfig-dir`` nor KUBECONFIG_DIR names one."""
    return Path.home() / ".kube"


def discover_kubeconfigs(
    directory: str | Path | None = None, *, check: bool = False, timeout_seconds: float = 5.0
) -> Discovery:
    """List and validate the kubeconfigs of ``directory``; raises ``KubeconfigError`` when the
    directory itself cannot be read."""
    folder = Path(directory).expanduser() if directory is not None else default_kubeconfig_dir()
    if not folder.is_dir():
        raise KubeconfigError(
            f"kubeconfig directory {folder} does not exist or is not a directory. Give one with "
            "--kubeconfig-dir DIR or the KUBECONFIG_DIR environment variable."
        )
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file())
    except OSError as exc:
        raise KubeconfigError(f"cannot list {folder}: {exc.strerror or exc}") from exc
    found: list[KubeconfigInfo] = []
    skipped: list[SkippedFile] = []
    for path in files:
        try:
            found.append(read_kubeconfig(path))
        except NotAKubeconfig as exc:
            skipped.append(SkippedFile(path, exc.reason))
        except KubeconfigError as exc:
            skipped.append(SkippedFile(path, exc.message))
    if not check:
        return Discovery(folder, tuple(DiscoveredKubeconfig(i) for i in found), tuple(skipped))
    jobs = [(info, ctx.name) for info in found for ctx in info.contexts if ctx.usable]
    with ThreadPoolExecutor(max_workers=CHECK_CONCURRENCY) as pool:
        results = list(
            pool.map(lambda job: check_context(job[0].path, job[1], timeout_seconds), jobs)
        )
    by_file: dict[Path, list[ContextCheck]] = {}
    for (info, _), result in zip(jobs, results, strict=True):
        by_file.setdefault(info.path, []).append(result)
    discovered = tuple(
        DiscoveredKubeconfig(info, tuple(by_file.get(info.path, ()))) for info in found
    )
    return Discovery(folder, discovered, tuple(skipped))


def check_context(kubeconfig: Path, context: str, timeout_seconds: float = 5.0) -> ContextCheck:
    """``GET /version`` with the context's credentials, within ``timeout_seconds``."""
    try:
        api, target = api_client_for_context(kubeconfig, context)
    except KubeconfigError as exc:
        return ContextCheck(context, False, exc.message)
    call = Call("get", "/version", None, "checking the API server (/version)")
    try:
        version = k8s.VersionApi(api).get_code(_request_timeout=(timeout_seconds, timeout_seconds))
    except Exception as exc:  # classified into a message: unreachable, TLS, 401, ...
        failure = classify(exc, target, call, timeout_seconds)
        return ContextCheck(context, False, failure.message)
    finally:
        api.close()  # type: ignore[no-untyped-call]
    return ContextCheck(
        context, True, f"reachable and authenticated, Kubernetes {version.git_version}"
    )
