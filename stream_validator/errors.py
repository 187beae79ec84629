"""Exceptions raised by stream_validator.

Every exception the package raises on purpose derives from one root::

    StreamValidatorError
    ├── ContractError (also ValueError)      a malformed SchemaContract / FieldSpec
    │   ├── RuleError                        a record rule that does not parse or fit
    │   │   └── RuleListError                every problem of a contract's rules
    │   ├── StateSpecError                   every problem of a contract's state section
    │   └── ContractFileError                a contract file that cannot be loaded
    ├── DecodeError (also ValueError)        bytes that are not one JSON value
    ├── RegistryUnavailableError             the Schema Registry cannot answer (the batch waits)
    ├── ConfigError (also ValueError)        invalid service configuration
    ├── ScenarioSpecError (also ValueError)  a bad simulator --scenario spec
    ├── SimulateError                        the simulator cannot produce
    ├── DevBrokerError (also RuntimeError)   the local development broker (and registry)
    ├── SchemaConversionError (also ValueError)
    │                                        a registered schema that cannot be a contract
    ├── FatalTransactionError                the producer can no longer run transactions
    ├── ProducerLostError                    the transactional producer must be replaced
    ├── TransactionCallError                 a transactional call failed, the producer kept
    ├── CallTimeoutError (also TimeoutError) a librdkafka call outlived its deadline
    ├── TopicAdminError                      a topic cannot be checked or created
    ├── KafkaClientError                     a Kafka client call failed (carries KafkaErrorInfo)
    ├── ReadStalledError                     a topic range stopped arriving
    ├── ReplaySetupError                     replay cannot start (a topic is missing)
    ├── ReplayKafkaError                     a Kafka-side problem mid-replay
    └── UnknownRouteError (also LookupError) a breaker resume for no route with a breaker

Outside the tree: two internal ValueErrors turned into
ConfigError / ContractFileError by their callers:
``YamlFileError`` (an unreadable YAML text, or one that does not decode into its typed form)
and ``PatternError`` (a source_pattern outside the portable syntax); and the verifier's
internal signals, each caught inside the verifier (``UnsupportedContract``,
``UnplannableContract``, ``RulesTooDeep``, ``RuleDeclined``, ``expr_eval._Skip``); and
``registry.wire.WireFormatError`` (a value without a schema id) and
``registry.protoc.ProtoCompileError`` (a registered ``.proto`` protoc refuses), which the
registry decoder turns into an ``undecodable`` verdict and ``contract from-registry`` into
exit 1; and ``registry.avroplan.UnsupportedSchema`` (an Avro writer schema the native core
does not read), caught where raised: fastavro reads that schema (a test holds this list to
the code). The exit codes
of each command are the IntEnums at the end.

Bad *records* never raise: they become violations in a report. Exceptions are for
bad setup (contracts, config) and for callers that decode bytes directly.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass


def problem_listing(problems: Sequence[str]) -> str:
    """The problems of one file: a single one as is, several counted and one per line."""
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems:\n" + "\n".join(f"  {problem}" for problem in problems)


class StreamValidatorError(Exception):
    """Root of every exception stream_validator raises deliberately."""


class ContractError(StreamValidatorError, ValueError):
    """A contract is malformed; raised at setup so it never silently passes records."""


class RuleError(ContractError):
    """A rule that cannot be parsed or does not fit the contract; names the column."""

    def __init__(self, message: str, column: int | None = None) -> None:
        where = f" at column {column}" if column is not None else ""
        super().__init__(f"{message}{where}")
        self.detail = message
        self.column = column


class RuleListError(RuleError):
    """Every problem of a ``rules`` list; ``problems`` is for a loader's own list."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class StateSpecError(ContractError):
    """Every problem of a ``state`` section; ``problems`` is for a loader's own list."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class ContractFileError(ContractError):
    """A contract file cannot be read or does not describe a valid contract; ``problems``
    lists each problem (the message lists them too, one per line)."""

    def __init__(self, path: str, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.detail = message
        self.problems = list(problems) or [message]


class DecodeError(StreamValidatorError, ValueError):
    """Bytes that cannot be decoded as a single JSON value."""


class RegistryUnavailableError(StreamValidatorError):
    """The Schema Registry cannot answer (down, slow, a 5xx, refused credentials): the records
    are not judged, their batch is retried; never a reason to quarantine a record."""

    #: The route whose values were being decoded (set by the service loop).
    route: str | None = None


class ConfigError(StreamValidatorError, ValueError):
    """Service configuration is invalid; the message names the offending key."""


class DevBrokerError(StreamValidatorError, RuntimeError):
    """The development broker cannot be fetched, started or stopped; the message says why."""


class SchemaConversionError(StreamValidatorError, ValueError):
    """A registered schema that cannot become a contract (not a record/object, no field that
    a contract can express, or a schema type the converter does not read)."""


class PatternError(ValueError):
    """A source_pattern outside the syntax both regex engines read alike."""


class YamlFileError(ValueError):
    """A YAML text that cannot be read; ``problems`` never contain source text."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class ScenarioSpecError(StreamValidatorError, ValueError):
    """A scenario spec that does not follow the grammar; the message says what is wrong."""


