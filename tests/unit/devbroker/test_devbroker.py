"""Pure pieces of the development broker: no Maven, no Java, no broker."""

from __future__ import annotations

import os
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from stream_validator.cli import devkafka as devbroker
from stream_validator.devbroker.broker import LocalKafkaBroker
from stream_validator.devbroker.jars import (
    DEPENDENCY_PLUGIN_VERSION,
    KAFKA_VERSION,
    MARKER_NAME,
    broker_artifacts,
    cache_root,
    fetch_jars,
    kafka_home,
    render_pom,
)
from stream_validator.devbroker.settings import (
    StateLayout,
    broker_jvm_opts,
    java_command,
    parse_ports,
    pick_free_ports,
    render_log4j2,
    render_properties,
    server_settings,
    tail,
)

_POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def _parse_properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if not line.startswith("#"))
    return {key: value for key, value in pairs}


def test_properties_make_a_single_node_with_replication_factor_one(tmp_path: Path) -> None:
    """Internal topics use replication factor 1 and min ISR 1 so groups and transactions work."""
    props = _parse_properties(render_properties(server_settings(9092, 9093, tmp_path)))
    for key in (
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
        "transaction.state.log.min.isr",
        "share.coordinator.state.topic.replication.factor",
        "share.coordinator.state.topic.min.isr",
        "min.insync.replicas",
    ):
        assert props[key] == "1", key
    assert props["auto.create.topics.enable"] == "false"
    assert props["group.initial.rebalance.delay.ms"] == "0"
    assert props["log.cleaner.dedupe.buffer.size"] == str(16 * 2**20)


def test_properties_listen_on_loopback_ports(tmp_path: Path) -> None:
    """Both listeners, the advertised ones and the quorum use 127.0.0.1 and the given ports."""
    props = _parse_properties(render_properties(server_settings(19092, 19093, tmp_path)))
    expected = "PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093"
    assert props["listeners"] == props["advertised.listeners"] == expected
    assert props["controller.quorum.bootstrap.servers"] == "127.0.0.1:19093"
    assert props["process.roles"] == "broker,controller"
    assert props["log.dirs"] == str(tmp_path)


def test_properties_escape_backslashes() -> None:
    """A backslash in a path survives Java's properties parsing."""
    assert render_properties({"log.dirs": r"C:\kafka"}).splitlines()[-1] == r"log.dirs=C:\\kafka"


def test_free_ports_are_distinct_and_bindable() -> None:
    """Picked ports differ from each other and can be bound on loopback."""
    ports = pick_free_ports(3)
    assert len(set(ports)) == 3
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_pom_lists_kafka_and_the_slf4j_1_7_binding() -> None:
    """The POM asks for kafka_2.13, the log4j-slf4j-impl binding and pins the plugin."""
    root = ET.fromstring(render_pom(broker_artifacts()))
    deps = {
        (
            d.findtext("m:artifactId", namespaces=_POM_NS),
            d.findtext("m:version", namespaces=_POM_NS),
        )
        for d in root.iterfind("m:dependencies/m:dependency", _POM_NS)
    }
    assert ("kafka_2.13", KAFKA_VERSION) in deps
    assert {a for a, _ in deps} >= {"log4j-slf4j-impl", "log4j-core"}
    plugin = root.find("m:build/m:plugins/m:plugin", _POM_NS)
    assert plugin is not None
    assert plugin.findtext("m:version", namespaces=_POM_NS) == DEPENDENCY_PLUGIN_VERSION


def test_pom_names_no_repository() -> None:
    """Maven's defaults reach Maven Central: the POM configures no repository."""
    assert "repositor" not in render_pom(broker_artifacts()).lower()


