"""The ops story end to end: an instrumented agent exports OTLP, agentotel-collector stores it, agentotel queries it."""

from __future__ import annotations

import subprocess
import sys

import agentotel
from collector_support import Collector, subprocess_env

AGENT = """
import agentotel

@agentotel.tool
def lookup(order: int) -> dict:
    return {"order": order, "status": "shipped"}

agentotel.instrument(service_name="support-agent")
with agentotel.run("triage", user="alice", session="s-1") as run:
    lookup(42)
    run.output = "shipped"
    print(run.id)
agentotel.shutdown()
"""


def test_agent_spans_sent_over_otlp_are_queryable_with_agentotel(tmp_path):
    with Collector(dir=tmp_path / "store", http=("127.0.0.1", 0), grpc="off") as collector:
        env = {
            **subprocess_env(),
            "OTEL_TRACES_EXPORTER": "otlp",  # no local Parquet: everything goes through the collector
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.http_address[1]}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
            "AGENTOTEL_DIR": str(tmp_path / "unused"),
        }
        agent = subprocess.run([sys.executable, "-c", AGENT], env=env, capture_output=True, text=True, timeout=120)
        assert agent.returncode == 0, agent.stderr
        run_id = agent.stdout.strip()

    traces = agentotel.open(tmp_path / "store")
    runs = traces.runs().fetchall()
    columns = [d[0] for d in traces.runs().description]
    assert [dict(zip(columns, row))["run_id"] for row in runs] == [run_id]
    trajectory = traces.trajectory(run_id)
    assert [(step.type, step.tool_name) for step in trajectory.steps] == [("tool", "lookup")]
    assert not (tmp_path / "unused" / "spans").exists()
