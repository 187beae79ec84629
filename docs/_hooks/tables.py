"""The docs' generated tables: exit codes, the configuration reference, the metrics.

An mkdocs hook (``hooks:`` in mkdocs.yml): every page is passed through ``render_page``
before it is turned into HTML, so these tables come from the code on every build:

- ``<!-- exit-codes: ServiceExit -->`` becomes the table of that ``IntEnum`` of
  ``stream_validator/errors.py``: each member's value, name and the comment beside it.
- A hand-written table of ``| key | meaning |`` rows between ``<!-- config-reference -->`` and
  ``<!-- /config-reference -->`` gets each key's type and bounds (from the config schema's
  Structs, ``config/schema.py``) and its default (from the dataclasses of ``config/settings.py``
  and ``config/breaker.py``). A key the schema has and the table lacks, or the reverse, fails
  the build.
- A hand-written table of ``| metric | meaning |`` rows between ``<!-- metrics -->`` and
  ``<!-- /metrics -->`` gets each metric's type and labels from a registry built as the
  service builds it; a metric registered and not documented, or the reverse, fails the build.

The meanings are written once, on the page; what the code knows comes from the code.
tests/docs/ checks the rendered pages.
"""

from __future__ import annotations

import ast
import enum
import inspect
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import msgspec
from msgspec import inspect as msgspec_inspect

from stream_validator import SchemaContractValidationReport, errors
from stream_validator.config.breaker import BreakerAction, BreakerSpec
from stream_validator.config.schema import ConfigDoc
from stream_validator.config.settings import KafkaConfig, RouteConfig, ServiceConfig


class DocsTableError(Exception):
    """A generated table and its page disagree; the message says how."""


# --- exit codes --------------------------------------------------------------------------

_EXIT_MARKER = re.compile(r"<!-- exit-codes: (\w+) -->")


def exit_code_enums() -> dict[str, type[enum.IntEnum]]:
    """Every exit-code enum of ``errors.py``, by name."""
    return {
        name: value
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, enum.IntEnum) and value is not enum.IntEnum
    }


def member_comments(cls: type[enum.IntEnum]) -> dict[str, str]:
    """The comment beside each member (``OK = 0  # stopped on request``), continued by
    comment-only lines right below it."""
    comments: dict[str, str] = {}
    member: str | None = None
    for line in inspect.getsource(cls).splitlines():
        assignment = re.fullmatch(r"\s*(\w+)\s*=\s*[^#]*#\s*(.*)", line)
        continuation = re.fullmatch(r"\s*#\s*(.*)", line)
        if assignment and assignment.group(1) in cls.__members__:
            member = assignment.group(1)
            comments[member] = assignment.group(2).strip()
        elif continuation and member is not None:
            comments[member] += " " + continuation.group(1).strip()
        else:
            member = None
    return comments


def exit_code_table(enum_name: str) -> str:
    """The Markdown table of the exit-code enum of errors.py named ``enum_name``."""
    enums = exit_code_enums()
    if enum_name not in enums:
        raise DocsTableError(f"no exit-code enum {enum_name!r} in errors.py: {sorted(enums)}")
    return enum_table(enums[enum_name])


def enum_table(cls: type[enum.IntEnum]) -> str:
    """The Markdown table of one exit-code enum; every member must carry a comment."""
    comments = member_comments(cls)
    missing = [m.name for m in cls if m.name not in comments]
    if missing:
        raise DocsTableError(f"errors.{cls.__name__}: members without a comment: {missing}")
    rows = [f"| {m.value} | `{m.name}` | {comments[m.name]} |" for m in cls]
    header = f"Exit codes (`{cls.__name__}` in `stream_validator/errors.py`):\n\n"
    return header + "| code | name | meaning |\n|---:|---|---|\n" + "\n".join(rows) + "\n"


# --- hand-written tables the hook completes -------------------------------------------


