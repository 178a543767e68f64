"""Errors of cluster access, as values with a message for the person who will read it.

Messages name the cluster (or file), what failed and what to do. They never contain credentials.
"""

from __future__ import annotations


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


def nvidia_smi_not_allowed(cluster: str, defined_at: str) -> str:
    """Why nvidia-smi exec (real usage) is refused for a cluster (``nvidia_smi_allowed``)."""
    where = f" ({defined_at})" if defined_at else ""
    return (
        f'nvidia-smi exec is not enabled for cluster "{cluster}". An admin can set '
        f"nvidia_smi_allowed: true for it in the cluster registry{where}; it also needs RBAC "
        "`create pods/exec`."
    )
