"""DLQ replay against the real broker: the service fills a DLQ, a corrected contract replays it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from kafka_helpers import (
    ReadMessage,
    create_topic,
    end_offsets,
    read_topic,
    unique_group,
)
from service_helpers import (
    CONTRACTS,
    ThreadedService,
    encode,
    route,
    wait_until,
    write_config,
)

from stream_validator.cli.replay import build_job, main, parse_args
from stream_validator.kafka import ports
from stream_validator.replay.clients import BrokerClients
from stream_validator.replay.runner import DlqReplayer
from tests.support.ticks import tick

ROUTE = "ticks"
DLQ_PARTITIONS = 2
# Broken source records by case: (sequence numbers, violation kind, field); see payload().
CASES: dict[str, tuple[range, str, str | None]] = {
    # fixed by the corrected contract; a locked book too: locked_book (flag) is listed, flagged
    "price": (range(100, 106), "below_min", "price"),
    "size": (range(200, 204), "type_mismatch", "size"),
    "exchange": (range(300, 303), "missing_field", "exchange"),
    "garbage": (range(400, 402), "undecodable", None),
}
FIXED = "price"


def payload(seq: int) -> bytes:
    """The source value of one sequence number (see CASES)."""
    if seq in CASES["price"][0]:
        return encode(tick(seq, price=-1.0, bid=100.0, ask=100.0))
    if seq in CASES["size"][0]:
        return encode(tick(seq, size="ten"))
    if seq in CASES["exchange"][0]:
        return encode({k: v for k, v in tick(seq).items() if k != "exchange"})
    if seq in CASES["garbage"][0]:
        return f"not json {seq}".encode()
    return encode(tick(seq))


@dataclass(frozen=True)
class FilledDlq:
    """A DLQ the service filled, its source topic and when the records were stamped."""

    bootstrap: str
    source: str
    messages: list[ReadMessage]
    base_ms: int

    def envelope(self, message: ReadMessage) -> dict[str, Any]:
        """The JSON envelope of one of the DLQ records."""
        return cast(dict[str, Any], json.loads(message.value or b""))


def _seq_of(envelope: dict[str, Any]) -> int:
    """The seq header of the record an envelope holds."""
    headers = {name: value for name, value, _ in envelope["headers"]}
    return int(headers["seq"])


def produce_at(bootstrap: str, topic: str, items: list[tuple[Any, ...]]) -> None:
    """Produce (key, value, headers, timestamp_ms[, partition]) records and flush."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for key, value, headers, timestamp, *partition in items:
        options: dict[str, Any] = {"partition": partition[0] if partition else -1}
        if timestamp is not None:
            options["timestamp"] = timestamp
        producer.produce(topic, value, key, headers=headers, **options)
    assert producer.flush(30) == 0