def _table_rows(block: str, where: str) -> dict[str, str]:
    """``| `key` | meaning |`` rows of a two-column table, by key (header rows skipped)."""
    rows: dict[str, str] = {}
    for line in block.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|", 1)]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        key = cells[0].strip("`")
        if key in rows:
            raise DocsTableError(f"{where}: {key} is documented twice")
        rows[key] = cells[1]
    if not rows:
        raise DocsTableError(f"{where}: no rows")
    return rows


def _compare(where: str, documented: set[str], actual: set[str], what: str) -> None:
    problems = []
    if actual - documented:
        problems.append(f"not documented: {sorted(actual - documented)}")
    if documented - actual:
        problems.append(f"documented but not {what}: {sorted(documented - actual)}")
    if problems:
        raise DocsTableError(f"{where}: " + "; ".join(problems))


def _replace_block(markdown: str, tag: str, render: Callable[[str], str]) -> str:
    pattern = re.compile(rf"<!-- {tag} -->\n(.*?)<!-- /{tag} -->", re.DOTALL)
    return pattern.sub(lambda match: render(match.group(1)), markdown)


# --- the configuration reference ------------------------------------------------------


def _type_text(info: Any) -> str:
    """A msgspec type as a reader writes it in YAML, with its bounds."""
    if isinstance(info, msgspec_inspect.UnionType):
        return " or ".join(_type_text(t) for t in info.types)
    if isinstance(info, msgspec_inspect.NoneType):
        return "null"
    if isinstance(info, msgspec_inspect.LiteralType):
        return " \\| ".join(f"`{v}`" for v in info.values)
    if isinstance(info, msgspec_inspect.ListType):
        return f"list of {_type_text(info.item_type)}"
    if isinstance(info, msgspec_inspect.DictType):
        return "mapping"
    if isinstance(info, msgspec_inspect.StrType):
        return "text" if info.min_length else "text (may be empty)"
    if isinstance(info, msgspec_inspect.BoolType):
        return "bool"
    if isinstance(info, msgspec_inspect.IntType | msgspec_inspect.FloatType):
        kind = "int" if isinstance(info, msgspec_inspect.IntType) else "seconds (number)"
        bounds = [
            f"{sign} {_number(value)}"
            for sign, value in ((">", info.gt), ("≥", info.ge), ("<", info.lt), ("≤", info.le))
            if value is not None
        ]
        return f"{kind} {', '.join(bounds)}".strip()
    raise DocsTableError(f"no rendering for the schema type {info!r}")


def _number(value: float) -> str:
    """``5000``, ``100,000``, ``0.005``: thousands separated from five digits on."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}" if abs(value) >= 10_000 else f"{int(value)}"


def _default_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, enum.Enum):
        return f"`{value.value}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"`{_number(value)}`"
    if isinstance(value, dict):
        return "`{}`"
    if isinstance(value, tuple):
        return "none"
    return f"`{value}`"


def _dataclass_defaults(cls: type) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(cls):
        if f.default is not MISSING:
            out[f.name] = f.default
        elif f.default_factory is not MISSING:
            out[f.name] = f.default_factory()
    return out


#: Where a config section's defaults live, when not in ServiceConfig under "<section>_":
#: (its dataclass, the dataclass attribute's prefix). Routes' keys are rows of ``routes[]``.
_SECTION_DEFAULTS: dict[str, tuple[type, str]] = {
    "kafka": (KafkaConfig, ""),
    "service": (ServiceConfig, ""),
    "routes": (RouteConfig, ""),
}


def _sections() -> Iterator[tuple[str, type[msgspec.Struct], type, str]]:
    """Every section of the config file, read off the schema's top-level Struct, so a
    section added to the schema cannot be missing from the reference."""
    for field in msgspec_inspect.type_info(ConfigDoc).fields:  # type: ignore[attr-defined]
        info = field.type
        name = field.name
        if isinstance(info, msgspec_inspect.ListType):
            info, name = info.item_type, f"{name}[]"
        if not isinstance(info, msgspec_inspect.StructType):
            raise DocsTableError(f"config section {field.name!r} is not a Struct")
        dataclass_type, prefix = _SECTION_DEFAULTS.get(
            field.name, (ServiceConfig, f"{field.name}_")
        )
        yield name, info.cls, dataclass_type, prefix


