"""Live clusters: the registry, kubeconfig discovery, and collecting HAMi metrics through the
Kubernetes API (scheduler, vGPU monitors, nvidia-smi exec), a plain metrics URL or Prometheus.

Entry points: ``registry.load_registry``, ``collect.collect_metrics`` /
``collect.collect_from_kubeconfig`` and ``discovery.discover_kubeconfigs``. Every failure is a
``ClusterError`` subclass whose ``message`` is written for the person who will read it.
"""
