"""The routes' DLQ circuit breakers: the pure state machine (``machine``) and the pausing of
each route's partitions (``routes``)."""