#: Route keys whose dataclass attribute has another name.
_ROUTE_ATTRIBUTES = {"contract": "contract_path"}


def config_keys() -> dict[str, tuple[str, str]]:
    """Every key of the service config: (type with bounds, default)."""
    keys: dict[str, tuple[str, str]] = {}
    for section, struct, dataclass_type, prefix in _sections():
        defaults = _dataclass_defaults(dataclass_type)
        for field in msgspec_inspect.type_info(struct).fields:  # type: ignore[attr-defined]
            attribute = prefix + _ROUTE_ATTRIBUTES.get(field.name, field.name)
            if field.required:
                default = "required"
            elif attribute in defaults:
                default = _default_text(defaults[attribute])
            else:
                default = _default_text(field.default)
            keys[f"{section}.{field.name}"] = (_type_text(field.type), default)
    breaker = _dataclass_defaults(BreakerSpec)
    for f in fields(BreakerSpec):
        kind = (
            " \\| ".join(f"`{a.value}`" for a in BreakerAction)
            if f.name == "action"
            else (str(f.type).replace(" | None", " or null"))
        )
        keys[f"routes[].circuit_breaker.{f.name}"] = (kind, _default_text(breaker[f.name]))
    return keys


def config_reference(block: str) -> str:
    """The hand-written ``| key | meaning |`` table with each key's type and default."""
    meanings = _table_rows(block, "the configuration reference")
    keys = config_keys()
    _compare("the configuration reference", set(meanings), set(keys), "in the config schema")
    rows = [f"| `{k}` | {keys[k][0]} | {keys[k][1]} | {m} |" for k, m in meanings.items()]
    return "| key | type | default | meaning |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"


# --- the metrics -------------------------------------------------------------------------


def service_registry() -> Any:
    """A registry holding every metric the service registers, as ``run_service`` builds it
    (ServiceMetrics, IntegrityMetrics, BreakerMetrics, ReloadMetrics, ShadowMetrics), each
    labelled series
    exercised once so its label names show."""
    from prometheus_client import CollectorRegistry

    from stream_validator.service.plan.shadowdiff import ShadowDiff
    from stream_validator.service.telemetry.breakermetrics import BreakerMetrics
    from stream_validator.service.telemetry.integritymetrics import IntegrityMetrics
    from stream_validator.service.telemetry.metrics import ServiceMetrics
    from stream_validator.service.telemetry.reloadmetrics import ReloadMetrics
    from stream_validator.service.telemetry.shadowmetrics import ShadowMetrics

    registry = CollectorRegistry()
    metrics = ServiceMetrics(registry)
    metrics.set_build_info("0", {"tick": "1"})
    metrics.set_null_ceiling("tick", ["bid"], 1.0)
    metrics.declare_flags("ticks", "tick", ["locked_book"])
    report = SchemaContractValidationReport(
        contract_name="tick",
        contract_version="1",
        max_allowed_null_pct=1.0,
        total_records=2,
        valid_records=[],
        valid_indices=[],
        quarantined_records=[],
        null_rates={"bid": 50.0},
        null_breach_fields={"bid": 50.0},
        observed_unknown_fields={"venue"},
        violation_counts=Counter({("price", "below_min"): 1}),
        valid_count=1,
        quarantined_count=1,
    )
    metrics.observe_batch("ticks", report, duration_seconds=0.01, now=1.0)
    metrics.observe_end_to_end_latency("ticks", [0.1])
    metrics.set_consumer_lag("md.ticks", 0, 5)
    metrics.inc_rebalance("assigned")
    metrics.inc_delivery_failure("ticks", "dlq")
    metrics.inc_dlq_truncated("ticks")
    metrics.set_last_commit(1.0)
    metrics.set_ready(True)
    metrics.inc_hook_error("on_batch")
    integrity = IntegrityMetrics(registry)
    integrity.set_state_contract("tick")
    integrity.set_non_finite_fields("tick", ["price"])
    BreakerMetrics(registry, ["ticks"])
    ReloadMetrics(registry, ["tick"])
    shadow = ShadowMetrics(registry, ["ticks"])
    shadow.observe(
        "ticks",
        ShadowDiff(
            2,
            rescued=(0,),
            violations=Counter({("rescued", "ask_sz", "missing_field"): 1}),
            ceiling={"bid": "newly_breached"},
        ),
    )
    return registry