@pytest.fixture(scope="module")
def filled(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> FilledDlq:
    """Valid and broken ticks through the service, so its DLQ holds 15 envelopes."""
    tmp_path = tmp_path_factory.mktemp("replay-fill")
    source = create_topic(kafka_bootstrap, 3, prefix="src")
    clean = create_topic(kafka_bootstrap, 3, prefix="clean")
    dlq = create_topic(kafka_bootstrap, DLQ_PARTITIONS, prefix="dlq")
    base_ms = int(time.time() * 1000) - 3_600_000
    seqs = list(range(10)) + [s for seqs, _, _ in CASES.values() for s in seqs]
    items = [
        (f"k{s}".encode(), payload(s), [("seq", str(s).encode())], base_ms + s * 1000) for s in seqs
    ]
    produce_at(kafka_bootstrap, source, items)
    group = unique_group("svc")
    path = write_config(tmp_path, kafka_bootstrap, [route(ROUTE, source, clean, dlq)], group=group)
    bad = sum(len(seqs) for seqs, _, _ in CASES.values())
    with ThreadedService.from_file(path):
        wait_until(lambda: sum(end_offsets(kafka_bootstrap, dlq).values()) >= bad, 60, "DLQ filled")
    messages = read_topic(kafka_bootstrap, dlq)
    assert len(messages) == bad
    return FilledDlq(kafka_bootstrap, source, messages, base_ms)


@dataclass
class Replay:
    """One test's DLQ copy, target topic and config with the corrected contract."""

    filled: FilledDlq
    dlq: str
    target: str
    config: Path
    group: str
    capsys: pytest.CaptureFixture[str]

    @property
    def bootstrap(self) -> str:
        """The test broker."""
        return self.filled.bootstrap

    def args(self, *extra: str) -> list[str]:
        """Command line of a replay of this DLQ copy (target: the route's clean topic)."""
        common = ["--config", str(self.config), "--dlq-topic", self.dlq, "--group", self.group]
        return [*common, "--examples", "1000", "--json", *extra]

    def run(self, *extra: str) -> tuple[int, dict[str, Any]]:
        """Run ``replay`` in-process; (exit code, JSON summary)."""
        code = main(self.args(*extra))
        out = self.capsys.readouterr().out
        return code, json.loads(out.strip().splitlines()[-1])

    def target_records(self) -> list[ReadMessage]:
        """What read_committed readers of the target see."""
        return read_topic(self.bootstrap, self.target, isolation_level="read_committed")

    def appended_to_dlq(self) -> list[ReadMessage]:
        """DLQ records written after the copy of the filled DLQ (requeued envelopes)."""
        copied = {(m.partition, m.offset) for m in self.filled.messages}
        everything = read_topic(self.bootstrap, self.dlq, isolation_level="read_committed")
        return [m for m in everything if (m.partition, m.offset) not in copied]


@pytest.fixture
def replay(
    filled: FilledDlq, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Iterator[Replay]:
    """A fresh copy of the filled DLQ (same partitions, offsets and timestamps)."""
    dlq = create_topic(filled.bootstrap, DLQ_PARTITIONS, prefix="dlq")
    produce_at(
        filled.bootstrap,
        dlq,
        [(m.key, m.value, list(m.headers), m.timestamp, m.partition) for m in filled.messages],
    )
    target = create_topic(filled.bootstrap, 3, prefix="target")
    contract = yaml.safe_load((CONTRACTS / "tick.yaml").read_text())
    contract["version"] = "2"
    for spec in contract["fields"]:
        if spec["name"] == "price":
            spec["min_value"] = -1000.0
    contract_path = tmp_path / "tick-v2.yaml"
    contract_path.write_text(yaml.safe_dump(contract))
    group = unique_group("replay")
    config = write_config(
        tmp_path,
        filled.bootstrap,
        [route(ROUTE, filled.source, target, dlq, contract=str(contract_path))],
        group=group,
    )
    yield Replay(filled, dlq, target, config, group, capsys)


def seqs_of(messages: list[ReadMessage]) -> list[int]:
    """Sequence numbers of target records (their original seq header)."""
    return sorted(int(cast(bytes, dict(m.headers)["seq"])) for m in messages)


def test_replay_sends_exactly_the_now_valid_records(replay: Replay) -> None:
    """Records that pass the corrected contract reach the target once, as they were, with
    replay headers; the others go back to the DLQ with replay_count 1."""
    code, summary = replay.run()
    assert code == 1
    assert summary["outcomes"]["replayed"] == 6
    assert summary["outcomes"]["still_failing"] == summary["requeued"] == 9
    sent = replay.target_records()
    assert seqs_of(sent) == list(CASES[FIXED][0])
    originals = {
        dict(m.headers)["seq"]: m for m in read_topic(replay.bootstrap, replay.filled.source)
    }
    dlq_by_seq = {_seq_of(replay.filled.envelope(m)): m for m in replay.filled.messages}
    for message in sent:
        headers = dict(message.headers)
        original = originals[headers["seq"]]
        assert (message.key, message.value, message.timestamp) == (
            original.key,
            original.value,
            original.timestamp,
        )
        assert message.headers[: len(original.headers)] == original.headers
        dlq_message = dlq_by_seq[int(cast(bytes, headers["seq"]))]
        assert headers["sv.replay.dlq.topic"] == replay.dlq.encode()
        assert headers["sv.replay.dlq.partition"] == str(dlq_message.partition).encode()
        assert headers["sv.replay.dlq.offset"] == str(dlq_message.offset).encode()
        assert headers["sv.replay.time"]
    requeued = replay.appended_to_dlq()
    envelopes = [json.loads(m.value or b"") for m in requeued]
    assert sorted(_seq_of(e) for e in envelopes) == sorted(
        s for case, (seqs, _, _) in CASES.items() if case != FIXED for s in seqs
    )
    assert {e["replay_count"] for e in envelopes} == {1}
    assert {e["contract"]["version"] for e in envelopes} == {"2"}


def test_second_replay_sends_nothing_again(replay: Replay) -> None:
    """The same replay run twice delivers nothing twice; when all it selects passes, the
    second run writes nothing at all."""
    assert replay.run("--kind", "below_min")[0] == 0
    dlq_end = end_offsets(replay.bootstrap, replay.dlq)
    target_end = end_offsets(replay.bootstrap, replay.target)
    code, summary = replay.run("--kind", "below_min")
    assert (code, summary["records"]) == (0, 0)
    assert end_offsets(replay.bootstrap, replay.dlq) == dlq_end
    assert end_offsets(replay.bootstrap, replay.target) == target_end
    replay.run()
    code, summary = replay.run()
    assert summary["outcomes"]["replayed"] == 0
    assert summary["records"] == 9  # only the envelopes the run before requeued
    assert seqs_of(replay.target_records()) == list(CASES[FIXED][0])


def test_overlapping_selection_does_not_resend(replay: Replay) -> None:
    """An unfiltered replay after a --kind replay skips what the first one sent."""
    code, summary = replay.run("--kind", "below_min", "--no-requeue")
    assert (code, summary["outcomes"]["replayed"]) == (0, 6)
    code, summary = replay.run()
    assert summary["outcomes"]["already_handled"] == 6
    assert summary["outcomes"]["replayed"] == 0
    assert seqs_of(replay.target_records()) == list(CASES[FIXED][0])


def test_a_target_named_like_another_plus_a_suffix_settles_nothing_for_it(
    replay: Replay,
) -> None:
    """Replay to X.v2, then to X (default group bases): the second run replays everything."""
    v2 = create_topic(replay.bootstrap, 1, name=f"{replay.target}.v2")
    common = ["--config", str(replay.config), "--dlq-topic", replay.dlq, "--json"]

    def run(*extra: str) -> dict[str, Any]:
        main([*common, *extra])
        return cast(dict[str, Any], json.loads(replay.capsys.readouterr().out.splitlines()[-1]))

    assert run("--to", v2)["outcomes"]["replayed"] == 6
    summary = run("--to", "clean")
    assert summary["outcomes"]["already_handled"] == 0
    assert summary["outcomes"]["replayed"] == 6
    assert seqs_of(replay.target_records()) == list(CASES[FIXED][0])


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat()


Predicate = Callable[[ReadMessage], bool]


def filter_case(name: str, filled: FilledDlq) -> tuple[list[str], Predicate]:
    """The replay arguments of one filter, and which filled DLQ records it names."""
    base = filled.base_ms

    def kinds(m: ReadMessage) -> set[str]:
        return {v["kind"] for v in filled.envelope(m)["violations"]}

    def fields(m: ReadMessage) -> set[str | None]:
        return {v["field"] for v in filled.envelope(m)["violations"]}

    def rules(m: ReadMessage) -> set[str | None]:
        return {v.get("rule") for v in filled.envelope(m)["violations"]}

    cases: dict[str, tuple[list[str], Predicate]] = {
        "kind": (
            ["--kind", "type_mismatch", "--kind", "undecodable"],
            lambda m: bool(kinds(m) & {"type_mismatch", "undecodable"}),
        ),
        "field": (["--field", "exchange"], lambda m: "exchange" in fields(m)),
        "kind+field": (["--kind", "below_min", "--field", "size"], lambda m: False),
        "rule": (["--rule", "locked_book"], lambda m: "locked_book" in rules(m)),
        "source_topic": (["--source-topic", filled.source, "--source-topic", "x"], lambda m: True),
        "other_source_topic": (["--source-topic", "x"], lambda m: False),
        "contract_version": (["--contract-version", "1"], lambda m: True),
        "other_contract_version": (["--contract-version", "2"], lambda m: False),
        "offsets": (
            ["--from-offset", "1", "--until-offset", "0:4"],
            lambda m: m.offset >= 1 and (m.partition != 0 or m.offset < 4),
        ),
        "time": (
            ["--from", _iso(base + 101_000), "--until", _iso(base + 202_000)],
            lambda m: base + 101_000 <= m.timestamp < base + 202_000,
        ),
    }
    return cases[name]


@pytest.mark.parametrize(
    "name",
    [
        "kind",
        "field",
        "kind+field",
        "rule",
        "source_topic",
        "other_source_topic",
        "contract_version",
        "other_contract_version",
        "offsets",
        "time",
    ],
)
def test_each_filter_selects_exactly_what_it_names(replay: Replay, name: str) -> None:
    """A dry run with one filter selects exactly the DLQ records the filter names."""
    args, names = filter_case(name, replay.filled)
    _, summary = replay.run("--dry-run", *args)
    selected = {
        (e["dlq"]["partition"], e["dlq"]["offset"])
        for examples in summary["examples"].values()
        for e in examples
    }
    expected = {(m.partition, m.offset) for m in replay.filled.messages if names(m)}
    assert selected == expected
    if name not in ("offsets", "time"):  # records before a range start are not even read
        assert summary["outcomes"]["filtered_out"] == len(replay.filled.messages) - len(expected)
    if name == "time":
        assert len(expected) == 7  # seq 101-105 and 200-201
    if name == "rule":  # the price cases, their locked book listed as a flagged violation
        assert len(expected) == len(CASES["price"][0])


def test_dry_run_writes_nothing(replay: Replay) -> None:
    """--dry-run reports the outcomes but produces nothing and commits no offsets."""
    code, summary = replay.run("--dry-run")
    assert code == 1
    assert summary["outcomes"]["would_pass"] == 6
    assert summary["outcomes"]["still_failing"] == summary["would_requeue"] == 9
    assert summary["violations_by_kind"] == {
        "type_mismatch": 4,
        "missing_field": 3,
        "undecodable": 2,
    }
    assert summary["violations_by_field"]["size"] == 4
    assert end_offsets(replay.bootstrap, replay.target) == {0: 0, 1: 0, 2: 0}
    assert sum(end_offsets(replay.bootstrap, replay.dlq).values()) == len(replay.filled.messages)
    admin = AdminClient({"bootstrap.servers": replay.bootstrap})
    groups = admin.list_consumer_groups().result(10).valid
    assert not [g for g in groups if g.group_id.startswith(replay.group)]


def test_max_replays_stops_requeue_loops(replay: Replay) -> None:
    """A record that keeps failing is requeued at most --max-replays times, then exhausted."""
    code, summary = replay.run("--max-replays", "1")
    assert summary["requeued"] == 9
    dlq_end = end_offsets(replay.bootstrap, replay.dlq)
    code, summary = replay.run("--max-replays", "1")
    assert (code, summary["outcomes"]["exhausted"], summary["requeued"]) == (1, 9, 0)
    assert end_offsets(replay.bootstrap, replay.dlq) == dlq_end
    code, summary = replay.run("--max-replays", "1")
    assert (code, summary["records"]) == (0, 0)


def test_garbage_in_the_dlq_is_reported_and_skipped(replay: Replay) -> None:
    """Garbage, other envelope versions and truncated envelopes are unreplayable, not fatal."""
    truncated = replay.filled.envelope(replay.filled.messages[0])
    truncated.update(payload_truncated=True, payload=truncated["payload"][:10])
    produce_at(
        replay.bootstrap,
        replay.dlq,
        [
            (b"g", b"\x00garbage{", None, None, 0),
            (b"v", json.dumps({"envelope_version": 2}).encode(), None, None, 0),
            (b"t", json.dumps(truncated).encode(), None, None, 1),
        ],
    )
    code, summary = replay.run()
    assert code == 1
    assert summary["unreplayable_by_reason"] == {
        "not_json": 1,
        "unsupported_envelope_version": 1,
        "payload_truncated": 1,
    }
    assert seqs_of(replay.target_records()) == list(CASES[FIXED][0])
    _, summary = replay.run()
    assert summary["unreplayable_by_reason"] == {}  # settled: below the committed offsets


class SimulatedCrash(BaseException):
    """The process dies between producing a chunk and committing it."""


def test_crash_mid_replay_loses_and_duplicates_nothing(replay: Replay) -> None:
    """A replay killed with a transaction open is completed by the next run: every fixed
    record reaches read_committed readers of the target exactly once."""

    class CrashingProducer:
        """The broker's producer, dying in the third record's commit."""

        produced = 0

        def __init__(self, producer: ports.Producer) -> None:
            self._producer = producer

        def __getattr__(self, name: str) -> Any:
            return getattr(self._producer, name)

        def produce(self, record: ports.Producible, on_delivery: ports.DeliveryCallback) -> None:
            type(self).produced += 1
            self._producer.produce(record, on_delivery)

        def commit_transaction(self, timeout_s: float) -> None:
            if type(self).produced >= 3:
                self._producer.flush(10)  # the chunk's outputs are written, its offsets are not
                raise SimulatedCrash
            self._producer.commit_transaction(timeout_s)

    class CrashingClients(BrokerClients):
        def producer(self) -> ports.Producer:
            return cast(ports.Producer, CrashingProducer(super().producer()))

    args = ("--batch-size", "2", "--kind", "below_min")
    job = build_job(parse_args(replay.args(*args)))
    clients = CrashingClients(job.config, group=job.group, transactional_id=job.group_base)
    with pytest.raises(SimulatedCrash):
        DlqReplayer(job, clients=clients).run()
    uncommitted = read_topic(replay.bootstrap, replay.target)
    assert len(replay.target_records()) < len(uncommitted) <= 6
    assert replay.run(*args)[0] == 0
    assert seqs_of(replay.target_records()) == list(CASES[FIXED][0])


def test_no_requeue_holds_back_and_a_later_run_completes(replay: Replay) -> None:
    """--no-requeue leaves failing records in place without skipping anything: passing
    records behind them wait, and a later run sends each fixed record exactly once."""
    code, summary = replay.run("--no-requeue")
    assert code == 1
    first = summary["outcomes"]
    assert first["replayed"] + first["held_back"] == 6
    assert first["still_failing"] == 9
    assert replay.appended_to_dlq() == []
    _, summary = replay.run("--no-requeue")
    assert summary["outcomes"]["replayed"] == 0  # nothing sent twice
    _, summary = replay.run()
    assert summary["outcomes"]["replayed"] == first["held_back"]
    assert seqs_of(replay.target_records()) == list(CASES[FIXED][0])
    assert len(replay.appended_to_dlq()) == 9


def test_replay_to_the_source_topic(replay: Replay) -> None:
    """--to source appends each fixed record to the topic it came from, with replay headers."""
    before = end_offsets(replay.bootstrap, replay.filled.source)
    code, summary = replay.run("--to", "source", "--kind", "below_min")
    assert (code, summary["target"], summary["outcomes"]["replayed"]) == (0, "source", 6)
    appended = [
        m
        for m in read_topic(replay.bootstrap, replay.filled.source)
        if m.offset >= before[m.partition]
    ]
    assert seqs_of(appended) == list(CASES[FIXED][0])
    assert all(dict(m.headers)["sv.replay.dlq.topic"] == replay.dlq.encode() for m in appended)
