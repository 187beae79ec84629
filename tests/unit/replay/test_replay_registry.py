"""Replay of a registry route's DLQ records: the original bytes decoded as the service
decodes them, then judged by the (fixed) contract."""

from __future__ import annotations

from pathlib import Path

from stream_validator.contracts import load_contract
from stream_validator.errors import ServiceExit
from stream_validator.registry.decoder import RecordDecoder
from stream_validator.replay.planner import Outcome, ReplayPlanner
from stream_validator.replay.selection import Selection
from stream_validator.verify import DataSchemaContractVerifier
from tests.support.flakyregistry import FlakyRegistry
from tests.support.registryformats import TICK, TICK_CONTRACT, serializer
from tests.unit.service.fakeservice import Harness, service_config


def test_replay_decodes_the_originals_like_the_service(tmp_path: Path) -> None:
    """With a contract that now allows size 0, the breach passes; the corrupt Avro value is
    still undecodable; without the decoder the same breach would be undecodable JSON."""
    client = FlakyRegistry()
    strict = tmp_path / "tick.yaml"
    strict.write_text(TICK_CONTRACT)
    config = service_config(contract=strict, route_format="avro", commit_interval_s=1e-9)
    decoder = RecordDecoder("avro", client)
    h = Harness(config, decoders={"ticks": decoder})
    breach, _ = serializer("avro", client)("src", {**TICK, "size": 0})
    h.broker.append("src", breach, key=b"breach")
    h.broker.append("src", breach[:-4] + b"\xff\xff\xff\xff", key=b"corrupt")
    assert h.run() == ServiceExit.OK
    dlq = h.topic("dlq")
    assert [r.key for r in dlq] == [b"breach", b"corrupt"]

    relaxed = tmp_path / "relaxed.yaml"
    relaxed.write_text(TICK_CONTRACT.replace("min_value: 1", "min_value: 0"))
    verifier = DataSchemaContractVerifier(load_contract(relaxed))
    decided = ReplayPlanner(Selection(), verifier, decode=decoder.decode).decide(dlq)
    assert [d.outcome for d in decided] == [Outcome.PASSED, Outcome.STILL_FAILING]
    assert [v.kind for v in decided[1].violations] == ["undecodable"]

    as_json = ReplayPlanner(Selection(), verifier).decide(dlq)
    assert [v.kind for v in as_json[0].violations] == ["undecodable"]
