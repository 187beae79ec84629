"""What the service reports from delivered outcomes: batch events, summaries, the hooks the
app wires to metrics, and the state ``/status`` shows."""