class SimulateError(StreamValidatorError):
    """The broker cannot be reached, or the topic is missing or cannot be created."""


class FatalTransactionError(StreamValidatorError):
    """The producer can no longer run transactions (fenced, or a fatal broker error)."""


class ProducerLostError(StreamValidatorError):
    """The producer must be replaced: a call outlived its deadline, or a fatal error that is
    not fencing left it unusable."""


class TransactionCallError(StreamValidatorError):
    """A transactional call failed without losing the producer (a retriable error outlasted the
    retries, or an abortable one). The committers abort and retry; a replay ends with exit
    code 3 on it."""


class CallTimeoutError(StreamValidatorError, TimeoutError):
    """A librdkafka call did not return within the deadline the service enforces
    (``kafka.deadline``); the client object must be abandoned (the transaction helper turns
    it into ``ProducerLostError``)."""


@dataclass(frozen=True, slots=True)
class KafkaErrorInfo:
    """A Kafka client error as a plain value (the adapter converts librdkafka's at its edge).

    ``code`` is librdkafka's error name (``MSG_SIZE_TOO_LARGE``, ``_ALL_BROKERS_DOWN``, ...);
    ``abortable`` means the open transaction must be aborted (``txn_requires_abort``).
    """

    code: str
    reason: str
    fatal: bool = False
    retriable: bool = False
    abortable: bool = False

    def __str__(self) -> str:
        return f"{self.code}: {self.reason}"


class KafkaClientError(StreamValidatorError):
    """A Kafka client call failed; ``info`` says how (never a confluent_kafka type)."""

    def __init__(self, info: KafkaErrorInfo, context: str = "") -> None:
        super().__init__(f"{context}: {info}" if context else str(info))
        self.info = info


class ReadStalledError(StreamValidatorError):
    """The broker delivered nothing for too long while records were still due."""


class ReplaySetupError(StreamValidatorError):
    """The replay cannot start: a topic is missing (exit code 2)."""


class ReplayKafkaError(StreamValidatorError):
    """A Kafka-side problem found mid-run, e.g. a source topic that is gone (exit code 3)."""


class UnknownRouteError(StreamValidatorError, LookupError):
    """A breaker resume names no route, or a route without a ``circuit_breaker``."""


class TopicAdminError(StreamValidatorError):
    """The broker cannot be reached, or a topic cannot be created; the message says which."""


# --- exit codes: one enum per command family -------------------------------------------
# The comment beside each member is its meaning in the docs' exit-code tables (generated
# from here by docs/_hooks/tables.py); a comment-only line below a member continues it.


class CheckExit(enum.IntEnum):
    """``validate``, ``check-contract``, ``check-config``, ``create-topics`` (and the CLI's own
    usage errors)."""

    OK = 0  # every record and contract valid; the config checks out; the topics exist
    INVALID = 1  # a record or a contract failed (`validate`: a batch is not valid);
    # `create-topics`: the broker cannot be reached or a topic cannot be created
    USAGE = 2  # bad arguments, an unreadable file, a malformed contract or config;
    # `check-config --connect`: the broker does not answer or a topic is missing


