"""Operating the bot: Prometheus metrics, health/readiness endpoints, structured logs."""
