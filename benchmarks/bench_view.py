"""View: time to first render of a 200-step run in `agentotel view` and in a report, and the report's size.

The run is recorded for real (in a child process): an agent whose scripted model (on 127.0.0.1,
through the openai SDK) asks for 100 file reads one after another, each answered with ~1.5 KB, so
the 100 model calls resend a history that grows to ~150 KB — 200 steps with content. "First render"
is headless Chromium's time from starting the navigation to the first step row drawn, median of the
repeats; the view is measured with its server already running (it includes the API call that loads
the run). There is no peer: the targets are absolute (< 1 s each, < 2 MB for the report).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from benchmarks.harness import Result

_RECORD = textwrap.dedent('''
    import json, sys
    import openai
    import agentotel
    from agentotel.demo import completion, serve_model

    STEPS = int(sys.argv[2])
    agentotel.instrument(sys.argv[1], service_name="bench-view")

    @agentotel.tool
    def read_file(path: str) -> str:
        """Read one file of the repository."""
        return (f"# {path}\\n" + "def handler(event):\\n    return process(event)  # line\\n" * 30)[:1500]

    def model(request):
        done = sum(1 for m in request["messages"] if m.get("role") == "tool")
        if done >= STEPS:
            return completion("All files read; the bug is in module_7.", prompt_tokens=done * 400, completion_tokens=20)
        return completion(None, [("read_file", {"path": f"src/module_{done}.py"})], prompt_tokens=done * 400, completion_tokens=15)

    with serve_model(model) as url:
        client = openai.OpenAI(base_url=url, api_key="bench", max_retries=0)
        tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
                  "properties": {"path": {"type": "string"}}}}}]
        with agentotel.run("coding-agent", user="bench", task="find the bug") as run:
            messages = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Find the bug."}]
            while True:
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools).choices[0].message
                if not reply.tool_calls:
                    break
                messages.append(reply.model_dump(exclude_none=True))
                for call in reply.tool_calls:
                    messages.append({"role": "tool", "tool_call_id": call.id,
                                     "content": read_file(**json.loads(call.function.arguments))})
            run.output = reply.content
    agentotel.shutdown()
''')


def _chromium() -> str | None:
    return next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)


def _first_render(page, url: str) -> float:
    page.goto("about:blank")  # a fresh page each time (the same URL again would only change its hash)
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(".step-row")
    return (time.perf_counter() - started) * 1000


def run(quick: bool) -> list[Result]:
    import agentotel
    from agentotel.view import _server, report_html

    tool_calls = 20 if quick else 100
    repeats = 2 if quick else 7
    scratch = Path(tempfile.mkdtemp(prefix="agentotel-bench-view-"))
    try:
        store = scratch / "traces"
        root = Path(__file__).resolve().parents[1]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "collector")]),
               "AGENTOTEL_CAPTURE_ENVIRONMENT": "false"}
        subprocess.run([sys.executable, "-c", _RECORD, str(store), str(tool_calls)], check=True, env=env, timeout=600)
        traces = agentotel.open(store)
        (run_id,) = [r[0] for r in traces.sql("SELECT run_id FROM runs").fetchall()]
        steps = len(traces.trajectory(run_id).steps)
        started = time.perf_counter()
        html = report_html(traces, run_id)
        build_ms = (time.perf_counter() - started) * 1000
        report = scratch / "run.html"
        report.write_text(html, encoding="utf-8")
        size = report.stat().st_size
        corpus = f"one run of {steps} steps ({tool_calls} tool calls, history to ~{tool_calls * 1.6:.0f} KB)"
        rows = [Result(benchmark="view: report size", metric=f"bytes of the self-contained report of a {steps}-step run",
                       unit="bytes", ours=float(size), target="< 2 MB (200 steps)", met=size < 2_000_000 if not quick else None,
                       notes=f"report built in {build_ms:.0f} ms", corpus=corpus)]
        chromium = _chromium()
        if chromium is None:
            return rows + [Result(benchmark="view: first render", metric="ms", unit="ms", ours=None, corpus=corpus,
                                  notes="no Chromium on this machine: not measured")]
        from playwright.sync_api import sync_playwright

        server = _server.ViewServer(store, port=0).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1400, "height": 950})
                _first_render(page, report.as_uri())  # warm-up: the browser's own start is not the page's cost
                view_url = server.url + f"#/run/{run_id}"
                report_ms = [_first_render(page, report.as_uri()) for _ in range(repeats)]
                view_ms = [_first_render(page, view_url) for _ in range(repeats)]
                browser.close()
        finally:
            server.stop()
        for name, samples in (("report", report_ms), ("view", view_ms)):
            median = statistics.median(samples)
            spread = (max(samples) - min(samples)) / median if median else None
            rows.append(Result(benchmark=f"view: first render ({name})", metric=f"ms from navigation to the first step drawn, {steps}-step run",
                               unit="ms", ours=round(median, 1), target="< 1 s", met=median < 1000 if not quick else None,
                               corpus=corpus, repeats=repeats, ours_spread=spread,
                               notes="headless Chromium; the view's time includes its API call"))
        return rows
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
