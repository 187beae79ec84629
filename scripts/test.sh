#!/usr/bin/env bash
# The test command (docs/development/testing.md): lint, type-check, the docs site, unit and
# integration tests.
# Integration tests use KAFKA_BOOTSTRAP_SERVERS when set, testcontainers when a Docker
# engine answers, and otherwise start the project's own local Kafka broker; likewise
# SCHEMA_REGISTRY_URL when set, and otherwise the project's own local Schema Registry.
# Extra arguments go to pytest, e.g. scripts/test.sh tests/unit -k null
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh

if ! command -v promtool >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing promtool (Debian package prometheus)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null
  else
    echo "error: promtool not found: install Debian's 'prometheus' package (or set SV_ALLOW_MISSING_PROMTOOL=1)" >&2
    [ "${SV_ALLOW_MISSING_PROMTOOL:-0}" = 1 ] || exit 1
  fi
fi

step() { echo "==> $*" >&2; }
# The local Schema Registry (Apicurio, for the registry tests) needs Java 21+, beside the
# broker's 17: found as `dev-registry start` finds it (JAVA_HOME, PATH, /usr/lib/jvm/*).
step "Java 21+ for the local Schema Registry"
.venv/bin/python - <<'PY'
import sys

from stream_validator.devbroker.process import find_java, java_feature_version
from stream_validator.errors import DevBrokerError

try:
    java = find_java(21)
except DevBrokerError as exc:
    sys.exit(f"error: {exc} (set SCHEMA_REGISTRY_URL to use an existing registry instead)")
print(f"    {java} (Java {java_feature_version(java)})", file=sys.stderr)
PY
if [ -z "${SCHEMA_REGISTRY_URL:-}" ]; then
  step "Apicurio Registry (Maven Central, cached outside the repo)"
  .venv/bin/stream-validator dev-registry fetch >/dev/null
fi
step "ruff check";  .venv/bin/ruff check stream_validator tests bench docs/_hooks
step "ruff format"; .venv/bin/ruff format --check stream_validator tests bench docs/_hooks
step "mypy --strict"; .venv/bin/mypy stream_validator
step "import rules (import-linter)"; .venv/bin/lint-imports
# Never into the repository: a broken link, a page missing from the nav or a generated table
# that disagrees with the code fails here.
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
step "docs (mkdocs build --strict)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
step "abi3 wheel without Rust"; bash scripts/wheel_check.sh
step "fuzz the native scanner (30 s)"; scripts/fuzz.sh 30 --quiet
step "pytest"; .venv/bin/pytest "$@"
