"""Fixtures the generation tests share: `serve` starts scripted servers and stops them after."""

import pytest

from tests.generation.scripted_server import ScriptedServer


@pytest.fixture
def serve():
    """serve(respond) starts a scripted server, respond(body, headers) -> (status, headers,
    bytes); each is stopped after the test."""
    started = []

    def start(respond):  # respond(body, headers) -> (status, headers, bytes)
        started.append(ScriptedServer(lambda body, headers: (*respond(body, headers), 0)))
        return started[-1]

    yield start
    for s in started:
        s.close()
