"""Read deploy/ the way its tools would: kustomize overlays, compose mounts, the Dockerfile.

Small, faithful models, no network and no external tool: ``kustomize`` renders resources and
configMapGenerator entries (the only kustomization features deploy/k8s uses, which
``KUSTOMIZE_KEYS`` pins), ``container_fs`` lays out what a compose service sees under ``/`` (the
image's own COPY of the config, then the bind mounts), ``dockerfile_stages`` splits the
Dockerfile into stages of (instruction, arguments).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE_FILE = DEPLOY / "compose" / "docker-compose.yml"
K8S = DEPLOY / "k8s"
DOCKERFILE = ROOT / "Dockerfile"
KUSTOMIZE_KEYS = frozenset({"apiVersion", "kind", "resources", "configMapGenerator"})
SECRET_PLACEHOLDER = "from-a-secret"


def load_docs(path: Path) -> list[Any]:
    """Every non-empty YAML document of a file."""
    with path.open(encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def kustomize(directory: Path) -> list[dict[str, Any]]:
    """The objects ``kustomize build directory`` emits, ConfigMaps without their hash suffix."""
    (kustomization,) = load_docs(directory / "kustomization.yaml")
    unknown = set(kustomization) - KUSTOMIZE_KEYS
    assert not unknown, f"{directory}: kustomization keys this model ignores: {sorted(unknown)}"
    objects: list[dict[str, Any]] = []
    for resource in kustomization.get("resources", []):
        path = directory / resource
        objects.extend(kustomize(path) if path.is_dir() else load_docs(path))
    for generator in kustomization.get("configMapGenerator", []):
        data = {}
        for entry in generator["files"]:
            key, _, relative = entry.rpartition("=")
            data[key or Path(relative).name] = (directory / relative).read_text(encoding="utf-8")
        metadata = {"name": generator["name"], **generator.get("options", {})}
        objects.append(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}
        )
    return objects


@dataclass
class Rendered:
    """One overlay's objects, with lookups by kind and name."""

    objects: list[dict[str, Any]]

    def all(self, kind: str) -> list[dict[str, Any]]:
        """Every object of a kind."""
        return [o for o in self.objects if o["kind"] == kind]

    def one(self, kind: str, name: str | None = None) -> dict[str, Any]:
        """The single object of a kind (and name)."""
        found = [o for o in self.all(kind) if name is None or o["metadata"]["name"] == name]
        assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
        return found[0]

    @property
    def workload(self) -> dict[str, Any]:
        """The Deployment or StatefulSet running the validator."""
        (workload,) = self.all("Deployment") + self.all("StatefulSet")
        return workload

    @property
    def pod(self) -> dict[str, Any]:
        """The workload's pod spec."""
        spec: dict[str, Any] = self.workload["spec"]["template"]["spec"]
        return spec

    @property
    def pod_labels(self) -> dict[str, str]:
        """The labels of the workload's pods."""
        labels: dict[str, str] = self.workload["spec"]["template"]["metadata"]["labels"]
        return labels

    @property
    def container(self) -> dict[str, Any]:
        """The validator container (the pod has exactly one)."""
        (container,) = self.pod["containers"]
        return container  # type: ignore[no-any-return]

    def port(self, name_or_number: str | int) -> int:
        """A container port by name (or a number, returned as is)."""
        if isinstance(name_or_number, int):
            return name_or_number
        ports = {p["name"]: p["containerPort"] for p in self.container["ports"]}
        assert name_or_number in ports, f"no container port named {name_or_number!r}"
        return int(ports[name_or_number])

    def env(self) -> dict[str, str]:
        """The container's environment as the process sees it (secrets as a placeholder)."""
        out = {}
        for item in self.container.get("env", []):
            source = item.get("valueFrom", {})
            if "secretKeyRef" in source:
                out[item["name"]] = SECRET_PLACEHOLDER
            elif "fieldRef" in source:
                out[item["name"]] = f"<{source['fieldRef']['fieldPath']}>"
            else:
                out[item["name"]] = str(item["value"])
        return out

    def configmap_files(self, target: Path) -> Path:
        """Write the config volume's files under ``target`` as the kubelet would; return it."""
        for volume in self.pod["volumes"]:
            if "configMap" not in volume:
                continue
            data = self.one("ConfigMap", volume["configMap"]["name"])["data"]
            items = volume["configMap"].get("items") or [{"key": k, "path": k} for k in data]
            for item in items:
                path = target / item["path"]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(data[item["key"]], encoding="utf-8")
        return target


def matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """True when every selector label is on the object."""
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


# --- compose -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mount:
    """A bind mount: host path (resolved) -> container path."""

    source: Path
    target: str


def bind_mounts(service: Mapping[str, Any], base: Path) -> list[Mount]:
    """The bind mounts of a compose service, short or long syntax (named volumes skipped)."""
    mounts = []
    for volume in service.get("volumes", []):
        if isinstance(volume, str):
            source, target = volume.split(":")[:2]
            if not source.startswith((".", "/", "~")):
                continue  # a named volume
        elif volume.get("type") == "bind":
            source, target = volume["source"], volume["target"]
        else:
            continue
        mounts.append(Mount((base / source).resolve(), target))
    return mounts


def duration_s(text: str) -> float:
    """Seconds of a compose duration such as ``45s`` or ``1m30s``."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"not a duration: {text!r}"
    return sum(float(n) * units[u] for n, u in parts)


# --- Dockerfile ----------------------------------------------------------------------------


@dataclass
class Stage:
    """One FROM ... stage: its base and its instructions in order."""

    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, instruction: str) -> list[str]:
        """The argument text of every occurrence of an instruction."""
        return [a for i, a in self.instructions if i == instruction]

    def env(self) -> dict[str, str]:
        """Every ENV key=value of the stage (later ones win)."""
        out: dict[str, str] = {}
        for text in self.args("ENV"):
            for word in shlex.split(text):
                key, _, value = word.partition("=")
                out[key] = value
        return out


def _logical_lines(text: str) -> Iterator[str]:
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        yield pending + line
        pending = ""


def dockerfile_stages(path: Path = DOCKERFILE) -> tuple[dict[str, str], list[Stage]]:
    """(global ARG defaults, stages) of a Dockerfile; ``${ARG}`` in FROM is expanded."""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in _logical_lines(path.read_text(encoding="utf-8")):
        instruction, _, rest = line.partition(" ")
        instruction, rest = instruction.upper(), rest.strip()
        if instruction == "FROM":
            words = rest.split()
            base = re.sub(r"\$\{(\w+)\}", lambda m: global_args[m.group(1)], words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base, name))
        elif not stages and instruction == "ARG":
            key, _, value = rest.partition("=")
            global_args[key] = value
        elif stages:
            stages[-1].instructions.append((instruction, rest))
    return global_args, stages


def copy_trees(copies: list[tuple[Path, str]], root: Path) -> Path:
    """Lay out (host path, container path) pairs under ``root``, later ones on top."""
    for source, target in copies:
        destination = root / target.lstrip("/")
        if source.is_dir():
            shutil.copytree(source, destination, dirs_exist_ok=True)
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
    return root
