"""The docs' generated tables agree with the code: exit codes, config keys, metrics, layout."""

from __future__ import annotations

import enum
import re
from typing import Any

import pytest
import yaml

from stream_validator import errors
from stream_validator.config.settings import ServiceConfig
from tests.docs.pages import ROOT, code, page, pages, table_rows, tables_hook

CONFIG_PAGE = "service/configuration.md"
METRICS_PAGE = "operations/metrics.md"


def rendered(relative: str) -> str:
    rendered_page: str = tables_hook().render_page(page(relative))
    return rendered_page


def test_every_page_renders_without_a_marker_left() -> None:
    """The hook fills in every marker of every page (a disagreement would raise)."""
    for name, markdown in pages().items():
        out = tables_hook().render_page(markdown)
        assert "<!-- exit-codes" not in out, name
        assert not re.search(r"<!-- /?(config-reference|metrics|layers|package-layout) -->", out)


def test_every_exit_code_enum_is_rendered_on_one_page() -> None:
    """Each IntEnum of errors.py has its table on exactly one page, and nothing else does."""
    enums = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, enum.IntEnum) and value is not enum.IntEnum
    }
    assert enums >= {"CheckExit", "ServiceExit", "ReplayExit", "SimulateExit", "ResumeExit"}
    rendered_where: dict[str, list[str]] = {}
    for name, markdown in pages().items():
        for enum_name in tables_hook().markers(markdown):
            rendered_where.setdefault(enum_name, []).append(name)
    assert set(rendered_where) == enums
    assert all(len(where) == 1 for where in rendered_where.values()), rendered_where


@pytest.mark.parametrize("enum_name", ["CheckExit", "ServiceExit", "ReplayExit", "ResumeExit"])
def test_an_exit_code_table_lists_every_member_with_its_comment(enum_name: str) -> None:
    """A row per member: its value, its name and the comment written beside it in errors.py."""
    cls = getattr(errors, enum_name)
    table = tables_hook().exit_code_table(enum_name)
    rows = table_rows(table, "| code |")
    assert [(int(r[0]), code(r[1])) for r in rows] == [(m.value, m.name) for m in cls]
    assert all(len(r[2]) > 10 for r in rows), rows


def test_an_exit_code_member_without_a_comment_fails_the_build() -> None:
    """A member nobody explained cannot slip into the docs as an empty row."""

    class Bare(enum.IntEnum):
        OK = 0  # fine
        FAILED = 1

    with pytest.raises(tables_hook().DocsTableError, match="FAILED"):
        tables_hook().enum_table(Bare)


def test_the_service_exit_codes_say_what_run_returns() -> None:
    """The run page's table is ServiceExit: 0 to 4 with their documented meanings."""
    rows = table_rows(rendered("service/endpoints.md"), "| code |")
    assert [int(r[0]) for r in rows] == [0, 1, 2, 3, 4]
    assert "halt_after_failed_batches" in rows[3][2]
    assert "shutdown_timeout_s" in rows[4][2]


def _config_rows() -> dict[str, list[str]]:
    rows = table_rows(rendered(CONFIG_PAGE), "| key | type | default |")
    return {code(r[0]): r for r in rows}


def test_the_configuration_reference_lists_every_schema_key() -> None:
    """Every key of the config schema has a row, and every row is a key of the schema."""
    assert set(_config_rows()) == set(tables_hook().config_keys())


def _flat_keys(document: Any, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    if isinstance(document, dict):
        for key, value in document.items():
            path = f"{prefix}{key}"
            passthrough = key in ("settings", "consumer", "producer")
            if passthrough or key == "circuit_breaker" or not isinstance(value, dict | list):
                keys.add(path)  # a documented key (sections are not keys themselves)
            if not passthrough:
                keys |= _flat_keys(value, path + ".")
    elif isinstance(document, list):
        for item in document:
            keys |= _flat_keys(item, prefix.rstrip(".") + "[].")
    return keys


def test_every_key_of_the_example_config_is_documented() -> None:
    """config/service.yaml uses only keys the reference documents (checked apart from the
    schema the reference is generated from)."""
    document = yaml.safe_load((ROOT / "config" / "service.yaml").read_text(encoding="utf-8"))
    assert _flat_keys(document) <= set(_config_rows())


@pytest.mark.parametrize(
    ("key", "attribute"),
    [
        ("batch.max_records", "batch_max_records"),
        ("batch.linger_s", "batch_linger_s"),
        ("service.shutdown_timeout_s", "shutdown_timeout_s"),
        ("service.health_port", "health_port"),
        ("metrics.port", "metrics_port"),
    ],
)
def test_a_documented_default_is_the_dataclass_default(key: str, attribute: str) -> None:
    """The default column shows what ServiceConfig uses when the key is left out."""
    default = ServiceConfig.__dataclass_fields__[attribute].default
    assert _config_rows()[key][2].strip("`").replace(",", "") == f"{default:g}"


def test_route_keys_without_a_default_are_marked_required() -> None:
    """name, contract, clean_topic and dlq_topic must be written; the reference says so."""
    rows = _config_rows()
    required = {key for key, row in rows.items() if row[2] == "required"}
    assert required == {f"routes[].{k}" for k in ("name", "contract", "clean_topic", "dlq_topic")}


def test_a_config_key_missing_from_the_page_fails_the_build() -> None:
    """Dropping a row (a key added to the schema and not documented) is an error."""
    markdown = page(CONFIG_PAGE)
    without = "\n".join(line for line in markdown.splitlines() if "`batch.linger_s`" not in line)
    with pytest.raises(tables_hook().DocsTableError, match=re.escape("batch.linger_s")):
        tables_hook().render_page(without)


def _documented_metrics() -> dict[str, list[str]]:
    rows = table_rows(rendered(METRICS_PAGE), "| metric | type | labels |")
    return {code(r[0]): r for r in rows}


def test_the_metrics_page_and_the_registry_agree() -> None:
    """Every metric the service registers is documented, and every documented one exists."""
    assert set(_documented_metrics()) == set(tables_hook().registered_metrics())


def test_a_metric_row_shows_the_registered_type_and_labels() -> None:
    """Types and labels in the table are the registry's."""
    rows = _documented_metrics()
    for name, (kind, labels) in tables_hook().registered_metrics().items():
        assert rows[name][1] == kind
        shown = set(re.findall(r"`([^`]+)`", rows[name][2]))
        assert shown == set(labels), name


def test_a_metric_missing_from_the_page_fails_the_build() -> None:
    """A metric registered and not documented (a rename, say) is an error."""
    markdown = page(METRICS_PAGE)
    without = "\n".join(
        line for line in markdown.splitlines() if "`stream_validator_ready`" not in line
    )
    with pytest.raises(tables_hook().DocsTableError, match="stream_validator_ready"):
        tables_hook().render_page(without)


def test_the_layer_diagram_is_the_import_linter_contract() -> None:
    """Every layer of pyproject.toml's layers contract appears, in order."""
    (layers,) = [c for c in tables_hook().import_contracts() if c["type"] == "layers"]
    diagram = rendered("development/architecture.md")
    positions = [diagram.index(f"\n{layer}\n") for layer in layers["layers"]]
    assert positions == sorted(positions)


def test_the_layout_lists_every_module() -> None:
    """Every module of the package is in the generated layout."""
    layout = tables_hook().package_layout()
    package = ROOT / "stream_validator"
    for path in package.rglob("*.py"):
        nested = path.name == "__init__.py" and path.parent != package
        name = path.parent.name + "/" if nested else path.name
        assert f"`{name}`" in layout, path
