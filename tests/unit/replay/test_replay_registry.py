"""Replay of a registry route's DLQ records: the original bytes decoded as the service
decodes them, then judged by the (fixed) contract."""

from __future__ import annotations

import json
from pathlib import Path

from stream_validator.contracts import load_contract
from stream_validator.errors import ServiceExit
from stream_validator.registry.decoder import RecordDecoder
from stream_validator.replay.planner import (
    Outcome,
    OutputContext,
    ReplayPlanner,
    Target,
    build_output,
)
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


def test_a_requeued_registry_record_keeps_its_schema_in_the_envelope(tmp_path: Path) -> None:
    """A registry record that still fails is requeued with the envelope's ``schema`` (id
    and version), as the service wrote it; a JSON route's requeued envelope has none."""
    client = FlakyRegistry()
    contract = tmp_path / "tick.yaml"
    contract.write_text(TICK_CONTRACT)
    config = service_config(contract=contract, route_format="avro", commit_interval_s=1e-9)
    decoder = RecordDecoder("avro", client)
    h = Harness(config, decoders={"ticks": decoder})
    breach, _ = serializer("avro", client)("src", {**TICK, "size": 0})
    h.broker.append("src", breach, key=b"breach")
    assert h.run() == ServiceExit.OK
    dlq = h.topic("dlq")
    written = json.loads(dlq[0].value or b"")
    assert written["schema"] == {"id": 1, "version": 1}

    verifier = DataSchemaContractVerifier(load_contract(contract))
    context = OutputContext(
        Target("clean", "clean"), "dlq", "replay.g", "2026-12-03T00:00:00Z", "tick", "1", "t", 10**6
    )
    (decision,) = ReplayPlanner(Selection(), verifier, decode=decoder.decode).decide(dlq)
    assert decision.outcome is Outcome.STILL_FAILING
    requeued = build_output(decision, context)
    assert requeued is not None
    assert requeued.kind == "requeue"
    envelope = json.loads(requeued.value or b"")
    assert envelope["schema"] == written["schema"]
    assert envelope["replay_count"] == 1
    assert (b"sv.dlq.schema.id", b"1") in [(n.encode(), v) for n, v in requeued.headers]

    (as_json,) = ReplayPlanner(Selection(), verifier).decide(dlq)
    untyped = build_output(as_json, context)
    assert untyped is not None
    assert "schema" not in json.loads(untyped.value or b"")
