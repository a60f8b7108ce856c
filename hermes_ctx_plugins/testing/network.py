"""The network guard: inside :func:`loopback_only`, nothing but loopback can be reached."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

from ..errors import HermesCtxError

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


class NetworkBlocked(HermesCtxError, RuntimeError):
    """A test tried to reach an address outside the loopback range."""


def is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def check_address(sock: socket.socket, address: Any) -> None:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) else address
    if not is_loopback(host):
        raise NetworkBlocked(f"test tried to connect to {address!r}; only loopback is allowed")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    check_address(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    check_address(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    # Refuse to resolve outside names too: a DNS lookup is already traffic leaving the machine.
    if host is not None and not is_loopback(host):
        raise NetworkBlocked(f"test tried to resolve {host!r}; only loopback is allowed")
    return _real_getaddrinfo(host, *args, **kwargs)


@contextlib.contextmanager
def loopback_only() -> Iterator[None]:
    """Inside the block, connecting to or resolving anything but loopback raises NetworkBlocked."""
    saved = (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _guarded_getaddrinfo
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = saved  # type: ignore[method-assign]
