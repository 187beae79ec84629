"""The dev Schema Registry killed mid-run and restarted (issue 29): the service waits, not
ready meanwhile; nothing is lost and no good record reaches the DLQ."""

from __future__ import annotations

from pathlib import Path

from kafka_helpers import create_topic, produce, read_topic, unique_group
from service_helpers import ThreadedService, all_consumed, wait_until
from service_helpers import write_config as service_config_file

from stream_validator.config.model import SchemaRegistryConfig
from stream_validator.config.settings import load_config
from stream_validator.devbroker.registry import LocalSchemaRegistry
from stream_validator.registry.client import registry_client
from stream_validator.service.report.hooks import ServiceHooks
from tests.support.registryformats import AVRO_TICK, TICK, TICK_CONTRACT, serializer

BEFORE, DURING = 30, 30


def test_registry_killed_and_restarted_loses_nothing(
    kafka_bootstrap: str, restartable_registry: LocalSchemaRegistry, tmp_path: Path
) -> None:
    """Ticks of schema 1 pass; the registry is killed (SIGKILL); ticks of a schema the service
    has not fetched yet arrive: they wait (not ready, set-backs counted, nothing committed,
    nothing in the DLQ); the registry restarts on its data: every tick goes clean, in order."""
    url = restartable_registry.restart(keep_data=True)  # schemas survive the restart
    producer_client = registry_client(SchemaRegistryConfig(url=url))
    source = create_topic(kafka_bootstrap, 1, prefix="src-outage")
    clean = create_topic(kafka_bootstrap, 1, prefix="clean")
    dlq = create_topic(kafka_bootstrap, 1, prefix="dlq")
    first = serializer("avro", producer_client)
    before = [first(source, {**TICK, "size": i + 1})[0] for i in range(BEFORE)]
    # A second schema (a new optional field), registered now, fetched by nobody yet.
    import tests.support.registryformats as formats

    v2 = AVRO_TICK.replace(
        '{"name": "symbol", "type": "string"},',
        '{"name": "symbol", "type": "string"},\n    {"name": "note", "type": ["null", "string"],'
        ' "default": null},',
    )
    original = formats.AVRO_TICK
    formats.AVRO_TICK = v2
    try:
        second = serializer("avro", producer_client)
        during = [second(source, {**TICK, "size": i + 1, "note": None})[0] for i in range(DURING)]
    finally:
        formats.AVRO_TICK = original
    producer_client.close()
    assert during[0][1:5] != before[0][1:5]  # another schema id

    contract = tmp_path / "tick.yaml"
    contract.write_text(TICK_CONTRACT)
    group = unique_group("reg-outage")
    route = {
        "name": "ticks",
        "source_topics": [source],
        "contract": str(contract),
        "clean_topic": clean,
        "dlq_topic": dlq,
        "format": "avro",
    }
    path = service_config_file(
        tmp_path,
        kafka_bootstrap,
        [route],
        group=group,
        schema_registry={"url": url, "timeout_s": 2},
    )
    waits: list[str] = []
    hooks = ServiceHooks(on_registry_unavailable=waits.append)
    produce(kafka_bootstrap, source, [(b"k", v, None) for v in before])
    with ThreadedService(load_config(path, environ={}), hooks) as runner:
        wait_until(lambda: all_consumed(kafka_bootstrap, group, source), 90, "first ticks")
        assert runner.service.state.ready
        restartable_registry.kill()
        produce(kafka_bootstrap, source, [(b"k", v, None) for v in during])
        wait_until(lambda: len(waits) >= 2, 60, "the batch set back twice")
        state = runner.service.state
        assert not state.ready
        assert "schema registry unavailable" in (state.last_error or "")
        assert read_topic(kafka_bootstrap, dlq) == []
        assert not all_consumed(kafka_bootstrap, group, source)
        restartable_registry.start(keep_data=True)
        wait_until(lambda: all_consumed(kafka_bootstrap, group, source), 120, "every tick")
        wait_until(lambda: runner.service.state.ready, 30, "ready again")
    assert runner.exit_code == 0
    assert [m.value for m in read_topic(kafka_bootstrap, clean)] == before + during
    assert read_topic(kafka_bootstrap, dlq) == []
