"""Fixtures of the fault-injection suite: a scripted loopback server, a host that keeps the
exceptions its tools raise, and every log record. The checks (no key anywhere, a clean error, in
time) are in ``tests/support``."""

from __future__ import annotations

import logging

import pytest

from tests.support import TracingHost
from tests.support.fault_server import FaultServer


@pytest.fixture
def server():
    """A started FaultServer, stopped after the test."""
    fault = FaultServer().start()
    yield fault
    fault.close()


@pytest.fixture
def debug_logs(caplog):
    """Capture every log record (urllib3 and requests included) at DEBUG level."""
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.fixture
def tools(host) -> TracingHost:
    """The web tools host, recording exceptions raised by tools."""
    return TracingHost(host)
