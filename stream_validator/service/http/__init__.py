"""The service's HTTP servers, bounded against slow clients: health, readiness, status and
the operator's resume; /metrics."""
