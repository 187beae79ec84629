"""PURE planning: one route's micro-batch in, the records to produce out (what *should* go
where); the null window, the per-symbol state and the DLQ envelopes' context."""