def registered_metrics() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every metric the service registers: name -> (type, label names)."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for family in service_registry().collect():
        name = f"{family.name}_total" if family.type == "counter" else family.name
        labels = {key for sample in family.samples for key in sample.labels} - {"le"}
        if not family.samples:
            raise DocsTableError(f"{name}: no series, so its labels are unknown")
        out[name] = (family.type, tuple(sorted(labels)))
    return out


def metrics_table(block: str) -> str:
    """The hand-written ``| metric | meaning |`` table with each metric's type and labels."""
    meanings = _table_rows(block, "the metrics table")
    registered = registered_metrics()
    _compare("the metrics table", set(meanings), set(registered), "registered")
    rows = []
    for name, meaning in meanings.items():
        kind, labels = registered[name]
        label_text = ", ".join(f"`{label}`" for label in labels) or "none"
        rows.append(f"| `{name}` | {kind} | {label_text} | {meaning} |")
    return "| metric | type | labels | meaning |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"


# --- the architecture: layers and layout ---------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "stream_validator"


def import_contracts() -> list[dict[str, Any]]:
    """The import-linter contracts of pyproject.toml."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        contracts: list[dict[str, Any]] = tomllib.load(handle)["tool"]["importlinter"]["contracts"]
    return contracts


def layer_diagram(_: str = "") -> str:
    """The layers contract as a diagram (top imports bottom, never the reverse), then the
    name of every other contract."""
    contracts = import_contracts()
    layered = [c for c in contracts if c["type"] == "layers"]
    if len(layered) != 1:
        raise DocsTableError(f"expected one layers contract in pyproject.toml, got {len(layered)}")
    (layers,) = layered
    diagram = "\n    ↓\n".join(layers["layers"])
    others = [f"- {c['name']}" for c in contracts if c["type"] != "layers"]
    return (
        f"```text\n{diagram}\n```\n\n{layers['name']}. The other rules:\n\n"
        + "\n".join(others)
        + "\n"
    )


def _summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    if not docstring:
        raise DocsTableError(f"{path.relative_to(ROOT)} has no docstring")
    paragraph = docstring.split("\n\n", 1)[0]
    return " ".join(paragraph.split()).replace("|", "\\|")


def _layout_lines(directory: Path, depth: int) -> Iterator[str]:
    indent = "    " * depth
    for path in sorted(directory.iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            yield f"{indent}- **`{path.name}/`** {_summary(path / '__init__.py')}"
            yield from _layout_lines(path, depth + 1)
        elif path.suffix == ".py" and path.name != "__init__.py":
            yield f"{indent}- `{path.name}` {_summary(path)}"


def package_layout(_: str = "") -> str:
    """Every package and module of stream_validator with the first paragraph of its
    docstring."""
    root = f"- `__init__.py` {_summary(PACKAGE / '__init__.py')}"
    return "\n".join([root, *_layout_lines(PACKAGE, 0)]) + "\n"


# --- the hook ------------------------------------------------------------------------------


def render_page(markdown: str) -> str:
    """A page with its generated tables filled in."""
    markdown = _EXIT_MARKER.sub(lambda m: exit_code_table(m.group(1)), markdown)
    markdown = _replace_block(markdown, "config-reference", config_reference)
    if "<!-- layers -->" in markdown:
        markdown = markdown.replace("<!-- layers -->", layer_diagram())
    if "<!-- package-layout -->" in markdown:
        markdown = markdown.replace("<!-- package-layout -->", package_layout())
    return _replace_block(markdown, "metrics", metrics_table)


def markers(markdown: str) -> Iterator[str]:
    """The exit-code enums a page renders."""
    return (match.group(1) for match in _EXIT_MARKER.finditer(markdown))


def on_page_markdown(markdown: str, **_: Any) -> str:
    """mkdocs hook: fill in the generated tables (a DocsTableError fails the build)."""
    return render_page(markdown)
