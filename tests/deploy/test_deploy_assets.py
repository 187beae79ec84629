"""deploy/: dashboard and alert PromQL use only metrics the service registers; files are sane."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.docs.pages import tables_hook

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "stream_validator.json"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
ALERTS_TEST = DEPLOY / "prometheus" / "alerts_test.yml"
DATASOURCES = DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
PROVIDERS = DEPLOY / "grafana" / "provisioning" / "dashboards" / "stream_validator.yml"

EXPECTED_ALERTS = {
    "NullCeilingBreached",
    "DLQRateHigh",
    "SchemaDriftDetected",
    "NoRecordsWhileInputFlowing",
    "ConsumerLagGrowing",
    "DeliveryFailures",
    "StreamValidatorDown",
    "CircuitBreakerOpen",
}
SEVERITIES = {"info", "warning", "critical"}
PROMQL_FUNCTIONS = {
    "abs", "absent", "avg", "avg_over_time", "ceil", "changes", "clamp_min", "clamp_max",
    "count", "count_over_time", "delta", "deriv", "floor", "histogram_quantile", "idelta",
    "increase", "irate", "label_replace", "last_over_time", "max", "max_over_time", "min",
    "min_over_time", "predict_linear", "quantile", "rate", "resets", "round", "scalar", "sort",
    "sort_desc", "sum", "time", "timestamp", "topk", "bottomk", "vector",
}  # fmt: skip
PROMQL_KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan"}
_GROUPING = re.compile(
    r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", re.IGNORECASE
)
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*(?=\s*(\(?))")


def registered_names() -> set[str]:
    """Every sample name the service's metrics registry exposes: the registry the docs'
    metrics table is generated from (docs/_hooks/tables.py, every metric class ``run_service``
    registers, each labelled series exercised once), so the dashboard, the alerts and the
    docs are held to one registry."""
    registry = tables_hook().service_registry()
    return {sample.name for family in registry.collect() for sample in family.samples}


def promql_identifiers(expr: str) -> tuple[set[str], set[str]]:
    """The metric names and the function names a PromQL expression uses."""
    text = _STRINGS.sub("", expr)
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range and subquery durations
    text = _GROUPING.sub("", text)
    text = re.sub(r"\$\{?\w+\}?", "", text)  # Grafana variables
    text = re.sub(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?[smhdwy]?\b", "", text)
    metrics: set[str] = set()
    functions: set[str] = set()
    for match in _IDENTIFIER.finditer(text):
        name = match.group(0)
        if name.lower() in PROMQL_KEYWORDS:
            continue
        (functions if match.group(1) else metrics).add(name)
    return metrics, functions


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def dashboard_exprs() -> list[str]:
    exprs = [t["expr"] for p in dashboard()["panels"] for t in p.get("targets", [])]
    for var in dashboard()["templating"]["list"]:
        if var["type"] == "query":
            match = re.fullmatch(r"label_values\((.+),\s*\w+\)", var["definition"])
            assert match, var["definition"]
            exprs.append(match.group(1))
    return exprs


def alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def test_promql_identifiers_tell_metrics_from_syntax() -> None:
    """The extractor sees metric names and functions, not labels, keywords or variables."""
    expr = (
        'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{route=~"$route"}'
        "[$__rate_interval]))) > on (job) b_total unless (c offset 5m)"
    )
    assert promql_identifiers(expr) == (
        {"a_bucket", "b_total", "c"},
        {"histogram_quantile", "sum", "rate"},
    )


@pytest.mark.parametrize("expr", dashboard_exprs())
def test_dashboard_uses_only_registered_metrics(expr: str) -> None:
    """Every dashboard query names only metrics ServiceMetrics registers, with known functions."""
    metrics, functions = promql_identifiers(expr)
    assert metrics, expr
    assert metrics <= registered_names() | {"up"}, expr
    assert functions <= PROMQL_FUNCTIONS, expr


@pytest.mark.parametrize("rule", alert_rules(), ids=lambda rule: str(rule["alert"]))
def test_alerts_use_only_registered_metrics(rule: dict[str, Any]) -> None:
    """Every alert expression names only metrics ServiceMetrics registers (or up)."""
    metrics, functions = promql_identifiers(rule["expr"])
    assert metrics, rule["expr"]
    assert metrics <= registered_names() | {"up"}, rule["expr"]
    assert functions <= PROMQL_FUNCTIONS, rule["expr"]


def test_alert_set_is_complete() -> None:
    """alerts.yml has exactly the agreed alerts, in the stream-validator group."""
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    assert [g["name"] for g in groups] == ["stream-validator"]
    assert {rule["alert"] for rule in alert_rules()} == EXPECTED_ALERTS


@pytest.mark.parametrize("rule", alert_rules(), ids=lambda rule: str(rule["alert"]))
def test_alert_has_severity_and_templated_annotations(rule: dict[str, Any]) -> None:
    """Each alert carries a severity and summary/description annotations using label templates."""
    assert rule["labels"]["severity"] in SEVERITIES
    assert set(rule["annotations"]) >= {"summary", "description"}
    assert "{{ $labels." in rule["annotations"]["summary"] + rule["annotations"]["description"]


def test_alert_unit_tests_cover_every_alert_both_ways() -> None:
    """alerts_test.yml has a firing and a not-firing case for every alert."""
    cases = [
        case
        for test in yaml.safe_load(ALERTS_TEST.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
    ]
    fires = {case["alertname"] for case in cases if case.get("exp_alerts")}
    silent = {case["alertname"] for case in cases if not case.get("exp_alerts")}
    assert fires == EXPECTED_ALERTS
    assert silent == EXPECTED_ALERTS


def test_dashboard_is_a_grafana_dashboard() -> None:
    """The dashboard has a uid, a modern schemaVersion and unique panel ids inside the grid."""
    data = dashboard()
    assert data["uid"] == "stream-validator"
    assert 36 <= data["schemaVersion"] <= 41
    ids = [p["id"] for p in data["panels"]]
    assert len(ids) == len(set(ids))
    for panel in data["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]


def test_dashboard_queries_use_the_datasource_variable() -> None:
    """Every panel and target picks Prometheus through ${DS_PROMETHEUS}."""
    want = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
    for panel in dashboard()["panels"]:
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == want, panel["title"]
        assert all(t["datasource"] == want for t in panel["targets"]), panel["title"]


def test_datasource_variable_defaults_to_the_provisioned_uid() -> None:
    """${DS_PROMETHEUS} defaults to the uid that provisioning gives the Prometheus data source."""
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    provisioned = yaml.safe_load(DATASOURCES.read_text())["datasources"]
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["DS_PROMETHEUS"]["current"]["value"] in {d["uid"] for d in provisioned}


def test_dashboard_provider_is_a_file_provider() -> None:
    """The dashboard provider loads JSON files from disk and keeps git as the source of truth."""
    (provider,) = yaml.safe_load(PROVIDERS.read_text())["providers"]
    assert provider["type"] == "file"
    assert provider["allowUiUpdates"] is False
    assert provider["options"]["path"]
