"""The view's API and the HTML report, read as a browser would read them (no browser needed here)."""

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

import agentotel
from agentotel.view import _data, _server, report_html

from .conftest import ROOT


def _runs(traces):
    rows = traces.runs().to_arrow_table().to_pylist()
    return sorted(rows, key=lambda r: r["start_time"])


def _embedded(html: str):
    match = re.search(r'<script type="application/json" id="agentotel-data">(.*?)</script>', html, re.S)
    assert match, "the report has no data element"
    return json.loads(match.group(1))


def _get(url: str, headers: dict | None = None, method: str = "GET"):
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


# -- the report -------------------------------------------------------------------------------------
def test_a_diff_report_is_one_file_that_needs_no_network_and_names_the_divergence(demo_store):
    traces = agentotel.open(demo_store)
    a, b = _runs(traces)
    html = report_html(traces, a["run_id"], b["run_id"])
    assert "connect-src 'none'" in html  # the page may not fetch anything, by its own policy
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html), "a report must not load anything from a network"
    data = _embedded(html)
    assert data["mode"] == "report" and data["page"]["kind"] == "diff"
    first = data["page"]["diff"]["first_divergence"]
    assert (first["kind"], first["index_a"], first["index_b"]) == ("output_shape_changed", 3, 3)
    assert [s["tool_name"] for s in data["page"]["a"]["steps"] if s["type"] == "tool"] == ["lookup_order", "track_shipment"]


def test_a_run_report_holds_steps_environment_and_findings(demo_store):
    traces = agentotel.open(demo_store)
    a, _b = _runs(traces)
    page = _embedded(report_html(traces, a["run_id"][:8]))["page"]
    assert page["run"]["run_id"] == a["run_id"]
    assert len(page["steps"]) == a["steps"] == 6
    assert page["environment"], "the environment snapshot is part of the run page"
    assert page["findings_error"] is None and isinstance(page["findings"], list)
    tool = next(s for s in page["steps"] if s["type"] == "tool")
    assert tool["requested_by"] and tool["tool_call_id"]


def test_each_message_of_a_conversation_is_sent_once(demo_store):
    traces = agentotel.open(demo_store)
    a, _b = _runs(traces)
    html = report_html(traces, a["run_id"])
    # Three model calls each resend the system prompt; the page carries it once and rebuilds the rest.
    assert html.count("You are a support agent for an online shop") == 1
    page = _embedded(html)["page"]
    llm = [s for s in page["steps"] if s["type"] == "llm"]
    refs = [m["$m"] for s in llm for m in s["input"] if isinstance(m, dict) and "$m" in m]
    assert refs and all(r in page["messages"] for r in refs)
    assert page["messages"][llm[0]["input"][0]["$m"]]["role"] == "system"


def test_hostile_text_in_a_result_cannot_end_the_data_element(long_store):
    traces = agentotel.open(long_store)
    (run,) = _runs(traces)
    html = report_html(traces, run["run_id"])
    closes_early = "</script><script>window.pwned" in html
    assert not closes_early, "a result's text ended the data element"
    page = _embedded(html)["page"]  # parses: the text stayed inside the JSON
    assert "</script><script>window.pwned = 1</script>" in json.dumps(page["steps"][0]["output"])
    failed = [s for s in page["steps"] if s["status"] == "error"]
    assert len(failed) == 100 and all("src/module_" in (s["error"] or "") for s in failed), failed[:1]


