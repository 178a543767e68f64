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
