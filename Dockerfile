# syntax=docker/dockerfile:1
# stream-validator image: `stream-validator run` with the config and contracts under
# /etc/stream-validator (mount your own over them). Linted in CI with hadolint
# (tests/unit/test_deploy_manifests.py); CI has no Docker engine, so it is not built there.
#
#   docker build -t stream-validator:0.1.0 .
#   docker run --rm -e SV_KAFKA__BOOTSTRAP_SERVERS=broker:9092 -p 8080:8080 -p 9464:9464 \
#       -e SV_SERVICE__HEALTH_HOST=0.0.0.0 -e SV_METRICS__HOST=0.0.0.0 \
#       -v "$PWD/my-config:/etc/stream-validator:ro" stream-validator:0.1.0

# One pinned base for both stages: the venv built in the first stage is copied into the
# second, and a venv only works with the very Python it was created with.
ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
# The native core (native/, Rust + PyO3) is compiled here: a pinned Rust toolchain (rustup's
# minimal profile, fetched with the image's own Python and checked against its published
# SHA-256) and a C linker. None of it reaches the runtime stage, which gets only the venv.
ARG RUST_VERSION=1.86.0
ARG RUSTUP_VERSION=1.28.2
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    RUSTUP_HOME=/opt/rustup \
    CARGO_HOME=/opt/cargo \
    PATH=/opt/cargo/bin:$PATH
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# gcc and libc6-dev link the extension; unpinned on purpose: this stage is thrown away and
# the packages follow the pinned base image's Debian release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN python -c "import hashlib, os, platform, sys, urllib.request as web; \
url = 'https://static.rust-lang.org/rustup/archive/%s/%s-unknown-linux-gnu/rustup-init' \
    % (os.environ['RUSTUP_VERSION'], platform.machine()); \
binary = web.urlopen(url, timeout=120).read(); \
expected = web.urlopen(url + '.sha256', timeout=120).read().split()[0].decode(); \
hashlib.sha256(binary).hexdigest() == expected or sys.exit('rustup-init: SHA-256 mismatch: ' + url); \
open('/tmp/rustup-init', 'wb').write(binary)" \
    && chmod 0755 /tmp/rustup-init \
    && /tmp/rustup-init -y --no-modify-path --profile minimal --default-toolchain "${RUST_VERSION}" \
    && rm /tmp/rustup-init \
    && cargo --version
WORKDIR /src
# Only what the wheel needs (.dockerignore keeps the rest of the repository out of the context,
# native/target included). maturin reads README.md for the package metadata.
COPY pyproject.toml README.md ./
COPY native ./native
COPY stream_validator ./stream_validator
# Every Python dependency ships manylinux wheels; --only-binary makes a missing one fail here,
# loudly, instead of attempting a compile. pip wheel builds this package's own wheel with
# maturin (the build backend) and the toolchain above. pip and setuptools leave the venv
# afterwards: the runtime image installs nothing.
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip wheel --no-cache-dir --no-deps --wheel-dir /tmp/wheels . \
    && /opt/venv/bin/pip install --no-cache-dir --only-binary=:all: /tmp/wheels/*.whl \
    && /opt/venv/bin/pip uninstall --yes pip setuptools \
    && /opt/venv/bin/stream-validator --version \
    && /opt/venv/bin/python -c "import stream_validator._native"

FROM ${PYTHON_IMAGE}
ARG PYTHON_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="stream-validator" \
      org.opencontainers.image.description="Kafka consumer that validates market-data records against schema contracts and quarantines bad ones to a DLQ" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="docker.io/library/${PYTHON_IMAGE}"

RUN groupadd --system --gid 10001 validator \
    && useradd --system --uid 10001 --gid validator --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin validator

COPY --from=builder /opt/venv /opt/venv
# Defaults so the image runs as is (with SV_KAFKA__BOOTSTRAP_SERVERS); mount a config
# directory over /etc/stream-validator for anything else. Contract paths in service.yaml are
# relative to it (contracts/*.yaml).
COPY config/ /etc/stream-validator/

# The health and metrics servers bind 127.0.0.1 unless configured otherwise: exposing them is
# a decision of the deployment (its config file or SV_SERVICE__HEALTH_HOST / SV_METRICS__HOST),
# not of the image. The compose and Kubernetes configs under deploy/ set 0.0.0.0.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

USER 10001:10001
# 8080: /healthz /readyz /status (service.health_port); 9464: /metrics (metrics.port).
EXPOSE 8080 9464

# Liveness, as Kubernetes checks it: /healthz answers 503 (urlopen raises) when the consume loop
# has stalled. No curl in a slim image; Python is there anyway.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('SV_SERVICE__HEALTH_PORT', '8080'), timeout=4)"]

ENTRYPOINT ["stream-validator"]
CMD ["run", "--config", "/etc/stream-validator/service.yaml"]
