"""Errors of cluster access, as values with a message for the person who will read it.

Messages name the cluster (or file), what failed and what to do. They never contain credentials.
Subclasses keep the facts their message was made of (the cluster, the route, the HTTP status,
the refused resource), so code that must tell failures apart reads those, never the wording.
"""

from __future__ import annotations

from typing import Literal


class ClusterError(Exception):
    """Base of the errors below; ``message`` is ready to show in Slack or on stderr."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RegistryError(ClusterError):
    """The cluster registry file cannot be used (names the file, line and field)."""


class CollectionError(ClusterError):
    """Metrics could not be collected (names the cluster, what failed and what to do)."""


class KubeconfigError(ClusterError):
    """A kubeconfig file or context cannot be used (names the file and context)."""


# -- refusals by registry policy ----------------------------------------------------------------
# One wording wherever a request meets a registry flag that is off (the collector, the Slack
# bot, the chat mode): it names the flag and the entry (``file:line``) where an admin turns it on.


def runtime_not_allowed(cluster: str, defined_at: str) -> str:
    """Why runtime (vGPU monitor) scrapes are refused for a cluster (``runtime_allowed``)."""
    where = f" ({defined_at})" if defined_at else ""
    return (
        f'Runtime (vGPU monitor) scrapes are not enabled for cluster "{cluster}". An admin can '
        f"set runtime_allowed: true for it in the cluster registry{where}."
    )


RegistryFlag = Literal["runtime_allowed", "nvidia_smi_allowed"]


class RefusedByRegistry(CollectionError):
    """The request needs ``flag``, which the registry entry of ``cluster`` (``defined_at``,
    ``file:line``) leaves off; nothing was collected."""

    def __init__(self, cluster: str, defined_at: str, flag: RegistryFlag) -> None:
        wording = runtime_not_allowed if flag == "runtime_allowed" else nvidia_smi_not_allowed
        super().__init__(wording(cluster, defined_at))
        self.cluster = cluster
        self.defined_at = defined_at
        self.flag = flag


def nvidia_smi_not_allowed(cluster: str, defined_at: str) -> str:
    """Why nvidia-smi exec (real usage) is refused for a cluster (``nvidia_smi_allowed``)."""
    where = f" ({defined_at})" if defined_at else ""
    return (
        f'nvidia-smi exec is not enabled for cluster "{cluster}". An admin can set '
        f"nvidia_smi_allowed: true for it in the cluster registry{where}; it also needs RBAC "
        "`create pods/exec`."
    )
