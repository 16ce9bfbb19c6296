"""The view's API refuses values it cannot use with a 400 that says why, never a 500 and a traceback."""

import json
import logging
import socket
import time
import urllib.error
import urllib.request
from html.parser import HTMLParser

import pytest

import agentotel
from agentotel.view import _server


@pytest.fixture(scope="module")
def view(demo_store):
    server = _server.ViewServer(demo_store, port=0).start()
    yield server
    server.stop()


def _get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize("query, phrase", [
    ("offset=1e30", "offset: '1e30' is not a whole number"),
    ("offset=nan", "offset: 'nan' is not a whole number"),
    ("offset=99999999999999999999", "is not a whole number from 0 to 9223372036854775807"),
    ("offset=-1", "offset: '-1' is not a whole number"),
    ("limit=inf", "limit: 'inf' is not a whole number from 1 to 500"),
    ("limit=0", "limit: '0' is not a whole number from 1 to 500"),
    ("limit=2.5", "limit: '2.5' is not a whole number"),
    ("min_cost=nan", "min_cost: 'nan' is not a number"),
    ("max_cost=-inf", "max_cost: '-inf' is not a number"),
])
def test_numbers_the_runs_page_cannot_use_are_400(view, caplog, query, phrase):
    with caplog.at_level(logging.ERROR, logger="agentotel.view._server"):
        status, body = _get(view.url + "api/runs?" + query)
    assert (status, phrase in body["error"]) == (400, True), body
    assert not caplog.records  # a refusal, not a failure of the view


def test_until_the_last_day_of_the_calendar_is_every_run(view):
    status, body = _get(view.url + "api/runs?until=9999-12-31")
    assert status == 200 and body["total"] == 2


HALVES = '''
import sys, agentotel
agentotel.instrument(sys.argv[1])

@agentotel.tool
def fetch(url: str) -> str:
    return "a page cut in an emoji: \\U0001F600"[:-1] + "\\ud83d"  # what JavaScript's slicing leaves

with agentotel.run("halves", run_id="run-halves") as run:
    fetch("https://example.com/\\udc00")
    run.output = "done \\ude00"
assert agentotel.flush()
'''


@pytest.fixture(scope="module")
def halves(tmp_path_factory):
    """A run whose tool result, argument and output hold half of a UTF-16 pair (stored as JSON escapes)."""
    from .conftest import record

    directory = tmp_path_factory.mktemp("halves") / "traces"
    record(directory, HALVES)
    return directory


def test_half_a_character_in_a_result_is_shown_as_a_replacement_not_a_500(halves):
    # Before, json.loads turned the escape back into a lone surrogate, which no UTF-8 encoder takes: the
    # run's page and the diff were a 500, and the report could not be written.
    from agentotel.view._page import report_html

    server = _server.ViewServer(halves, port=0).start()
    try:
        status, run = _get(server.url + "api/run?id=run-halves")
        assert status == 200, run
        (step,) = run["steps"]
        assert (step["input"], step["output"]) == ({"url": "https://example.com/\ufffd"}, "a page cut in an emoji: \ufffd")
        assert _get(server.url + "api/diff?a=run-halves&b=run-halves")[0] == 200
    finally:
        server.stop()
    html = report_html(agentotel.open(halves), "run-halves")
    assert "a page cut in an emoji: \ufffd" in html.encode("utf-8").decode("utf-8")


MARKERS = '''
import sys, agentotel
agentotel.instrument(sys.argv[1])

@agentotel.tool
def fetch(url: str) -> str:
    return "</title><img src=x onerror=alert(1)>"  # a web page the agent read

with agentotel.run("@@DATA@@ @@JS@@ @@TITLE@@", run_id="run-markers"):
    fetch("https://example.com/")
assert agentotel.flush()
'''


