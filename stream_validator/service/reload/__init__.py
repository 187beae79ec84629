"""Hot reload of the routes' contract files: polled (a Kubernetes ConfigMap update swaps the
files under their paths) and on SIGHUP, checked before use, swapped between batches."""
