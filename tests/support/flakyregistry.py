"""confluent-kafka's in-memory registry that can be made to fail like a registry that is down
(a refused connection) or erring (HTTP 500), for unit tests of the outage path."""

from __future__ import annotations

from typing import Any

import httpx2
from confluent_kafka.schema_registry import SchemaRegistryError
from confluent_kafka.schema_registry._sync.mock_schema_registry_client import (
    MockSchemaRegistryClient,
)


class FlakyRegistry(MockSchemaRegistryClient):
    """``fail`` lookups from now on fail (``mode``: ``down`` or ``500``); each failure is
    counted in ``failures`` and calls ``on_failure`` (e.g. to stop the service)."""

    def __init__(self) -> None:
        super().__init__({"url": "mock://flaky"})
        self.fail = 0
        self.mode = "down"
        self.failures = 0
        self.on_failure: Any = None

    def _maybe_fail(self) -> None:
        if self.fail <= 0:
            return
        self.fail -= 1
        self.failures += 1
        if self.on_failure is not None:
            self.on_failure()
        if self.mode == "500":
            raise SchemaRegistryError(500, 50001, "Error in the backend data store")
        raise httpx2.ConnectError("[Errno 111] Connection refused")

    def get_schema(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe_fail()
        return super().get_schema(*args, **kwargs)

    def get_schema_by_guid(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe_fail()
        return super().get_schema_by_guid(*args, **kwargs)

    def lookup_schema(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe_fail()
        return super().lookup_schema(*args, **kwargs)
