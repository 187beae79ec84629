"""The streaming service: consume, validate per route, produce to clean or DLQ, commit.

The top level is the wiring: ``loop`` (``StreamService``) runs consume -> plan -> submit ->
settle the outcomes -> report; ``app`` wires it to config, logging, metrics and the HTTP
servers. Each sub-package is one part of that story:

* ``plan/`` (pure): a route's micro-batch in, the outputs to produce out (null window,
  per-symbol state, DLQ envelopes);
* ``delivery/``: produce -> acknowledgement -> offset commit (at-least-once or
  transactional), and the ``BatchOutcome`` of each batch, counted from acknowledgements;
* ``breaker/``: each route's DLQ circuit breaker (a pure state machine) and the pausing of
  its partitions;
* ``consume/``: what the Kafka clients call back (rebalances, statistics, errors) and the
  start-up wait for the topics;
* ``report/``: batch events, summaries, the hooks and the ``/status`` state, fed only from
  delivered outcomes;
* ``telemetry/``: Prometheus metrics (the only modules with ``http/metricsserver`` that
  import prometheus_client) and JSON logging;
* ``http/``: the bounded HTTP servers: health, status and resume; /metrics.
"""
