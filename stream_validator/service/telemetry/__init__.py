"""Telemetry: Prometheus metrics on an injected registry (with ``http.metricsserver`` the
only modules that import prometheus_client) and JSON logging."""
