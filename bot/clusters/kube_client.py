"""Build an ``ApiClient`` of the official Kubernetes client for one kubeconfig context, or for the
pod's own service account (in-cluster), tuned for bounded scrapes.

Each client gets its own ``Configuration`` (never the process-wide default), so several clusters
can be talked to at once. Retries are off: urllib3 would otherwise retry an unreachable server
three times and blow the time budget; the caller decides whether to try again.
"""

from __future__ import annotations

from pathlib import Path

from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException

from bot.clusters.errors import KubeconfigError
from bot.clusters.kube_errors import Target
from bot.clusters.kubeconfig_file import NotAKubeconfig, read_kubeconfig
from bot.ops.logging import redact


def credentials_of(configuration: k8s.Configuration) -> tuple[str, ...]:
    """The secrets the client sends: its token (with and without ``Bearer``) and password."""
    found: list[str] = []
    for value in (configuration.api_key or {}).values():
        text = str(value)
        found += [text, text.split(" ", 1)[-1]]
    if configuration.password:
        found.append(str(configuration.password))
    return tuple(dict.fromkeys(s for s in found if s))


def _finish(configuration: k8s.Configuration) -> k8s.ApiClient:
    configuration.retries = 0
    api = k8s.ApiClient(configuration)
    api.user_agent = "hami-summary"
    return api


def api_client_for_context(
    kubeconfig: Path, context: str, cluster: str | None = None
) -> tuple[k8s.ApiClient, Target]:
    """An ``ApiClient`` and a ``Target`` for ``context`` of ``kubeconfig``.

    Raises ``KubeconfigError`` when the file or context cannot be used; the message lists the
    contexts the file has and never shows credentials.
    """
    try:
        info = read_kubeconfig(kubeconfig)
    except NotAKubeconfig as exc:
        raise KubeconfigError(f"{kubeconfig} is not a kubeconfig: {exc.reason}.") from exc
    if info.problems and not info.contexts:
        raise KubeconfigError(f"{kubeconfig} cannot be used: {'; '.join(info.problems)}.")
    described = info.context(context)
    if described is None:
        known = ", ".join(info.context_names) or "none"
        raise KubeconfigError(
            f'context "{context}" is not in {kubeconfig} (contexts there: {known}). '
            "List them with: hami-summary clusters"
        )
    if described.problems:
        raise KubeconfigError(
            f'context "{context}" of {kubeconfig} cannot be used: {"; ".join(described.problems)}.'
        )
    configuration = k8s.Configuration()
    try:
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=str(kubeconfig),
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        # The loader's message may hold a failed exec plugin's error output, which can echo
        # the plugin's arguments (``--token ...``): redacted before it is cut or shown.
        raise KubeconfigError(
            f'cannot load the credentials of context "{context}" from {kubeconfig}: '
            f"{redact(' '.join(str(exc).split()))[:300]}"
        ) from exc
    target = Target(
        cluster=cluster or context,
        context=context,
        server=str(configuration.host),
        kubeconfig=kubeconfig,
        secrets=credentials_of(configuration),
    )
    return _finish(configuration), target


def api_client_in_cluster(cluster: str) -> tuple[k8s.ApiClient, Target]:
    """The pod's own service account (``/var/run/secrets/kubernetes.io/serviceaccount``)."""
    configuration = k8s.Configuration()
    try:
        k8s_config.load_incluster_config(  # type: ignore[no-untyped-call]
            client_configuration=configuration
        )
    except ConfigException as exc:
        raise KubeconfigError(
            f'cluster "{cluster}" is registered as in_cluster, but this process does not run in '
            f"a Kubernetes pod with a service account ({exc}). Run the bot in the cluster, or "
            "register the cluster with a kubeconfig instead."
        ) from exc
    target = Target(
        cluster=cluster,
        context=None,
        server=str(configuration.host),
        secrets=credentials_of(configuration),
    )
    return _finish(configuration), target
