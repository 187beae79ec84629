"""Hostile HTTP clients for the health and metrics server tests."""

from __future__ import annotations

import socket


def half_sent(port: int) -> socket.socket:
    """A connection that sent part of a request and then nothing."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    conn.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    return conn
