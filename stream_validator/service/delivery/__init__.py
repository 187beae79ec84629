"""Delivery: produce -> acknowledgement -> offset commit, at-least-once or transactional; the
``BatchOutcome`` of each batch, counted from what was acknowledged, never from the plan."""
