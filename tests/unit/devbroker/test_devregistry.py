"""Pure pieces of the development Schema Registry: no Maven, no Java, no registry."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from stream_validator.cli import devregistry
from stream_validator.devbroker import process
from stream_validator.devbroker.jars import MARKER_NAME, render_pom
from stream_validator.devbroker.registry import LocalSchemaRegistry
from stream_validator.devbroker.registryapp import (
    APICURIO_VERSION,
    fetch_registry_app,
    registry_artifact,
    registry_home,
)
from stream_validator.devbroker.registrysettings import (
    ccompat_url,
    parse_registry_ports,
    registry_command,
    registry_jvm_opts,
    registry_settings,
    render_registry_properties,
)
from stream_validator.errors import DevBrokerError

_POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def test_settings_bind_both_listeners_to_loopback() -> None:
    """The API and the management interface (health, metrics) listen on 127.0.0.1 only."""
    settings = registry_settings(8081, 9001)
    assert settings["quarkus.http.host"] == "127.0.0.1"
    assert settings["quarkus.management.host"] == "127.0.0.1"
    assert (settings["quarkus.http.port"], settings["quarkus.management.port"]) == ("8081", "9001")


def test_settings_keep_schemas_in_memory_unless_a_data_dir_is_given(tmp_path: Path) -> None:
    """Without a data dir Apicurio's in-memory H2 stays; with one, an H2 file under it."""
    assert "apicurio.datasource.url" not in registry_settings(1, 2)
    url = registry_settings(1, 2, data_dir=tmp_path)["apicurio.datasource.url"]
    assert url.startswith(f"jdbc:h2:file:{tmp_path}/")


def test_properties_escape_backslashes() -> None:
    """Backslashes in values are escaped for the .properties reader."""
    assert "a=x\\\\y" in render_registry_properties({"a": "x\\y"}).splitlines()


def test_command_caps_the_heap_and_names_the_config_file(tmp_path: Path) -> None:
    """The JVM gets the heap cap, the serial GC and the state dir's properties file."""
    props = tmp_path / "registry.properties"
    cmd = registry_command(
        "java", tmp_path / "quarkus-run.jar", props, jvm_opts=registry_jvm_opts("200m")
    )
    assert "-Xmx200m" in cmd and "-XX:+UseSerialGC" in cmd
    assert f"-Dquarkus.config.locations={props}" in cmd
    assert cmd[-2:] == ["-jar", str(tmp_path / "quarkus-run.jar")]


def test_url_is_the_confluent_compatible_api() -> None:
    """The printed URL is Apicurio 3's ccompat v7 API, the one SchemaRegistryClient takes."""
    assert ccompat_url(8081) == "http://127.0.0.1:8081/apis/ccompat/v7"


def test_parse_ports_rejects_garbage() -> None:
    """A ports file must hold exactly two numbers."""
    assert parse_registry_ports("1 2\n") == (1, 2)
    with pytest.raises(ValueError):
        parse_registry_ports("1")


def test_pom_names_the_distribution_tarball_alone() -> None:
    """The POM asks for the `all` tar.gz, excludes every transitive dependency, names no repo."""
    text = render_pom((registry_artifact(),), "dev-registry-app")
    dep = ET.fromstring(text).find("m:dependencies/m:dependency", _POM_NS)
    assert dep is not None
    assert dep.findtext("m:artifactId", namespaces=_POM_NS) == "apicurio-registry-app"
    assert dep.findtext("m:type", namespaces=_POM_NS) == "tar.gz"
    assert dep.findtext("m:classifier", namespaces=_POM_NS) == "all"
    exclusion = dep.find("m:exclusions/m:exclusion", _POM_NS)
    assert exclusion is not None and exclusion.findtext("m:groupId", namespaces=_POM_NS) == "*"
    assert "repositor" not in text and "http" not in text.replace(_POM_NS["m"], "")


def test_fetch_skips_maven_once_marker_exists(tmp_path: Path) -> None:
    """With the marker present the app folder is returned without running Maven."""
    home = registry_home(APICURIO_VERSION, tmp_path)
    (home / "app").mkdir(parents=True)
    (home / MARKER_NAME).write_text("x\n")
    assert fetch_registry_app(root=tmp_path, mvn="/nonexistent/mvn") == home / "app"


def test_fetch_without_maven_says_so(tmp_path: Path) -> None:
    """A missing mvn binary gives an error naming Maven, not a bare FileNotFoundError."""
    with pytest.raises(DevBrokerError, match="Maven"):
        fetch_registry_app(root=tmp_path, mvn="/nonexistent/mvn")


def _fake_jdk(root: Path, name: str, version: str) -> str:
    home = root / name
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    (home / "release").write_text(f'JAVA_VERSION="{version}"\n')
    return str(java)


def test_find_java_skips_an_old_java_home_for_a_new_enough_jdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JAVA_HOME on 17 and PATH without java: the Java 25 JDK under the JVM dir is chosen."""
    old = _fake_jdk(tmp_path, "jdk17", "17.0.15")
    new = _fake_jdk(tmp_path / "jvm", "temurin-25", "25.0.3")
    monkeypatch.setenv("JAVA_HOME", str(Path(old).parent.parent))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(process, "_JVM_DIR", tmp_path / "jvm")
    assert process.find_java(21) == new
    assert process.find_java() == old  # the broker's plain lookup is unchanged


def test_find_java_without_a_new_enough_jdk_names_what_it_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only Java 17 around: a clear error saying Java 21 is needed and what was found."""
    old = _fake_jdk(tmp_path, "jdk17", "17.0.15")
    monkeypatch.setenv("JAVA_HOME", str(Path(old).parent.parent))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(process, "_JVM_DIR", tmp_path / "nojvm")
    with pytest.raises(DevBrokerError, match=r"Java 21 or newer.*jdk17.*\(17\)"):
        process.find_java(21)


def test_stale_pid_file_of_another_process_is_not_running(tmp_path: Path) -> None:
    """A pid file naming a live process that is not this registry (here: us) is ignored."""
    (tmp_path / "registry.pid").write_text(f"{os.getpid()}\n")
    registry = LocalSchemaRegistry(tmp_path)
    assert registry.pid is None and not registry.is_running()
    assert registry.stop() is False and registry.kill() is False


def test_status_without_registry_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dev-registry status` on an empty state dir says not running and exits 1."""
    assert devregistry.main(["status", "--state-dir", str(tmp_path)]) == 1
    assert "not running" in capsys.readouterr().out


def test_stop_without_registry_is_a_no_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dev-registry stop` with nothing running exits 0 and says so on stderr."""
    assert devregistry.main(["stop", "--state-dir", str(tmp_path)]) == 0
    assert "no registry running" in capsys.readouterr().err


def test_url_before_any_start_is_an_error(tmp_path: Path) -> None:
    """Asking for the URL of a state dir never started raises DevBrokerError."""
    with pytest.raises(DevBrokerError, match="no registry was started"):
        _ = LocalSchemaRegistry(tmp_path).url
