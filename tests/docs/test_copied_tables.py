"""Tables the docs copy from files say what those files say: the shipped rules, the alerts."""

from __future__ import annotations

import yaml

from stream_validator import load_contract
from tests.docs.pages import ROOT, code, page, table_rows

CONTRACTS = ROOT / "config" / "contracts"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"


def test_the_shipped_rules_table_is_the_shipped_contracts_rules() -> None:
    """Every rule of every routed contract file, with its check and action, and no other."""
    rows = table_rows(page("contracts/rules.md"), "| contract | rule |")
    documented = {(r[0], code(r[1]), code(r[2]), r[3]) for r in rows}
    shipped = set()
    for path in CONTRACTS.glob("*.yaml"):
        contract = load_contract(path)
        for rule in contract.rules:
            shipped.add((contract.name, rule.name, rule.check, str(rule.action)))
    assert documented == shipped


def test_the_alerts_table_is_alerts_yml() -> None:
    """Every alert of deploy/prometheus/alerts.yml with its `for` and severity, and no other."""
    rows = table_rows(page("operations/alerts.md"), "| Alert |")
    documented = {(code(r[0]), r[2], r[3]) for r in rows}
    groups = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    assert documented == {(r["alert"], r["for"], r["labels"]["severity"]) for r in rules}