def test_cache_root_honours_override_then_xdg(tmp_path: Path) -> None:
    """SV_KAFKA_CACHE_DIR wins over XDG_CACHE_HOME, which wins over ~/.cache."""
    assert cache_root({"SV_KAFKA_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert cache_root({"XDG_CACHE_HOME": "/x"}) == Path("/x/stream_validator")
    assert cache_root({}) == Path.home() / ".cache" / "stream_validator"


def test_fetch_skips_maven_once_marker_exists(tmp_path: Path) -> None:
    """With the marker present the jars folder is returned without running Maven."""
    root = _cached_jars(tmp_path)
    assert fetch_jars(root=root, mvn="/nonexistent/mvn") == kafka_home(KAFKA_VERSION, root) / "libs"


def test_fetch_without_maven_says_so(tmp_path: Path) -> None:
    """A missing mvn binary gives an error naming Maven, not a bare FileNotFoundError."""
    with pytest.raises(devbroker.DevBrokerError, match="Maven"):
        fetch_jars(root=tmp_path, mvn="/nonexistent/mvn")


def test_java_command_sets_heap_and_classpath(tmp_path: Path) -> None:
    """The broker command fixes the heap size and puts every cached jar on the classpath."""
    opts = broker_jvm_opts("1g")
    cmd = java_command(
        "java", tmp_path, tmp_path / "l.properties", "kafka.Kafka", "s", jvm_opts=opts
    )
    assert cmd[:3] == ["java", "-Xms1g", "-Xmx1g"]
    assert cmd[-4:] == ["-cp", f"{tmp_path}/*", "kafka.Kafka", "s"]
    assert f"-Dlog4j2.configurationFile={tmp_path / 'l.properties'}" in cmd


def test_tools_log_config_goes_to_stderr() -> None:
    """Tool logging goes to stderr so it never mixes with the cluster id on stdout."""
    text = render_log4j2("WARN", to_stderr=True)
    assert "SYSTEM_ERR" in text
    assert "rootLogger.level = WARN" in text


def test_parse_ports_rejects_garbage() -> None:
    """The ports file must hold exactly two numbers."""
    assert parse_ports("9092 9093\n") == (9092, 9093)
    with pytest.raises(ValueError):
        parse_ports("9092")


def test_tail_returns_last_lines(tmp_path: Path) -> None:
    """tail gives the last lines of a file and nothing for a missing one."""
    log = tmp_path / "broker.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert tail(log, 2) == "line 98\nline 99"
    assert tail(tmp_path / "missing") == ""


def test_stale_pid_file_of_another_process_is_not_running(tmp_path: Path) -> None:
    """A pid file naming a non-Kafka process is ignored, so stop never signals that process."""
    broker = LocalKafkaBroker(tmp_path)
    StateLayout(tmp_path).pid_file.write_text(f"{os.getpid()}\n")
    assert broker.pid is None
    assert not broker.is_running()
    assert broker.stop() is False


def test_status_without_broker_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """status on an empty state dir reports not running with exit code 1."""
    assert devbroker.main(["status", "--state-dir", str(tmp_path)]) == 1
    assert "not running" in capsys.readouterr().out


def test_stop_without_broker_is_a_no_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """stop on an empty state dir says nothing runs and succeeds."""
    assert devbroker.main(["stop", "--state-dir", str(tmp_path)]) == 0
    assert "no broker running" in capsys.readouterr().err


def _cached_jars(root: Path) -> Path:
    """A jar cache that claims to be complete, so no Maven runs."""
    home = kafka_home(KAFKA_VERSION, root)
    home.mkdir(parents=True)
    (home / MARKER_NAME).write_text("done\n")
    return root


def test_fresh_start_refuses_to_wipe_a_foreign_data_dir(tmp_path: Path) -> None:
    """A state dir whose data/ holds non-Kafka files is never wiped."""
    state = tmp_path / "state"
    (state / "data").mkdir(parents=True)
    (state / "data" / "precious.txt").write_text("keep me")
    broker = LocalKafkaBroker(state, jars_root=_cached_jars(tmp_path / "jars"))
    with pytest.raises(devbroker.DevBrokerError, match="refusing to wipe"):
        broker.start()
    assert (state / "data" / "precious.txt").read_text() == "keep me"


def test_keep_data_refuses_other_ports(tmp_path: Path) -> None:
    """Data formatted for some ports cannot be restarted on others (the quorum records them)."""
    layout = StateLayout(tmp_path / "state")
    layout.data_dir.mkdir(parents=True)
    layout.meta_properties.write_text("node.id=1\n")
    layout.ports_file.write_text("19092 19093\n")
    broker = LocalKafkaBroker(layout.root, port=29092, jars_root=_cached_jars(tmp_path / "jars"))
    with pytest.raises(devbroker.DevBrokerError, match="formatted for ports"):
        broker.start(keep_data=True)


def test_fetch_once_fills_the_first_time_only_and_redoes_an_interrupted_fetch(
    tmp_path: Path,
) -> None:
    from stream_validator.devbroker.jars import fetch_once

    home = tmp_path / "cache"
    target = home / "libs"
    calls: list[str] = []

    def broken() -> str:
        calls.append("broken")
        raise devbroker.DevBrokerError("Maven failed")

    def fill() -> str:
        calls.append("fill")
        target.mkdir()
        return "a.jar"

    with pytest.raises(devbroker.DevBrokerError):
        fetch_once(home, target, broken)
    assert not (home / MARKER_NAME).exists()
    assert fetch_once(home, target, fill) == target
    assert fetch_once(home, target, fill) == target
    assert calls == ["broken", "fill"]
    assert (home / MARKER_NAME).read_text() == "a.jar\n"