class ServiceExit(enum.IntEnum):
    """``run``: the service process."""

    OK = 0  # stopped on request (SIGTERM/SIGINT), every delivered batch committed
    FATAL = 1  # a fatal Kafka error: fenced by another instance, or more than 5 producer
    # replacements without a commit, or 4 abandoned producers still blocked
    CONFIG = 2  # the configuration is invalid, or an endpoint cannot start
    HALTED = 3  # halted: `service.halt_after_failed_batches` failures in a row, or a DLQ
    # entry the DLQ topic refuses for good
    DEADLINE = 4  # did not stop within `service.shutdown_timeout_s`; the batches in flight
    # are not committed (they are read again after a restart)


class ReplayExit(enum.IntEnum):
    """``replay``."""

    OK = 0  # every selected record was replayed (in a dry run: would pass)
    NOT_ALL = 1  # some selected record was not replayed: still failing, exhausted, held back
    # or unreplayable
    USAGE = 2  # bad arguments, config or contract, an unknown route, a missing DLQ topic or
    # a missing clean or named target topic
    KAFKA = 3  # a Kafka error: broker unreachable, a delivery or commit failed, fenced by
    # another replay of the same target, a source topic missing when a record is sent to it
    INTERRUPTED = 130  # SIGINT/SIGTERM, after the current chunk; committed chunks stay
    # committed, so run again to continue


class SimulateExit(enum.IntEnum):
    """``simulate``."""

    OK = 0  # every record was produced
    FAILED = 1  # some deliveries failed (each is printed)
    USAGE = 2  # bad arguments, a bad --scenario spec, or the broker or topic cannot be used


class ResumeExit(enum.IntEnum):
    """``resume``."""

    OK = 0  # the breaker is closed (it may have been already)
    UNKNOWN_ROUTE = 1  # no such route, or the route has no circuit_breaker
    USAGE = 2  # bad arguments or config: a malformed --url, a bad token file, or the
    # service's 401/403 (no or a wrong token, resume disabled)
    UNREACHABLE = 3  # no answer from the service's health port, or an unexpected one
    # (e.g. 429: two resumes already waiting)
    PENDING = 4  # queued, but the service's loop did not act on it within 5 s


class ShadowReportExit(enum.IntEnum):
    """``shadow-report``."""

    OK = 0  # the shadow contracts' differences were printed
    NO_SHADOW = 1  # the service answered, but no route of it has a shadow_contract
    USAGE = 2  # bad arguments or config, or a malformed --url
    UNREACHABLE = 3  # no answer from the service's health port, or not a /status answer


class InferExit(enum.IntEnum):
    """``infer``."""

    OK = 0  # a draft was written
    NO_DRAFT = 1  # nothing to draft from: no record in the sample, or no field could be typed
    USAGE = 2  # bad arguments, an unreadable file, a bad config or a missing topic
    KAFKA = 3  # the broker failed or went quiet while the sample was read


class FromRegistryExit(enum.IntEnum):
    """``contract from-registry``."""

    OK = 0  # a contract was written
    NOT_CONVERTIBLE = 1  # the schema cannot become a contract: not an Avro record, a JSON
    # Schema object or a Protobuf message (a .proto protoc refuses), or no field a contract
    # can express
    USAGE = 2  # bad arguments, an unwritable output file, or no such subject or version
    UNREACHABLE = 3  # the registry cannot be reached, or answered with an error


class DiffExit(enum.IntEnum):
    """``diff-contract``; when several apply, USAGE wins over VERSION_NOT_BUMPED, and that
    over TIGHTENING."""

    OK = 0  # no tightening change
    TIGHTENING = 1  # at least one change would newly quarantine records that passed OLD
    USAGE = 2  # bad arguments, a contract file that does not load, or an unreadable sample
    VERSION_NOT_BUMPED = 3  # the contract changed but its version did not
