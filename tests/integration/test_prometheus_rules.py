"""deploy/ passes promtool: rules lint, rule unit tests pass, config and dashboard PromQL are valid.

A missing promtool FAILS these tests (install it with ``apt-get install prometheus``); set
``SV_ALLOW_MISSING_PROMTOOL=1`` to skip them instead on a machine without Prometheus.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PROMETHEUS_DIR = DEPLOY / "prometheus"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "stream_validator.json"
ALLOW_MISSING = "SV_ALLOW_MISSING_PROMTOOL"


def find_promtool() -> str:
    """The promtool path; fails the test (or skips it when allowed) when there is none."""
    path = shutil.which("promtool")
    if path is not None:
        return path
    if os.environ.get(ALLOW_MISSING) == "1":
        pytest.skip(f"promtool is not installed and {ALLOW_MISSING}=1")
    pytest.fail(
        "promtool is not on PATH: install Prometheus (apt-get install -y prometheus) "
        f"or set {ALLOW_MISSING}=1 to skip the Prometheus rule checks",
        pytrace=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("check", "rules", "alerts.yml"),
        ("test", "rules", "alerts_test.yml"),
        ("check", "config", "prometheus.yml"),
    ],
    ids=["check-rules", "test-rules", "check-config"],
)
def test_promtool_accepts(args: tuple[str, str, str]) -> None:
    """promtool <check|test> ... exits 0 on the committed Prometheus files."""
    verb, kind, name = args
    command = [find_promtool(), verb, kind, str(PROMETHEUS_DIR / name)]
    done = subprocess.run(
        command, cwd=PROMETHEUS_DIR, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"
    assert "SUCCESS" in done.stdout + done.stderr


def test_dashboard_promql_parses(tmp_path: Path) -> None:
    """Every dashboard query, with Grafana variables filled in, is valid PromQL for promtool."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    exprs = [target["expr"] for panel in panels for target in panel.get("targets", [])]
    rules = [
        {"record": f"dashboard:query_{i}", "expr": _fill_grafana_variables(expr)}
        for i, expr in enumerate(exprs)
    ]
    # JSON is valid YAML, so no YAML writer is needed.
    rule_file = tmp_path / "dashboard_rules.yml"
    rule_file.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))
    command = [find_promtool(), "check", "rules", str(rule_file)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"


def _fill_grafana_variables(expr: str) -> str:
    expr = expr.replace("$__rate_interval", "1m")
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


def test_missing_promtool_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without promtool on PATH the check fails rather than skipping silently."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(ALLOW_MISSING, raising=False)
    with pytest.raises(pytest.fail.Exception, match="promtool is not on PATH"):
        find_promtool()


def test_missing_promtool_skips_when_allowed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """SV_ALLOW_MISSING_PROMTOOL=1 turns the missing promtool into a skip."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(ALLOW_MISSING, "1")
    with pytest.raises(pytest.skip.Exception):
        find_promtool()
