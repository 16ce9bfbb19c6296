"""Suite-wide rules: agentotel's internal errors are loud, and nothing reaches the network."""

from __future__ import annotations

import ipaddress
import os
import socket

import pytest

# `s3` and `s3_server`: a real S3 API (moto) on 127.0.0.1 for the object-storage tests.
pytest_plugins = ["tests.s3_server"]

# A bug inside agentotel must fail the test, not vanish into a log line (see agentotel/_internal.py).
os.environ["AGENTOTEL_RAISE_INTERNAL_ERRORS"] = "1"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check_address(address) -> None:
    if isinstance(address, tuple) and address:
        host = address[0]
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            if host != "localhost":
                raise OSError(f"tests never reach the network: connect to {host!r} refused") from None
            return
        if not ip.is_loopback:
            raise OSError(f"tests never reach the network: connect to {host} refused")


def _guarded_connect(self, address):
    _check_address(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    _check_address(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def _no_network():
    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    yield
    socket.socket.connect = _real_connect
    socket.socket.connect_ex = _real_connect_ex
