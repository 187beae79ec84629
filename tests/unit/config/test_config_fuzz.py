"""Any service config document and SV_* environment (hypothesis): a config or ConfigError.

The config file and the environment overrides are edited by hand, often in a hurry; a
mistake must stop the service with a ConfigError naming it, never with a traceback.
SV_FUZZ_EXAMPLES sets the examples (500 by default; more by hand).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from stream_validator.config.settings import (
    ServiceConfig,
    apply_env_overrides,
    config_from_mapping,
)
from stream_validator.errors import ConfigError
from tests.support.fuzz import corrupt, fuzz_settings, junk

SETTINGS = fuzz_settings(500)
CONTRACTS = Path(__file__).resolve().parents[3] / "config" / "contracts"

VALID: dict[str, Any] = {
    "kafka": {
        "bootstrap_servers": "127.0.0.1:9092",
        "group_id": "g",
        "settings": {"security.protocol": "PLAINTEXT"},
        "producer": {"linger.ms": 5},
    },
    "batch": {"max_records": 500, "timeout_s": 1.0, "commit_interval_s": 0.1},
    "service": {"health_port": 8080, "max_message_bytes": 1048576, "log_level": "INFO"},
    "metrics": {"enabled": True, "port": 9464},
    "routes": [
        {
            "name": "ticks",
            "source_topics": ["md.ticks"],
            "contract": "tick.yaml",
            "clean_topic": "md.ticks.clean",
            "dlq_topic": "md.ticks.dlq",
            "on_null_ceiling_breach": "alert",
            "circuit_breaker": {"action": "pause", "window_records": 100},
        },
        {
            "name": "books",
            "source_pattern": "^md\\.books\\.raw\\..+$",
            "contract": "orderbook_snapshot.yaml",
            "clean_topic": "md.books.clean",
            "dlq_topic": "md.books.dlq",
        },
    ],
}

values = junk("", "\x00", "../x", "/dev/null", "tick.yaml\x00", "0", "1e9", "-1")


def _corrupt(edits: list[tuple[int, Any]]) -> dict[str, Any]:
    """The valid config with a few values replaced by junk (or a junk key added)."""
    return corrupt(copy.deepcopy(VALID), edits, new_key_every=5)  # type: ignore[no-any-return]


documents = st.builds(
    _corrupt, st.lists(st.tuples(st.integers(0, 10**6), values), min_size=0, max_size=3)
)
names = st.sampled_from(
    [
        "SV_KAFKA__BOOTSTRAP_SERVERS",
        "SV_KAFKA__SETTINGS__SASL_PASSWORD",
        "SV_KAFKA__PRODUCER__LINGER_MS",
        "SV_BATCH__MAX_RECORDS",
        "SV_BATCH",
        "SV_SERVICE__HEALTH_PORT",
        "SV_SERVICE__LOG_LEVEL__X",
        "SV_METRICS__ENABLED",
        "SV_ROUTES__0__NAME",
        "SV_KAFKA__GROUP_ID__DEEP__ER",
        "OTHER",
    ]
) | st.text(max_size=20).map(lambda t: "SV_" + t)
environments = st.dictionaries(
    names,
    st.text(max_size=12) | st.sampled_from(["1", "true", "[1]", "{a: 1}", "0.5", "null", ""]),
    max_size=3,
)


@SETTINGS
@given(document=documents, environ=environments)
def test_a_config_loads_or_names_its_problem(
    document: dict[str, Any], environ: dict[str, str]
) -> None:
    try:
        apply_env_overrides(document, environ)
        config = config_from_mapping(document, source="fuzz.yaml", base_dir=CONTRACTS)
    except ConfigError as exc:
        assert str(exc)
        event("refused")
        return
    event("loaded")
    assert isinstance(config, ServiceConfig)
    assert config.routes


def test_the_unchanged_document_loads() -> None:
    """The document the fuzz test corrupts is itself valid (so refusals come from edits)."""
    config = config_from_mapping(copy.deepcopy(VALID), source="fuzz.yaml", base_dir=CONTRACTS)
    assert [route.name for route in config.routes] == ["ticks", "books"]
