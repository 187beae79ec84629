"""``ConfluentAdmin.groups`` over a stubbed AdminClient: the listing is complete or an error."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import ConsumerGroupListing, ListConsumerGroupsResult

from stream_validator.errors import KafkaClientError
from stream_validator.kafka.confluent import ConfluentAdmin


class _Listing:
    """An AdminClient whose list_consumer_groups answers with a fixed result."""

    def __init__(self, result: ListConsumerGroupsResult) -> None:
        self._result = result

    def list_consumer_groups(self, **_: Any) -> Future[ListConsumerGroupsResult]:
        future: Future[ListConsumerGroupsResult] = Future()
        future.set_result(self._result)
        return future


def _admin(valid: list[str], errors: list[Exception]) -> ConfluentAdmin:
    listings = [ConsumerGroupListing(name, True) for name in valid]
    return ConfluentAdmin(_Listing(ListConsumerGroupsResult(listings, errors)))  # type: ignore[arg-type]


def test_groups_lists_the_ids_with_the_prefix_sorted() -> None:
    """Only ids starting with the prefix, in order."""
    admin = _admin(["r.b", "other", "r.a"], [])
    assert admin.groups("r.", 1.0) == ["r.a", "r.b"]


def test_a_partial_listing_is_an_error() -> None:
    """A broker that did not answer hides groups: that raises, never a shorter list."""
    failed = KafkaException(KafkaError(KafkaError._TRANSPORT, "broker 2 down"))
    with pytest.raises(KafkaClientError, match="list_consumer_groups"):
        _admin(["r.a"], [failed]).groups("r.", 1.0)
