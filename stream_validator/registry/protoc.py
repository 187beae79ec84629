""".proto source text compiled to descriptors by protoc, the compiler ``grpcio-tools`` ships.

A registry may hand a Protobuf schema back as ``.proto`` source text (Apicurio always does,
Confluent's registry does unless asked for ``format=serialized``) rather than the base64
``FileDescriptorProto`` confluent-kafka's Python serializer registers. Parsing ``.proto``
is protoc's job, not ours: the text and the files it imports are written to a private
temporary directory and ``python -m grpc_tools.protoc --include_imports
--descriptor_set_out`` compiles them, the well-known types (``google/protobuf/*.proto``)
coming from the copies bundled with grpcio-tools. protoc runs in a child process, so its
messages are read from its stderr and no input can take the service down with it.
"""

from __future__ import annotations

import base64
import binascii
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import DecodeError

#: The file name the compiled schema gets (its imports keep the names its references have).
MAIN_FILE = "registered.proto"
#: protoc's messages quoted in an error are cut here.
_MAX_MESSAGES = 400
WELL_KNOWN_PREFIX = "google/protobuf/"


class ProtoCompileError(ValueError):
    """A ``.proto`` text that protoc refuses; the message quotes protoc's own."""


def serialized_file(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    """The ``FileDescriptorProto`` a schema string holds in the base64 ``serialized`` form,
    or None when it is not that form (``.proto`` text has spaces and ``;``, never valid
    base64)."""
    if not text:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
        return descriptor_pb2.FileDescriptorProto.FromString(raw)
    except (binascii.Error, ValueError, DecodeError):
        return None


def well_known_dir() -> Path:
    """Where grpcio-tools keeps the ``google/protobuf/*.proto`` well-known types."""
    return Path(str(resources.files("grpc_tools") / "_proto"))


def compile_proto(
    text: str, imports: Mapping[str, str] | None = None, *, timeout_s: float = 60.0
) -> descriptor_pb2.FileDescriptorSet:
    """``text`` and the files it imports (``imports``: import name -> ``.proto`` text)
    compiled, dependencies first, ``MAIN_FILE`` last.

    Raises ProtoCompileError with protoc's messages; TimeoutError when protoc did not
    finish in ``timeout_s`` (the machine, not the schema: worth another try)."""
    with tempfile.TemporaryDirectory(prefix="sv-protoc-") as tmp:
        root = Path(tmp).resolve()
        src = root / "src"
        sources = {**dict(imports or {}), MAIN_FILE: text}
        for name, source in sources.items():
            path = (src / name).resolve()
            if not path.is_relative_to(src):
                raise ProtoCompileError(f"import name {name[:100]!r} leaves its directory")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source, encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "-I.",
            f"-I{well_known_dir()}",
            "--include_imports",
            "--descriptor_set_out=../out.pb",
            MAIN_FILE,
        ]
        try:
            done = subprocess.run(
                command, cwd=src, capture_output=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"protoc did not finish in {timeout_s:g} s") from None
        if done.returncode != 0:
            messages = done.stderr.decode("utf-8", "replace").strip().replace("\n", "; ")
            raise ProtoCompileError(
                "the registered .proto does not compile:"
                f" {messages[:_MAX_MESSAGES] or f'exit code {done.returncode}'}"
            )
        return descriptor_pb2.FileDescriptorSet.FromString((root / "out.pb").read_bytes())


def file_descriptor(files: descriptor_pb2.FileDescriptorSet) -> FileDescriptor:
    """The compiled main file, in a pool of its own holding it and its dependencies."""
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return pool.FindFileByName(MAIN_FILE)
