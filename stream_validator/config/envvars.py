"""SV_* environment overrides of the service config file. PURE (the caller passes the
environment).

``SV_`` and ``__`` between levels name a key (``SV_BATCH__MAX_RECORDS`` is
``batch.max_records``); inside ``kafka.settings``/``consumer``/``producer`` the ``_`` of a
name becomes ``.`` and the value stays a string; elsewhere a value is read as a YAML scalar.
A variable that cannot be applied (``routes``, or a path through a key that is not a
section) is a problem naming the variable; every one is found in one run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from stream_validator.errors import ConfigError, YamlFileError, problem_listing
from stream_validator.yamlfile import parse_yaml

ENV_PREFIX: Final = "SV_"
#: The kafka sections passed through to librdkafka as they are.
KAFKA_MAPS: Final = ("settings", "consumer", "producer")


def apply_env_overrides(document: dict[str, Any], environ: Mapping[str, str]) -> None:
    """Merge SV_SECTION__KEY[__SUBKEY]=value variables into the document, in place; a
    ConfigError names every variable that cannot be applied, one per line."""
    problems = merge_env_overrides(document, environ)
    if problems:
        raise ConfigError(problem_listing(problems))


def merge_env_overrides(document: dict[str, Any], environ: Mapping[str, str]) -> list[str]:
    """Merge the variables that can be applied; return the others' problems, each naming
    its variable (they are all found in one run, like a file's)."""
    problems: list[str] = []
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        if parts[0] == "routes":
            problems.append(f"{name}: routes cannot be set from the environment")
            continue
        node = document
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                problems.append(f"{name}: {'.'.join(parts[: depth + 1])} is not a section")
                break
            node = child
        else:
            passthrough = len(parts) == 3 and parts[0] == "kafka" and parts[1] in KAFKA_MAPS
            key = parts[-1].replace("_", ".") if passthrough else parts[-1]
            node[key] = raw if passthrough else _scalar(raw)
    return problems


def _scalar(raw: str) -> object:
    try:
        value = parse_yaml(raw)  # the file's reading: 1.0e10 is a float here too
    except YamlFileError:
        return raw
    return value if isinstance(value, str | int | float | bool) else raw
