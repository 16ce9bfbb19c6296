"""Suite-wide rules: agentotel's internal errors are loud, and nothing reaches the network."""

from __future__ import annotations

import gc
import ipaddress
import os
import socket
import sys

import pytest

# `s3` and `s3_server`: a real S3 API (moto) on 127.0.0.1 for the object-storage tests.
pytest_plugins = ["tests.s3_server"]

# With PYTHONDONTWRITEBYTECODE set (as on this machine, and maybe in CI) every process the suite starts - the two
# workers and the CLI, recorder and collector subprocesses the tests run - would compile agentotel's, the collector's
# and the tests' modules from source again, assertion rewriting included. The suite writes their bytecode (to the
# __pycache__ folders git ignores); subprocesses inherit that through the environment, and xdist's workers are
# started after this file is read. (Not PYTHONPYCACHEPREFIX: under it the standard library's and the installed
# packages' bytecode is not found either, and each would be compiled once more.)
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

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


def pytest_collection_finish(session: pytest.Session) -> None:
    # Collection imports every test module and the SDKs they use (~600,000 objects a worker): each full collection
    # the garbage collector ran afterwards walked all of them again (9.5 s of 71 s CPU on 142 tests with the whole
    # suite collected). Frozen, they are left out of every later collection; they live as long as the worker
    # anyway. Fewer young collections (700 -> 10,000 allocations) mean fewer full ones: 5.5 s. Tests that need a
    # collection (an abandoned stream's finalisation) call gc.collect() themselves.
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
