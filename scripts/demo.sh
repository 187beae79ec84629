#!/usr/bin/env bash
# The demo (docs/quickstart.md): a local Kafka broker, the validator service, and
# simulated market data with vendor drift and integrity faults (a crossed book, a sequence
# gap, stale timestamps, a frozen quote, a bad deploy) and an order feed with values its
# contract's string checks refuse; one tick feed in Avro through a local Schema Registry
# (Apicurio, Java 21+); then a report of what happened.
#   scripts/demo.sh                 run for ~30 s, report, stop everything
#   DEMO_SECONDS=60 scripts/demo.sh
#   scripts/demo.sh --keep-running  leave broker and service up to explore (stop: scripts/demo.sh --stop)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
STATE=.demo
SV=.venv/bin/stream-validator

stop_all() {
  if [ -f "$STATE/service.pid" ]; then
    kill -TERM "$(cat "$STATE/service.pid")" 2>/dev/null && \
      while kill -0 "$(cat "$STATE/service.pid")" 2>/dev/null; do sleep 0.2; done
    rm -f "$STATE/service.pid"
  fi
  [ -x "$SV" ] && "$SV" dev-kafka stop --state-dir "$STATE/kafka" >/dev/null 2>&1 || true
  [ -x "$SV" ] && "$SV" dev-registry stop --state-dir "$STATE/registry" >/dev/null 2>&1 || true
}
if [ "${1:-}" = "--stop" ]; then stop_all; echo "demo stopped"; exit 0; fi
KEEP=0; [ "${1:-}" = "--keep-running" ] && KEEP=1

source scripts/bootstrap.sh
stop_all
rm -rf "$STATE" && mkdir -p "$STATE"
[ "$KEEP" = 1 ] || trap stop_all EXIT

echo "==> starting a local Kafka broker (first run: jars from Maven Central)" >&2
BOOTSTRAP=$("$SV" dev-kafka start --state-dir "$STATE/kafka" | tail -n1)
echo "==> starting a local Schema Registry (first run: Apicurio from Maven Central)" >&2
REGISTRY=$("$SV" dev-registry start --state-dir "$STATE/registry" | tail -n1)
# The demo's config: config/service.yaml plus one Avro route (md.ticks.avro) and the registry.
CONFIG="$STATE/service.yaml"
.venv/bin/python - "$REGISTRY" "$CONFIG" <<'PY'
import sys
from pathlib import Path

import yaml

registry, out = sys.argv[1], Path(sys.argv[2])
config = yaml.safe_load(Path("config/service.yaml").read_text())
for route in config["routes"]:  # contract paths stay relative to config/
    route["contract"] = str(Path("config", route["contract"]).resolve())
config["routes"].append({
    "name": "ticks-avro", "source_topics": ["md.ticks.avro"], "format": "avro",
    "contract": str(Path("config/contracts/tick.yaml").resolve()),
    "clean_topic": "md.ticks.avro.clean", "dlq_topic": "md.ticks.avro.dlq",
})
config["schema_registry"] = {"url": registry}
out.write_text(yaml.safe_dump(config, sort_keys=False))
PY
free_port() { .venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export SV_KAFKA__BOOTSTRAP_SERVERS="$BOOTSTRAP" KAFKA_BOOTSTRAP_SERVERS="$BOOTSTRAP"
export SV_KAFKA__GROUP_ID="stream-validator-demo"
export SV_SERVICE__HEALTH_PORT=$(free_port) SV_METRICS__PORT=$(free_port)
export SV_BATCH__TIMEOUT_S=0.5

echo "==> creating topics" >&2
"$SV" create-topics --config "$CONFIG" --partitions 3 >&2

echo "==> starting the validator service (log: $STATE/service.log)" >&2
"$SV" run --config "$CONFIG" >"$STATE/service.log" 2>&1 &
echo $! >"$STATE/service.pid"
for _ in $(seq 1 150); do
  curl -fs "http://127.0.0.1:$SV_SERVICE__HEALTH_PORT/readyz" >/dev/null 2>&1 && break
  kill -0 "$(cat "$STATE/service.pid")" 2>/dev/null || { tail -20 "$STATE/service.log" >&2; exit 1; }
  sleep 0.2
done

SECS=${DEMO_SECONDS:-30}
echo "==> simulating ${SECS}s of market data with vendor drift" >&2
"$SV" simulate --topic md.ticks --entity tick --rate 300 --duration "$SECS" --symbols 20 --seed 7 \
  --scenario field_rename@4s+3s \
  --scenario string_prices@9s+2s:0.5 \
  --scenario nan_prices@13s+2s:0.3 \
  --scenario null_bid_spike@17s+4s \
  --scenario bool_volumes@22s+2s:0.5 \
  --scenario garbage@every10s+1s:0.2 \
  --scenario tombstone@26s+1s:0.1 \
  --scenario crossed_book@6s+2s:0.2 \
  --scenario sequence_gap@11s+1s:0.05 \
  --scenario stale_timestamp@15s+1s:0.05 \
  --scenario frozen_quote@19s+3s \
  --scenario bad_deploy@27s+1s >"$STATE/sim-ticks.json" &
sims=($!)
# The books route subscribes by pattern: the service picks this topic up once it exists.
"$SV" simulate --topic md.books.raw.xnas --create-topic --partitions 3 \
  --entity orderbook_snapshot --rate 50 --duration "$SECS" --seed 8 --scenario negative_price@every8s+1s:0.2 >"$STATE/sim-books.json" &
sims+=($!)
"$SV" simulate --topic md.bars --entity ohlcv_bar --rate 20 --duration "$SECS" --seed 9 \
  --scenario null_bid_spike@12s+6s >"$STATE/sim-bars.json" &
sims+=($!)
# Every order drift below is quarantined: md.orders.dlq gets exactly the non-clean orders.
"$SV" simulate --topic md.orders --entity order --rate 50 --duration "$SECS" --seed 10 \
  --scenario unknown_side@3s+2s:0.5 \
  --scenario upper_case_side@7s+2s:0.5 \
  --scenario empty_order_id@11s+1s:0.5 \
  --scenario field_rename@15s+2s:0.2 >"$STATE/sim-orders.json" &
sims+=($!)
# The same ticks in Avro, written by confluent-kafka's AvroSerializer under a schema derived
# from the tick contract; garbage cannot be written as Avro and goes out unframed (undecodable).
"$SV" simulate --topic md.ticks.avro --entity tick --rate 100 --duration "$SECS" --seed 11 \
  --format avro --schema-registry "$REGISTRY" --contract config/contracts/tick.yaml \
  --scenario crossed_book@6s+2s:0.2 \
  --scenario garbage@every10s+1s:0.2 >"$STATE/sim-ticks-avro.json" &
sims+=($!)
for pid in "${sims[@]}"; do wait "$pid" || echo "warning: a simulator exited $?" >&2; done
sleep 3  # let the service drain the last batches

.venv/bin/python scripts/demo_report.py --config "$CONFIG" --log "$STATE/service.log" \
  --health "http://127.0.0.1:$SV_SERVICE__HEALTH_PORT" \
  --metrics "http://127.0.0.1:$SV_METRICS__PORT/metrics" \
  --simulator "$STATE"/sim-*.json

if [ "$KEEP" = 1 ]; then
  echo
  echo "broker $BOOTSTRAP, registry $REGISTRY and the service keep running; stop them with: scripts/demo.sh --stop"
fi
