"""hami-summary bot: Slack, Kubernetes, cache and command line (all I/O lives here)."""
