"""The service config file's shape as msgspec Structs: keys, types and single-value bounds.

``settings`` decodes the YAML document (after SV_* overrides) into ``ConfigDoc`` with
``yamlfile.decode``, so an unknown key, a wrong type or a bound reads e.g.
``batch.max_records: expected int >= 1, got 0``. An unset key stays ``UNSET`` here: the
defaults live once, in the ServiceConfig/KafkaConfig/RouteConfig dataclasses. Rules between
keys (timeouts, payload headroom, routes that overlap) stay in ``settings``.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

# librdkafka producer default; must cover the largest payload plus key and headers.
DEFAULT_MAX_MESSAGE_BYTES = 1_048_576
PAYLOAD_HEADROOM_BYTES = 48_576

#: Every duration is at most a day: an infinite one killed the shutdown watchdog's timer
#: thread (OverflowError) and a NaN or infinite start-up check never let the service be ready.
MAX_SECONDS: Final = 86_400
Text = Annotated[str, Meta(min_length=1)]
Seconds = Annotated[float, Meta(gt=0, le=MAX_SECONDS)]
SecondsOrZero = Annotated[float, Meta(ge=0, le=MAX_SECONDS)]
Port = Annotated[int, Meta(ge=0, le=65535)]
#: librdkafka properties: scalars, turned into strings by ``settings``.
Librdkafka = dict[str, str | int | float | bool]


class _Section(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    def given(self) -> dict[str, object]:
        """The keys the document set (the rest keep the dataclass defaults)."""
        values = msgspec.structs.asdict(self)
        return {key: value for key, value in values.items() if value is not UNSET}


class KafkaDoc(_Section, frozen=True):
    bootstrap_servers: Text | UnsetType = UNSET
    group_id: Text | UnsetType = UNSET
    client_id: Text | UnsetType = UNSET
    auto_offset_reset: Text | UnsetType = UNSET
    transactional_id: Text | UnsetType = UNSET
    settings: Librdkafka | UnsetType = UNSET
    consumer: Librdkafka | UnsetType = UNSET
    producer: Librdkafka | UnsetType = UNSET


class BatchDoc(_Section, frozen=True):
    max_records: Annotated[int, Meta(ge=1, le=100_000)] | UnsetType = UNSET
    timeout_s: Seconds | UnsetType = UNSET
    commit_interval_s: Seconds | UnsetType = UNSET
    linger_s: SecondsOrZero | UnsetType = UNSET
    max_in_flight_records: Annotated[int, Meta(ge=1, le=100_000)] | UnsetType = UNSET


class ServiceDoc(_Section, frozen=True):
    # Room for a full-size payload plus the headroom, with the headroom to spare.
    max_message_bytes: Annotated[int, Meta(gt=PAYLOAD_HEADROOM_BYTES * 2)] | UnsetType = UNSET
    health_host: str | UnsetType = UNSET
    health_port: Port | UnsetType = UNSET
    shutdown_timeout_s: Seconds | UnsetType = UNSET
    liveness_timeout_s: Seconds | UnsetType = UNSET
    retry_backoff_s: Seconds | UnsetType = UNSET
    retry_backoff_max_s: Seconds | UnsetType = UNSET
    halt_after_failed_batches: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    startup_check_timeout_s: Seconds | UnsetType = UNSET
    log_level: str | UnsetType = UNSET  # checked by settings: any case
    log_summary_interval_s: SecondsOrZero | UnsetType = UNSET
    resume_token_file: Text | UnsetType = UNSET
    contract_reload_interval_s: SecondsOrZero | UnsetType = UNSET
    shadow_report_interval_s: SecondsOrZero | UnsetType = UNSET


class MetricsDoc(_Section, frozen=True):
    enabled: bool | UnsetType = UNSET
    host: str | UnsetType = UNSET
    port: Port | UnsetType = UNSET
    created_series: bool | UnsetType = UNSET


class DlqDoc(_Section, frozen=True):
    connect_headers: bool | UnsetType = UNSET


class RouteDoc(_Section, frozen=True):
    name: Text
    contract: Text
    clean_topic: Text
    dlq_topic: Text
    # One topic may be written without the list.
    source_topics: list[Text] | Text | None = None
    source_pattern: str | None = None
    on_null_ceiling_breach: Literal["alert", "quarantine"] | UnsetType = UNSET
    max_payload_bytes: Annotated[int, Meta(gt=0)] | UnsetType = UNSET
    # Checked key by key (and between keys) by ``config.breaker``, which names each one.
    circuit_breaker: dict[str, object] | None = None
    # A candidate contract evaluated beside the live one, routing nothing (service/shadow/).
    shadow_contract: Text | None = None


class ConfigDoc(_Section, frozen=True):
    routes: Annotated[list[RouteDoc], Meta(min_length=1)]
    kafka: KafkaDoc = KafkaDoc()
    batch: BatchDoc = BatchDoc()
    service: ServiceDoc = ServiceDoc()
    metrics: MetricsDoc = MetricsDoc()
    dlq: DlqDoc = DlqDoc()