def test_the_report_command_writes_the_file(demo_store, tmp_path):
    traces = agentotel.open(demo_store)
    a, b = _runs(traces)
    target = tmp_path / "out" / "diff.html"
    proc = subprocess.run([sys.executable, "-m", "agentotel.cli", "report", a["run_id"], b["run_id"][:10],
                           "-o", str(target), "--dir", str(demo_store)], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    assert _embedded(target.read_text())["page"]["diff"]["first_divergence"]["kind"] == "output_shape_changed"
    assert "Wrote" in proc.stdout and not list(target.parent.glob(".*.tmp"))


# -- the view's API --------------------------------------------------------------------------------
@pytest.fixture()
def view(demo_store):
    server = _server.ViewServer(demo_store, port=0).start()
    yield server
    server.stop()


def test_the_api_lists_filters_sorts_and_pages_runs(view):
    status, _h, body = _get(view.url + "api/runs")
    page = json.loads(body)
    assert status == 200 and page["total"] == 2 and len(page["rows"]) == 2
    assert page["rows"][0]["start_time"] >= page["rows"][1]["start_time"]  # newest first
    assert json.loads(_get(view.url + "api/runs?status=error")[2])["total"] == 0
    assert json.loads(_get(view.url + "api/runs?user=demo-user&sort=steps&dir=asc")[2])["rows"][0]["steps"] == 4
    assert json.loads(_get(view.url + "api/runs?limit=1&offset=1")[2])["rows"][0]["steps"] in (4, 6)
    assert json.loads(_get(view.url + "api/runs?min_cost=1000")[2])["total"] == 0
    first = json.loads(body)["rows"][0]["run_id"]
    assert json.loads(_get(view.url + f"api/runs?q={first[:8]}")[2])["rows"][0]["run_id"] == first
    status, _h, body = _get(view.url + "api/runs?sort=drop%20table")
    assert status == 400 and "sort" in json.loads(body)["error"]
    assert _get(view.url + "api/runs?since=yesterday")[0] == 400
    assert json.loads(_get(view.url + "api/choices")[2])["users"] == ["demo-user"]


def test_the_api_serves_a_run_and_a_diff(view):
    rows = json.loads(_get(view.url + "api/runs?dir=asc")[2])["rows"]
    run = json.loads(_get(view.url + f"api/run?id={rows[0]['run_id'][:8]}")[2])
    assert run["run"]["run_id"] == rows[0]["run_id"] and len(run["steps"]) == 6
    assert isinstance(run["findings"], list)
    fast = json.loads(_get(view.url + f"api/run?id={rows[0]['run_id']}&findings=0")[2])
    assert "findings" not in fast and fast["steps"] == run["steps"]  # the page draws it, then asks for findings
    later = json.loads(_get(view.url + f"api/findings?id={rows[1]['run_id'][:8]}")[2])
    assert later["findings_error"] is None and isinstance(later["findings"], list)
    diff = json.loads(_get(view.url + f"api/diff?a={rows[0]['run_id']}&b={rows[1]['run_id']}")[2])
    assert diff["diff"]["first_divergence"]["index_b"] == 3
    status, _h, body = _get(view.url + "api/run?id=nope")
    assert status == 404 and "no run matches" in json.loads(body)["error"]
    assert _get(view.url + "api/run")[0] == 400


def test_the_view_is_read_only_and_answers_only_its_own_address(view):
    status, headers, _ = _get(view.url + "api/runs", method="POST")
    assert status == 405 and "GET" in headers["allow"]
    # A page on another site resolving its name to 127.0.0.1 (DNS rebinding) sends its own Host.
    assert _get(view.url + "api/runs", {"Host": "evil.example:80"})[0] == 421
    status, headers, body = _get(view.url)
    assert status == 200 and headers["content-type"].startswith("text/html") and b"connect-src 'self'" in body
    assert headers["x-content-type-options"] == "nosniff"


def test_a_view_bound_beyond_loopback_requires_its_token(demo_store):
    server = _server.ViewServer(demo_store, host="0.0.0.0", port=0).start()
    try:
        assert server.token and f"token={server.token}" in server.url
        base = f"http://127.0.0.1:{server.port}/"
        assert _get(base + "api/runs")[0] == 401
        assert _get(base + "api/runs", {"Authorization": "Bearer wrong"})[0] == 401
        assert _get(base + "api/runs", {"Authorization": f"Bearer {server.token}"})[0] == 200
        status, _h, body = _get(base + f"?token={server.token}")
        assert status == 200 and server.token.encode() in body  # the page passes it on to its API calls
    finally:
        server.stop()


def test_new_runs_appear_without_restarting_the_view(tmp_path, monkeypatch):
    from .conftest import LONG_RUN, record

    directory = tmp_path / "traces"
    record(directory, LONG_RUN, "3")
    monkeypatch.setattr(_server, "_REFRESH_S", 0.0)
    server = _server.ViewServer(directory, port=0).start()
    try:
        assert json.loads(_get(server.url + "api/runs")[2])["total"] == 1
        record(directory, LONG_RUN, "2")
        time.sleep(0.05)
        assert json.loads(_get(server.url + "api/runs")[2])["total"] == 2
    finally:
        server.stop()


def test_a_bad_filter_value_is_a_clear_message():
    with pytest.raises(_data.BadRequest, match="max_cost: 'lots' is not a number"):
        _data.runs_page(None, {"max_cost": "lots"})


def test_view_and_report_have_help_with_an_example():
    for name in ("view", "report"):
        proc = subprocess.run([sys.executable, "-m", "agentotel.cli", name, "--help"], capture_output=True, text=True,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
        assert proc.returncode == 0 and "Example:" in proc.stdout and f"agentotel {name}" in proc.stdout
