"""Which settings are secrets, and removing their values from any text or log entry.

A secret is a librdkafka/config key that names a credential: every ``*password*``,
``*secret*`` and ``*token*`` key, SASL credentials (JAAS config, OAUTHBEARER config and
extensions), private keys and PEM material (``ssl.key.pem``, ``ssl.certificate.pem``,
``ssl.keystore.password``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_SECRET_KEY = re.compile(
    r"password|secret|token|credential|\.key\b|\.pem\b|sasl\.jaas"
    r"|sasl\.oauthbearer\.(config|extensions)",
    re.I,
)


def is_secret_key(key: str) -> bool:
    """True for librdkafka/config keys whose values must never be logged."""
    return bool(_SECRET_KEY.search(key))


def redacted(values: Mapping[str, object]) -> dict[str, object]:
    """A copy of librdkafka settings with secret values replaced by '***'."""
    return {k: ("***" if is_secret_key(k) else v) for k, v in values.items()}


def scrub(text: str, secrets: list[str]) -> str:
    """Replace every secret value in a text (e.g. a librdkafka error) by '***'."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text
