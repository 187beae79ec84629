"""simulate --format avro: the simulator's ticks written as Avro in the wire format, judged
by the tick contract after the service's decoding; what Avro cannot hold goes unframed."""

from __future__ import annotations

from datetime import UTC, datetime

from stream_validator.config.model import SchemaRegistryConfig
from stream_validator.contracts import load_contract
from stream_validator.records import SourceRecord
from stream_validator.registry.client import registry_client
from stream_validator.registry.decoder import RecordDecoder
from stream_validator.registry.outcome import Decoded, judge_decoded
from stream_validator.sim import Schedule, Simulator, parse_spec
from stream_validator.sim.framing import AvroFramedSimulator
from stream_validator.verify import DataSchemaContractVerifier
from tests.support.ticks import TICK_YAML

TOPIC = "md.ticks.avro"


def framed_run(*specs: str, count: int = 300) -> tuple[list[str], int]:
    """The first violation kind of each quarantined tick, and how many went out unframed."""
    contract = load_contract(TICK_YAML)
    client = registry_client(SchemaRegistryConfig(url="mock://sim"))
    sim = Simulator(
        "tick",
        symbols=5,
        seed=3,
        schedule=Schedule(tuple(parse_spec(s) for s in specs)),
        start=datetime(2026, 12, 3, tzinfo=UTC),
    )
    framed = AvroFramedSimulator(sim, contract, client, TOPIC)
    decoder = RecordDecoder("avro", client)
    batch = DataSchemaContractVerifier(contract).start_batch()
    kinds = []
    for i in range(count):
        message = framed.next(i / 100)
        record = SourceRecord(TOPIC, 0, i, message.key, message.value, message.headers, 0)
        result = decoder.decode(record)
        if message.value is not None and message.value[:1] == b"\x00":
            assert isinstance(result, Decoded)
        quarantined = judge_decoded(batch, result, message.value)
        if quarantined is not None:
            kinds.append(str(quarantined.violations[0].kind))
    return kinds, framed.unframed


def test_clean_ticks_round_trip_through_avro_and_pass() -> None:
    """Every simulated tick is written as Avro, decoded and passes the tick contract."""
    assert framed_run() == ([], 0)


def test_what_avro_cannot_hold_goes_unframed_and_is_undecodable() -> None:
    """Garbage bytes and string prices cannot be written: they go out as they came and are
    quarantined as undecodable. A renamed field is written as a null (every field of the
    simulator's schema is optional, and the new name is not in it): on the tick, whose
    renamed ask_sz is nullable, nothing is quarantined."""
    kinds, unframed = framed_run("garbage@0s+1s:0.5", "string_prices@1s+1s:0.5")
    assert unframed > 0
    assert set(kinds) == {"undecodable"} and len(kinds) == unframed
    assert framed_run("field_rename@0s+1s") == ([], 0)
