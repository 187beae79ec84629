"""End-to-end throughput of the service on the local broker: source -> clean/DLQ, committed.

Run: .venv/bin/python bench/bench_service.py [--records 100000] [--batch 500]

Starts a local Kafka broker (or uses KAFKA_BOOTSTRAP_SERVERS), fills a 3-partition source
topic with generated ticks (~1 % bad), runs StreamService in this process and reports the
records/s from start until every source offset was committed.
"""

from __future__ import annotations

import argparse
import threading
import time

from bench_validate import make_payloads
from confluent_kafka import Consumer, KafkaException, TopicPartition
from harness import REPO, broker, create_topics, fill

from stream_validator.config.settings import config_from_mapping
from stream_validator.service.loop import StreamService


def committed_all(bootstrap: str, group: str, topic: str, partitions: int) -> bool:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        committed = consumer.committed(tps, timeout=10)
        ends = [consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in tps]
        return [tp.offset for tp in committed] == ends
    except KafkaException:  # the group coordinator is still loading
        return False
    finally:
        consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    with broker() as bootstrap:
        suffix = str(int(time.time()))
        names = [f"bench-src-{suffix}", f"bench-clean-{suffix}", f"bench-dlq-{suffix}"]
        create_topics(bootstrap, names, 3, False)
        payloads, _ = make_payloads(args.records, 0.01)
        fill(bootstrap, names[0], payloads)
        group = f"bench-{suffix}"
        config = config_from_mapping(
            {
                "kafka": {"bootstrap_servers": bootstrap, "group_id": group},
                "batch": {"max_records": args.batch, "timeout_s": 0.5},
                "metrics": {"enabled": False},
                "routes": [
                    {
                        "name": "ticks",
                        "source_topics": [names[0]],
                        "contract": str(REPO / "config/contracts/tick.yaml"),
                        "clean_topic": names[1],
                        "dlq_topic": names[2],
                    }
                ],
            }
        )
        service = StreamService(config)
        started = time.perf_counter()
        thread = threading.Thread(target=service.run, daemon=True)
        thread.start()
        while not committed_all(bootstrap, group, names[0], 3):
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
        service.stop()
        thread.join(30)
        state = service.state
        print(
            f"records: {args.records:,}  batch.max_records: {args.batch}  "
            f"batches: {state.batches}  clean: {state.clean:,}  dlq: {state.dlq:,}"
        )
        print(
            f"end to end (consume, validate, produce, flush, commit): "
            f"{args.records / elapsed:,.0f} records/s over {elapsed:.1f} s"
        )


if __name__ == "__main__":
    main()
