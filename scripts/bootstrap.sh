#!/usr/bin/env bash
# Create .venv and install the package with its dev tools (idempotent, quiet).
# Sourced by scripts/test.sh and scripts/demo.sh; safe to run on its own.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "error: Python 3.11+ is required (found: $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi
for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "error: '$tool' is needed for the local Kafka broker (JDK 17+ and Maven)" >&2; exit 1; }
done
if ! command -v cargo >/dev/null || ! command -v rustc >/dev/null; then
  echo "error: a Rust toolchain (cargo and rustc 1.74+) is needed to build the native core (native/);" >&2
  echo "       install it from https://rustup.rs (or install a prebuilt abi3 wheel, which needs no Rust)" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv" >&2
  "$PYTHON" -m venv .venv
fi
# Reinstall (and so rebuild the native core) when the package metadata or the crate changes.
stamp=.venv/.installed-$(cat pyproject.toml native/Cargo.toml native/Cargo.lock $(find native/src -type f | sort) \
  | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  echo "==> installing Python dependencies into .venv" >&2
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[dev]'
  rm -f .venv/.installed-* && touch "$stamp"
fi
echo "==> Kafka jars (Maven Central, cached outside the repo)" >&2
.venv/bin/stream-validator dev-kafka fetch >/dev/null
