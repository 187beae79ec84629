"""Delivery: produce -> acknowledgement -> offset commit, at-least-once or transactional; the
``Outcome`` of each batch, counted from what was acknowledged, never from the plan."""