class _Elements(HTMLParser):
    """The start tags of a page, as a browser's tokenizer sees them (script contents are text)."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.title = ""
        self._in_title = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def test_a_run_named_like_the_pages_markers_is_only_a_title(tmp_path):
    # Before, the title went in first and the later markers were looked for in it: the run's data landed
    # in <title>, where the result's "</title>" ended it and its <img onerror> ran when the report opened.
    from agentotel.view._page import report_html

    from .conftest import record

    record(tmp_path / "traces", MARKERS)
    page = report_html(agentotel.open(tmp_path / "traces"), "run-markers")
    elements = _Elements(page)
    assert "img" not in elements.tags and elements.tags.count("script") == 2, elements.tags
    assert elements.title == "@@DATA@@ @@JS@@ @@TITLE@@ · run run-markers"
    data = page.split('<script type="application/json" id="agentotel-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["page"]["steps"][0]["output"] == "</title><img src=x onerror=alert(1)>"


def _closed(connection: socket.socket) -> bool:
    """Whether the view closed the connection without answering (a reset, when it closed before reading
    what the connection had sent: a connection closed to make room for another)."""
    try:
        return connection.recv(10) == b""
    except ConnectionResetError:
        return True


def test_connections_holding_half_a_request_are_closed_and_the_view_answers_again(demo_store, monkeypatch):
    # Before, uvicorn waited for their headers forever, and past 64 open connections answered 503 to all.
    monkeypatch.setattr(_server, "_HEADER_TIMEOUT_S", 0.5, raising=False)
    server = _server.ViewServer(demo_store, port=0).start()
    slow = []
    try:
        for _ in range(70):
            connection = socket.create_connection(("127.0.0.1", server.port))
            connection.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
            slow.append(connection)
        slow.append(socket.create_connection(("127.0.0.1", server.port)))  # and one that says nothing
        time.sleep(1.5)
        status, body = _get(server.url + "api/runs")
        assert status == 200 and body["total"] == 2
        assert _closed(slow[0]) and _closed(slow[-1])  # by the view, unanswered
    finally:
        for connection in slow:
            connection.close()
        server.stop()


def test_a_client_keeping_every_connection_open_does_not_lock_the_user_out(demo_store, monkeypatch):
    # Before, 64 open connections took every slot: a client opening them again as they timed out (or keeping
    # them alive) had the user answered 503 for as long as it went on. Now a new connection at the limit
    # closes the oldest idle ones.
    monkeypatch.setattr(_server, "_HEADER_TIMEOUT_S", 60.0, raising=False)  # none times out during the test
    server = _server.ViewServer(demo_store, port=0).start()
    held = []
    try:
        for _ in range(8):  # keep-alive connections between requests
            connection = socket.create_connection(("127.0.0.1", server.port))
            connection.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            answer = b""
            while not answer.endswith(b"0\r\n\r\n"):  # the whole (chunked) answer: the connection is idle after it
                answer += connection.recv(4096)
            assert b" 200 " in answer
            held.append(connection)
        held += [socket.create_connection(("127.0.0.1", server.port)) for _ in range(70)]  # silent ones
        time.sleep(0.3)  # every one accepted
        try:
            with urllib.request.urlopen(server.url + "api/runs", timeout=30) as response:
                status, body = response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()  # 503 Service Unavailable, before
        assert status == 200 and body["total"] == 2, (status, body)
        assert _closed(held[0])  # the oldest idle connection was closed for it
    finally:
        for connection in held:
            connection.close()
        server.stop()


def _hostile_store(directory) -> None:
    """Runs whose payloads a sender mangled: JSON nested 50,000 and 600 deep, and messages whose parts are a number."""
    from tests.query.spanbuild import SpanStore

    store = SpanStore(directory)
    for run_id, payload in (("run-deep", "[" * 50_000 + "]" * 50_000), ("run-600", "[" * 600 + '"secret-value"' + "]" * 600),
                            ("run-parts", json.dumps([{"role": 5, "parts": 7}])), ("run-plain", json.dumps("hello"))):
        run = store.run("hostile", run_id)
        run.llm(payload)
        run.tool("t", payload, payload, call_id="c1")
    store.write()


def test_payloads_a_sender_mangled_are_shown_and_compared_not_a_failure(tmp_path):
    # Before: a run holding JSON nested deeper than Python recurses failed its page (RecursionError, 500), a
    # 600-deep one failed the answer outside the error handling, and a message whose parts are a number
    # failed every diff against its run (TypeError).
    _hostile_store(tmp_path)
    server = _server.ViewServer(tmp_path, port=0).start()
    try:
        # Left for their own fixes: run-deep's findings take a minute (a rule's cost on its text).
        for page in ("api/run?id=run-deep&findings=0", "api/diff?a=run-deep&b=run-plain", "api/run?id=run-600&findings=0",
                     "api/findings?id=run-600", "api/diff?a=run-600&b=run-600", "api/diff?a=run-600&b=run-plain",
                     "api/run?id=run-parts", "api/findings?id=run-parts", "api/diff?a=run-parts&b=run-plain"):
            status, body = _get(server.url + page)
            assert status == 200, (page, body)
    finally:
        server.stop()
    traces = agentotel.open(tmp_path)
    assert traces.trajectory("run-deep").steps[0].output.startswith("[[[")  # left as the text it is
    assert traces.diff("run-parts", "run-plain").first_divergence is not None


@pytest.mark.xfail(strict=True, reason="its failure is gone: the diff of two runs nested 600 deep now answers (payloads read "
                   "100 levels deep, agentotel/_json.py MAX_DEPTH), and no other failure of the view was found to take its "
                   "place without mocking agentotel's own code; the error path needs a new trigger")
def test_a_failure_of_the_view_is_logged_and_the_page_gets_an_id_not_the_exception(tmp_path, caplog):
    # Before, the 500's body was the exception's text: a file's values, a path or a query, shown to any caller.
    # The failure here: a diff of two runs whose outputs are nested 600 deep (past what the diff recurses).
    _hostile_store(tmp_path)
    server = _server.ViewServer(tmp_path, port=0).start()
    try:
        with caplog.at_level(logging.ERROR, logger="agentotel.view._server"):
            status, body = _get(server.url + "api/diff?a=run-600&b=run-600")
    finally:
        server.stop()
    assert status == 500 and "Recursion" not in body["error"] and "secret" not in body["error"], body
    incident = body["error"].split("(error ")[1].split(":")[0]
    (record,) = caplog.records
    assert f"(error {incident})" in record.getMessage() and "RecursionError" in record.exc_text