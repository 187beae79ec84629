"""Apache Kafka broker jars from Maven Central, fetched once into a cache outside the repository.

The jars come from a POM generated here and ``mvn dependency:copy-dependencies``; Maven's
defaults reach Maven Central, so no repository URL appears anywhere. No Kafka POM carries an
SLF4J binding, so the POM adds the log4j2 binding matching the slf4j line Kafka depends on
(Kafka 4.1.1 uses slf4j 1.7.36, hence ``log4j-slf4j-impl``, not ``log4j-slf4j2-impl``);
without it the broker runs but logs nothing.

Cache layout (``SV_KAFKA_CACHE_DIR`` replaces the root ``~/.cache/stream_validator``)::

    <root>/kafka-<version>/pom.xml     the generated POM, kept for reference
    <root>/kafka-<version>/libs/       the jars (the broker's classpath)
    <root>/kafka-<version>/fetched.ok  written last: its presence means libs/ is complete
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from stream_validator.errors import DevBrokerError

KAFKA_VERSION = "4.1.1"
SCALA_VERSION = "2.13"
# Matches the log4j-core/log4j-api that kafka-server 4.1.1 already depends on.
LOG4J_VERSION = "2.24.3"
DEPENDENCY_PLUGIN_VERSION = "3.8.1"
CACHE_ENV = "SV_KAFKA_CACHE_DIR"
MARKER_NAME = "fetched.ok"
_MVN_TIMEOUT_S = 900.0
_EXCLUDE_ALL = (
    "      <exclusions>\n"
    "        <exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion>\n"
    "      </exclusions>\n"
)


@dataclass(frozen=True, slots=True)
class MavenArtifact:
    """One Maven dependency coordinate."""

    group_id: str
    artifact_id: str
    version: str
    type: str = "jar"
    classifier: str = ""
    #: False: the artifact alone (a wildcard exclusion; Maven then reads no dependency POM).
    transitive: bool = True


def broker_artifacts(kafka_version: str = KAFKA_VERSION) -> tuple[MavenArtifact, ...]:
    """The dependencies whose runtime closure is a runnable broker plus its storage tool."""
    return (
        MavenArtifact("org.apache.kafka", f"kafka_{SCALA_VERSION}", kafka_version),
        MavenArtifact("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
        MavenArtifact("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
    )


def render_pom(artifacts: tuple[MavenArtifact, ...], name: str = "dev-kafka-jars") -> str:
    """A minimal POM listing ``artifacts``, with maven-dependency-plugin pinned."""
    deps = "\n".join(
        "    <dependency>\n"
        f"      <groupId>{a.group_id}</groupId>\n"
        f"      <artifactId>{a.artifact_id}</artifactId>\n"
        f"      <version>{a.version}</version>\n"
        + ("" if a.type == "jar" else f"      <type>{a.type}</type>\n")
        + (f"      <classifier>{a.classifier}</classifier>\n" if a.classifier else "")
        + ("" if a.transitive else _EXCLUDE_ALL)
        + "    </dependency>"
        for a in artifacts
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.stream-validator</groupId>
  <artifactId>{name}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>{DEPENDENCY_PLUGIN_VERSION}</version>
      </plugin>
    </plugins>
  </build>
</project>
"""


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """Where jars are cached: ``$SV_KAFKA_CACHE_DIR``, else ``$XDG_CACHE_HOME`` or ``~/.cache``."""
    env = os.environ if env is None else env
    override = env.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    xdg = env.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "stream_validator"


def kafka_home(kafka_version: str = KAFKA_VERSION, root: Path | None = None) -> Path:
    """The cache folder of one Kafka version."""
    return (cache_root() if root is None else root) / f"kafka-{kafka_version}"


def fetch_jars(
    kafka_version: str = KAFKA_VERSION,
    *,
    root: Path | None = None,
    mvn: str = "mvn",
    say: Callable[[str], None] = lambda _msg: None,
) -> Path:
    """Return the folder holding the broker's jars, running Maven only the first time."""
    home = kafka_home(kafka_version, root)
    libs = home / "libs"

    def fill() -> str:
        say(f"fetching Kafka {kafka_version} jars from Maven Central into {libs} (first run only)")
        pom = home / "pom.xml"
        pom.write_text(render_pom(broker_artifacts(kafka_version)), encoding="utf-8")
        staging = home / "libs.partial"
        shutil.rmtree(staging, ignore_errors=True)
        run_maven_copy(mvn, pom, staging)
        jars = sorted(p.name for p in staging.glob("*.jar"))
        if f"kafka_{SCALA_VERSION}-{kafka_version}.jar" not in jars:
            raise DevBrokerError(f"Maven finished but {staging} lacks the Kafka jar: {jars}")
        shutil.rmtree(libs, ignore_errors=True)
        staging.rename(libs)
        return "\n".join(jars)

    return fetch_once(home, libs, fill)


def fetch_once(home: Path, target: Path, fill: Callable[[], str]) -> Path:
    """``target`` (under ``home``), made by ``fill`` only the first time: under a lock shared
    by every process (parallel test runs share one cache), and marked done by a file written
    last (holding what ``fill`` returns), so an interrupted fetch is redone, never half used."""
    marker = home / MARKER_NAME
    if marker.is_file():
        return target
    home.mkdir(parents=True, exist_ok=True)
    with exclusive(home / ".lock"):
        if not marker.is_file():  # else another process fetched while we waited
            marker.write_text(fill() + "\n", encoding="utf-8")
    return target


def run_maven_copy(mvn: str, pom: Path, output_dir: Path, *options: str) -> None:
    """``mvn dependency:copy-dependencies`` of ``pom`` into ``output_dir`` (Maven's own
    settings choose the repository); a DevBrokerError with Maven's last lines on failure."""
    cmd = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={output_dir}",
        *options,
    ]
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=_MVN_TIMEOUT_S, check=False
        )
    except FileNotFoundError as exc:
        raise DevBrokerError(
            f"Maven ({mvn!r}) is not on PATH; it is needed once to fetch {pom.parent.name}"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise DevBrokerError(f"Maven did not finish within {_MVN_TIMEOUT_S:.0f}s") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        raise DevBrokerError(f"Maven failed (exit {done.returncode}): {' '.join(cmd)}\n{tail}")


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    """Serialise fetches across processes (parallel test runs share one cache)."""
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
