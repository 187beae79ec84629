"""Apicurio Registry from Maven Central, fetched once into the same cache as the Kafka jars.

``io.apicurio:apicurio-registry-app`` is a Quarkus application; besides its plain jar (which
alone does not run) Maven Central holds its whole "fast-jar" distribution as the attached
``all`` tarball: ``quarkus-run.jar`` plus ``lib/``, ``app/`` and ``quarkus/``. A generated POM
names that tarball with every transitive dependency excluded (the tarball carries them),
``mvn dependency:copy-dependencies`` downloads it through Maven's own settings (no repository
URL anywhere) and it is unpacked here.

Cache layout (under ``jars.cache_root()``)::

    <root>/apicurio-registry-<version>/pom.xml     the generated POM, kept for reference
    <root>/apicurio-registry-<version>/app/        the unpacked distribution (quarkus-run.jar)
    <root>/apicurio-registry-<version>/fetched.ok  written last: app/ is complete
"""

from __future__ import annotations

import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

from stream_validator.devbroker.jars import (
    MavenArtifact,
    cache_root,
    fetch_once,
    render_pom,
    run_maven_copy,
)
from stream_validator.errors import DevBrokerError

APICURIO_VERSION = "3.3.3"
#: Apicurio Registry 3 is built for Java 21.
MIN_JAVA = 21
RUN_JAR = "quarkus-run.jar"


def registry_artifact(version: str = APICURIO_VERSION) -> MavenArtifact:
    """The attached tarball of the runnable Quarkus distribution."""
    return MavenArtifact(
        "io.apicurio", "apicurio-registry-app", version, "tar.gz", "all", transitive=False
    )


def registry_home(version: str = APICURIO_VERSION, root: Path | None = None) -> Path:
    """The cache folder of one Apicurio Registry version."""
    return (cache_root() if root is None else root) / f"apicurio-registry-{version}"


def fetch_registry_app(
    version: str = APICURIO_VERSION,
    *,
    root: Path | None = None,
    mvn: str = "mvn",
    say: Callable[[str], None] = lambda _msg: None,
) -> Path:
    """Return the folder holding ``quarkus-run.jar``, running Maven only the first time."""
    home = registry_home(version, root)
    app = home / "app"

    def fill() -> str:
        say(
            f"fetching Apicurio Registry {version} (~160 MB) from Maven Central into {app} "
            "(first run only)"
        )
        pom = home / "pom.xml"
        pom.write_text(
            render_pom((registry_artifact(version),), "dev-registry-app"), encoding="utf-8"
        )
        download = home / "download"
        shutil.rmtree(download, ignore_errors=True)
        run_maven_copy(mvn, pom, download)
        tarballs = sorted(download.glob("*.tar.gz"))
        if len(tarballs) != 1:
            raise DevBrokerError(f"Maven finished but {download} holds {tarballs}, not one tarball")
        staging = home / "app.partial"
        shutil.rmtree(staging, ignore_errors=True)
        _unpack(tarballs[0], staging)
        if not (staging / RUN_JAR).is_file():
            raise DevBrokerError(f"{tarballs[0].name} holds no {RUN_JAR}")
        shutil.rmtree(app, ignore_errors=True)
        staging.rename(app)
        shutil.rmtree(download, ignore_errors=True)
        return tarballs[0].name

    return fetch_once(home, app, fill)


def _unpack(tarball: Path, target: Path) -> None:
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            # "data": no absolute paths, no links out of target, no device files.
            archive.extractall(target, filter="data")
    except (OSError, tarfile.TarError) as exc:
        raise DevBrokerError(f"cannot unpack {tarball}: {exc}") from exc
