"""Shadow contracts: a route's candidate contract judged beside the live one on the same
micro-batches, routing nothing; its differences tallied for ``/status``, a periodic event and
the metrics, its file hot-reloaded like the live contract's."""
