"""What the hostile-input property tests share: settings, junk values, document corruption.

``SV_FUZZ_EXAMPLES`` sets the examples of every such test (each has its own default, sized
for CI; run more by hand).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from stream_validator.dlq.envelope_reader import UnreplayableReason

#: Why a DLQ record the service cut to the message limit cannot be replayed.
TRUNCATED = frozenset(
    {
        UnreplayableReason.PAYLOAD_TRUNCATED,
        UnreplayableReason.KEY_TRUNCATED,
        UnreplayableReason.HEADERS_TRUNCATED,
    }
)


def fuzz_settings(default_examples: int) -> settings:
    """Hypothesis settings of a hostile-input test (no deadline: a shared machine)."""
    return settings(
        max_examples=int(os.environ.get("SV_FUZZ_EXAMPLES", str(default_examples))),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


#: Scalars of any JSON/YAML type, huge ints, NaN and infinities among the floats.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=12),
)

#: The same, as JSON can hold them (no NaN, no infinity).
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)


def junk(*extra: Any) -> st.SearchStrategy[Any]:
    """Any small document: scalars (and ``extra`` values), lists and mappings of them."""
    leaves = scalars | st.sampled_from(extra) if extra else scalars
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    )


def headers(names: Sequence[str], *, max_size: int) -> st.SearchStrategy[Any]:
    """Kafka headers: names the code reads (``names``) or any text, each with no value, any
    bytes or a number-like value."""
    return st.lists(
        st.tuples(
            st.sampled_from(list(names)) | st.text(max_size=10),
            st.none()
            | st.binary(max_size=30)
            | st.sampled_from([b"1", b"7", b"-1", b"999", b"x", b"headers"]),
        ),
        max_size=max_size,
    )


def corrupt(document: Any, edits: list[tuple[int, Any]], *, new_key_every: int) -> Any:
    """``document`` (changed in place) with a value replaced by junk at each edit; the place
    is picked by ``index % places``. When ``index % new_key_every == 0`` a mapping gets a new
    key instead (a typo beside the real key)."""
    for pick, value in edits:
        places: list[tuple[Any, Any]] = []
        stack = [document]
        while stack:
            node = stack.pop()
            for key in list(node) if isinstance(node, dict) else range(len(node)):
                places.append((node, key))
                if isinstance(node[key], dict | list):
                    stack.append(node[key])
        if not places:
            break
        node, key = places[pick % len(places)]
        if isinstance(node, dict) and pick % new_key_every == 0:
            node[f"{key}_typo"] = value
        else:
            node[key] = value
    return document
