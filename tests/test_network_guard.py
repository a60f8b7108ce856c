"""The suite's own guard: only loopback connections are allowed in tests."""

from __future__ import annotations

import socket
import threading

import pytest

from hermes_ctx_plugins import testing
from hermes_ctx_plugins.testing import network


def test_guard_is_installed() -> None:
    assert socket.socket.connect is network._guarded_connect
    assert socket.socket.connect_ex is network._guarded_connect_ex
    assert socket.getaddrinfo is network._guarded_getaddrinfo


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "localhost"])
def test_loopback_is_allowed(host: str) -> None:
    assert testing.is_loopback(host)


@pytest.mark.parametrize("host", ["10.0.0.1", "192.168.1.1", "8.8.8.8", "2001:db8::1", "example.com"])
def test_everything_else_is_refused_before_any_packet(host: str) -> None:
    assert not testing.is_loopback(host)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        with pytest.raises(testing.NetworkBlocked):
            testing.check_address(sock, (host, 443))
    finally:
        sock.close()
    with pytest.raises(testing.NetworkBlocked):
        socket.getaddrinfo(host, 443)


def test_a_real_loopback_connection_works() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    accepted = threading.Thread(target=lambda: server.accept()[0].close())
    accepted.start()
    client = socket.create_connection(server.getsockname(), timeout=5)
    client.close()
    accepted.join(5)
    server.close()
