"""Fixtures giving integration tests a real Kafka broker; every test here is marked integration.

``kafka_bootstrap`` (session), first that works:
  1. ``KAFKA_BOOTSTRAP_SERVERS`` from the environment (an existing cluster);
  2. a testcontainers ``KafkaContainer`` when a Docker engine answers;
  3. the project's own ``LocalKafkaBroker`` (Maven Central jars, no Docker) in a temp dir.
No broker means the fixture fails: integration tests are never skipped silently.

``restartable_kafka`` is always a dedicated ``LocalKafkaBroker`` (even with an external cluster)
because fault-injection tests need to stop, kill -9 and restart its process.

``schema_registry_url`` (session): ``SCHEMA_REGISTRY_URL`` from the environment, else the
project's own ``LocalSchemaRegistry`` (Apicurio, Java 21+) in a temp dir; the URL of a
Confluent-compatible API. ``restartable_registry`` is always a dedicated local registry (one
per module) a test may stop, kill and restart. No registry means the fixture fails.
"""

from __future__ import annotations

import contextlib
import gc
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from stream_validator.cli.devkafka import LocalKafkaBroker
from stream_validator.cli.devregistry import LocalSchemaRegistry
from stream_validator.errors import DevBrokerError

_HERE = Path(__file__).parent
_NO_BROKER = "no Kafka broker for the integration tests"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/integration as ``integration``."""
    for item in items:
        if item.path.is_relative_to(_HERE):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Bootstrap servers of a broker shared by the whole test session."""
    external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    if external:
        yield external
    elif _docker_answers():
        yield from _container_bootstrap()
    else:
        broker = _start_local(tmp_path_factory.mktemp("kafka-session"), "session broker")
        try:
            yield broker.bootstrap_servers
        finally:
            broker.stop()


@pytest.fixture(scope="module")
def _module_restartable_kafka(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LocalKafkaBroker]:
    broker = _start_local(tmp_path_factory.mktemp("kafka-faults"), "fault-injection broker")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def restartable_kafka(_module_restartable_kafka: LocalKafkaBroker) -> LocalKafkaBroker:
    """A dedicated local broker (one per module) a test may stop, kill -9 and restart."""
    broker = _module_restartable_kafka
    if not broker.is_running():  # an earlier test left it down
        broker.start(keep_data=True)
    return broker


@pytest.fixture(scope="session")
def schema_registry_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a Confluent-compatible Schema Registry API shared by the whole test session."""
    external = os.environ.get("SCHEMA_REGISTRY_URL", "").strip()
    if external:
        yield external
        return
    registry = _start_registry(tmp_path_factory.mktemp("registry-session"), "session registry")
    try:
        yield registry.url
    finally:
        registry.stop()


@pytest.fixture(scope="module")
def _module_restartable_registry(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LocalSchemaRegistry]:
    registry = _start_registry(tmp_path_factory.mktemp("registry-faults"), "restartable registry")
    try:
        yield registry
    finally:
        registry.stop()


@pytest.fixture
def restartable_registry(
    _module_restartable_registry: LocalSchemaRegistry,
) -> LocalSchemaRegistry:
    """A dedicated local registry (one per module) a test may stop, kill and restart; a
    restart on its state dir keeps its URL (its schemas only with ``keep_data=True``)."""
    registry = _module_restartable_registry
    if not registry.is_running():  # an earlier test left it down
        registry.start()
    return registry


def _start_registry(state_dir: Path, what: str) -> LocalSchemaRegistry:
    registry = LocalSchemaRegistry(state_dir)
    try:
        registry.start()
    except DevBrokerError as exc:
        reason = str(exc)
    else:
        return registry
    pytest.fail(  # outside the except block: the message alone, no chained traceback
        f"no Schema Registry for the integration tests: SCHEMA_REGISTRY_URL is unset and the "
        f"local {what} (LocalSchemaRegistry in {state_dir}) failed: {reason}",
        pytrace=False,
    )


def _start_local(state_dir: Path, what: str) -> LocalKafkaBroker:
    broker = LocalKafkaBroker(state_dir)
    try:
        broker.start()
    except DevBrokerError as exc:
        reason = str(exc)
    else:
        return broker
    pytest.fail(  # outside the except block: the message alone, no chained traceback
        f"{_NO_BROKER}: KAFKA_BOOTSTRAP_SERVERS is unset, no Docker engine answered, "
        f"and the local {what} (LocalKafkaBroker in {state_dir}) failed: {reason}",
        pytrace=False,
    )


def _docker_answers() -> bool:
    """Whether a Docker engine responds within a few seconds (any failure means no)."""
    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return False
    try:
        import docker

        client = docker.from_env(timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        pass
    # A failed docker.from_env() leaves its socket unclosed; under filterwarnings=error the
    # ResourceWarning would later fail whichever test happens to trigger garbage collection.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    return False


def _container_bootstrap() -> Iterator[str]:
    from testcontainers.community.kafka import KafkaContainer

    container: KafkaContainer | None = None
    try:
        container = (
            KafkaContainer()
            .with_kraft()
            # The image defaults give transactions replication factor 3: never ready on one node.
            .with_env("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1")
            .with_env("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1")
            .with_env("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "false")
        )
        container.start()
        reason = ""
    except Exception as exc:  # docker-py, testcontainers and image pull errors alike
        reason = repr(exc)
        if container is not None:
            with contextlib.suppress(Exception):
                container.stop()
    if reason or container is None:
        pytest.fail(f"{_NO_BROKER}: Docker answered but KafkaContainer failed: {reason}")
    try:
        yield container.get_bootstrap_server()
    finally:
        container.stop()
