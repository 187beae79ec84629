#!/usr/bin/env bash
# Quix Streams, for bench/bench_peers.py only, in its own virtualenv: it pins an older
# confluent-kafka (<2.13) than the service uses, so it cannot share .venv.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python3 -m venv .venv-quix
.venv-quix/bin/python -m pip install --quiet --upgrade pip
.venv-quix/bin/python -m pip install --quiet "quixstreams==3.28.1" "pydantic>=2.10" orjson
echo "Quix Streams ready in .venv-quix"
