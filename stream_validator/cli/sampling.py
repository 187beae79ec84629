"""Where ``infer`` and ``diff-contract`` take a sample from: a JSON-lines file, or a topic
(``--config FILE`` or ``--bootstrap HOST:PORT``) read through the Kafka adapter, with a rich
progress bar when stderr is a terminal. The Kafka modules are imported only for a topic.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import IO

from stream_validator.cli.argtypes import positive_int, timeout_seconds
from stream_validator.lifecycle.lines import DEFAULT_MAX_LINE_BYTES, read_lines
from stream_validator.offline import open_input

#: Records read of a topic unless a count is given.
DEFAULT_TOPIC_SAMPLE = 10_000
#: Payloads handed on per chunk (a file's lines, a topic's records).
CHUNK = 5_000
#: The consumer group id of the sampling consumer: it is assigned partitions, never joins.
SAMPLE_GROUP = "stream-validator-sample"

Chunk = tuple[list[bytes | None], list[int]]


def add_topic_options(parser: argparse.ArgumentParser, count_option: str) -> None:
    """--topic, --config, --bootstrap, the count option, --timeout, --max-payload-bytes."""
    add = parser.add_argument
    add("--topic", metavar="TOPIC", help="sample this topic's newest records instead of a file")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="FILE", help="service YAML config (Kafka settings)")
    source.add_argument("--bootstrap", metavar="HOST:PORT", help="Kafka bootstrap servers")
    add(
        count_option,
        type=positive_int,
        metavar="N",
        dest="sample_size",
        help=f"records to read: of a topic ({DEFAULT_TOPIC_SAMPLE:,} if not given, the newest,"
        " spread over the partitions); of a file the first N lines (all if not given)",
    )
    add("--timeout", type=timeout_seconds, default=30.0, metavar="SECONDS", help="per request")
    add(
        "--max-payload-bytes",
        type=positive_int,
        default=DEFAULT_MAX_LINE_BYTES,
        metavar="N",
        help="a longer line is no record (as validate's)",
    )


def check_topic_options(
    parser: argparse.ArgumentParser, args: argparse.Namespace, file: object
) -> None:
    """Exactly one source: a file, or --topic with --config or --bootstrap (exit 2 if not)."""
    if args.topic is None:
        if file is None:
            parser.error("give a JSON-lines file or --topic")
        if args.config or args.bootstrap:
            parser.error("--config and --bootstrap go with --topic")
        return
    if file is not None:
        parser.error("give a JSON-lines file or --topic, not both")
    if not (args.config or args.bootstrap):
        parser.error("--topic needs --config FILE or --bootstrap HOST:PORT")


def file_chunks(path: str, limit: int, count: int | None) -> Iterator[Chunk]:
    """A file's lines (``-``: stdin) in chunks, numbered from 1; oversized lines as None."""
    with ExitStack() as stack:
        stream = stack.enter_context(open_input(path)) if path != "-" else open_input("-")
        payloads: list[bytes | None] = []
        numbers: list[int] = []
        for number, line in enumerate(read_lines(stream, limit), start=1):
            if count is not None and number > count:
                break
            payloads.append(line)
            numbers.append(number)
            if len(payloads) >= CHUNK:
                yield payloads, numbers
                payloads, numbers = [], []
        if payloads:
            yield payloads, numbers


def topic_chunks(args: argparse.Namespace, label: str) -> Iterator[Chunk]:
    """The newest records of ``args.topic``, numbered by sample position from 1."""
    from stream_validator.config.settings import KafkaConfig, ServiceConfig, load_config
    from stream_validator.kafka.clients import create_admin, create_consumer
    from stream_validator.lifecycle.topic import read_sample

    if args.config:
        config = load_config(args.config)
    else:
        config = ServiceConfig(KafkaConfig(bootstrap_servers=args.bootstrap), routes=())
    quiet = {"log_level": "2"}  # librdkafka's retries are noise for a command line tool
    admin = create_admin(config, quiet)
    consumer = create_consumer(
        config,
        overrides={
            "group.id": SAMPLE_GROUP,
            "auto.offset.reset": "earliest",  # a planned start below the log start
            "enable.partition.eof": True,
            "fetch.wait.max.ms": 100,
            "statistics.interval.ms": 0,
            **quiet,
        },
    )
    count = args.sample_size or DEFAULT_TOPIC_SAMPLE
    bar = ProgressBar(sys.stderr, label) if sys.stderr.isatty() else None
    number = 1
    try:
        chunks = read_sample(
            consumer, admin, args.topic, count, args.timeout, bar.update if bar else None
        )
        for values in chunks:
            yield values, list(range(number, number + len(values)))
            number += len(values)
    finally:
        if bar is not None:
            bar.close()
        consumer.close()


class ProgressBar:
    """A live progress bar on a terminal (rich): records read of those planned."""

    def __init__(self, stream: IO[str], label: str) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn(label), BarColumn(), MofNCompleteColumn(), console=Console(file=stream)
        )
        self._task = self._progress.add_task(label, total=None)
        self._progress.start()

    def update(self, done: int, total: int) -> None:
        self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        self._progress.stop()


def sample_chunks(args: argparse.Namespace, file: str | None, label: str) -> Iterator[Chunk]:
    """The sample's chunks, from the file or the topic the arguments name."""
    if file is not None:
        return file_chunks(file, args.max_payload_bytes, args.sample_size)
    return topic_chunks(args, label)


def source_name(args: argparse.Namespace, file: str | None) -> str:
    """Where the sample comes from, for reports."""
    return f"topic {args.topic}" if file is None else ("stdin" if file == "-" else file)
