"""Through agentotel.run() into a real Parquet store: the snapshot is stored, diffs, and holds no secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import agentotel
from agentotel import _config, _tracing, semconv
from agentotel.environment import diff, snapshot_from_attributes
from agentotel.runs import AttributionProcessor
from agentotel.store import ParquetSpanExporter, read_wal

from env_helpers import AGENTS_MD, UV_LOCK


def _no_timestamps(t: pa.DataType) -> pa.DataType:
    """The type with every timestamp as int64 (ns timestamps do not convert to datetime)."""
    if pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_list(t):
        return pa.list_(_no_timestamps(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _no_timestamps(f.type)) for f in t])
    return t


class Store:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.provider = TracerProvider()
        self.provider.add_span_processor(AttributionProcessor())
        self.provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(directory)))

    def rows(self) -> list[dict[str, Any]]:
        self.provider.force_flush()
        tables = [pq.read_table(p) for p in sorted(self.directory.glob("spans/**/*.parquet"))]
        tables.append(read_wal(self.directory))
        rows = []
        for table in tables:
            schema = pa.schema([pa.field(f.name, _no_timestamps(f.type)) for f in table.schema])
            rows += table.cast(schema).to_pylist()
        return rows

    def root(self, run_id: str) -> dict[str, Any]:
        (row,) = [r for r in self.rows() if r["run_id"] == run_id and r["parent_span_id"] is None]
        return row


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "traces")
    _tracing.set_providers(store.provider)
    yield store
    _tracing.set_providers(None)
    store.provider.shutdown()


def stored_snapshot(store: Store, run_id: str) -> dict[str, Any]:
    attributes = dict(store.root(run_id)["attributes"])
    assert attributes[semconv.AGENTOTEL_ENV_HASH]
    return snapshot_from_attributes(attributes)


def test_two_runs_differ_by_exactly_a_bump_an_agents_edit_and_a_tool_signature(repo: Path, store: Store) -> None:
    @agentotel.tool
    def lookup_ticket(ticket_id: str) -> dict:
        """Fetch a ticket."""
        return {"id": ticket_id}

    with agentotel.run("triage", repo=repo, run_id="run-a"):
        lookup_ticket("T-1")

    (repo / "uv.lock").write_text(UV_LOCK.replace('version = "2.31.0"', 'version = "2.32.0"'))
    (repo / "AGENTS.md").write_text(AGENTS_MD.replace("Never push to main.", "Never push to main or release."))

    @agentotel.tool
    def lookup_ticket(ticket_id: str, with_comments: bool = False) -> dict:  # noqa: F811 - the changed signature
        """Fetch a ticket."""
        return {"id": ticket_id}

    with agentotel.run("triage", repo=repo, run_id="run-b"):
        lookup_ticket("T-1")

    a, b = stored_snapshot(store, "run-a"), stored_snapshot(store, "run-b")
    result = diff(a, b)
    assert [(c.section, c.key) for c in result.changes] == [
        ("lockfiles", "uv.lock"),
        ("config_files", "AGENTS.md"),
        ("tools", "lookup_ticket"),
    ]
    assert result.changes[0].detail[0] == "requests 2.31.0 → 2.32.0"
    assert result.changes[2].detail == ("schema.parameters.properties.with_comments added",)
    assert dict(store.root("run-a")["attributes"])[semconv.AGENTOTEL_ENV_HASH] != dict(store.root("run-b")["attributes"])[semconv.AGENTOTEL_ENV_HASH]


def test_no_planted_secret_reaches_the_store(repo: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from env_helpers import git

    planted = {
        "OPENAI_API_KEY": "sk-proj-PLANTEDa1b2c3d4e5f6g7h8i9j0",
        "ANTHROPIC_API_KEY": "sk-ant-api03-PLANTEDzyxwvutsrqponm",
        "INTERNAL_SERVICE_TOKEN": "PLANTED-opaque-42",
        "AWS_SECRET_ACCESS_KEY": "PLANTEDwJalrXUtnFEMIK7MDENGbPxRfiCY",
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    git(repo, "remote", "set-url", "origin", "https://deploy:PLANTEDremotepw@git.example.com/team/agent.git")
    with agentotel.run("triage", repo=repo, run_id="run-secrets"):
        pass
    rows = store.rows()
    assert rows
    everything = json.dumps(rows, default=str)
    assert "PLANTED" not in everything
    snapshot = stored_snapshot(store, "run-secrets")
    assert set(planted) <= set(snapshot["credentials"]["env"])
    assert snapshot["repo"]["remote"] == "https://git.example.com/team/agent.git"


def test_snapshot_is_recorded_when_content_capture_is_off(repo: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTOTEL_CAPTURE_CONTENT", "false")
    _config.reset()  # settings are resolved again, from this environment
    with agentotel.run("triage", repo=repo, run_id="run-nocontent", task="secret task text"):
        pass
    row = store.root("run-nocontent")
    assert row["input"] is None  # the task is content: not recorded
    assert stored_snapshot(store, "run-nocontent")["lockfiles"]["uv.lock"]["packages"]["requests"] == "2.31.0"


def test_stored_types_of_small_attributes(repo: Path, store: Store) -> None:
    with agentotel.run("triage", repo=repo, run_id="run-types"):
        pass
    attributes = dict(store.root("run-types")["attributes"])
    assert attributes[semconv.AGENTOTEL_ENV_DIRTY] == "false"
    assert attributes[semconv.AGENTOTEL_ENV_LOCKFILE_PATH] == "uv.lock"
    assert isinstance(pa.array([attributes[semconv.AGENTOTEL_ENV_SNAPSHOT]]), pa.StringArray)


def test_agentotel_env_command_tells_the_two_runs_apart(repo: Path, store: Store) -> None:
    import io

    from agentotel.cli import main

    @agentotel.tool
    def close_ticket(ticket_id: str) -> bool:
        return True

    with agentotel.run("triage", repo=repo, run_id="cli-a"):
        close_ticket("T-1")
    (repo / "uv.lock").write_text(UV_LOCK.replace('version = "0.27.0"', 'version = "0.28.1"'))
    (repo / "AGENTS.md").write_text(AGENTS_MD + "Ask before closing.\n")

    @agentotel.tool
    def close_ticket(ticket_id: str, reason: str) -> bool:  # noqa: F811 - the changed signature
        return True

    with agentotel.run("triage", repo=repo, run_id="cli-b"):
        close_ticket("T-1", "done")
    store.provider.force_flush()

    out = io.StringIO()
    assert main(["env", "cli-a", "cli-b", "--dir", str(store.directory), "--json"], stdout=out, stderr=io.StringIO()) == 0
    changes = json.loads(out.getvalue())["changes"]
    assert [(c["section"], c["key"], c["kind"]) for c in changes] == [
        ("lockfiles", "uv.lock", "changed"),
        ("config_files", "AGENTS.md", "changed"),
        ("tools", "close_ticket", "changed"),
    ]
    assert changes[0]["detail"][0] == "httpx 0.27.0 → 0.28.1"
    assert "schema.parameters.properties.reason added" in changes[2]["detail"]

    text = io.StringIO()
    assert main(["env", "cli-a", "cli-b", "--dir", str(store.directory)], stdout=text, stderr=io.StringIO()) == 0
    assert "lockfile uv.lock changed: httpx 0.27.0 → 0.28.1" in text.getvalue()


def test_agent_version_given_to_run_reaches_the_snapshot(repo: Path, store: Store) -> None:
    with agentotel.run("triage", repo=repo, run_id="run-version", agent_version="2.3.1"):
        pass
    assert stored_snapshot(store, "run-version")["agent"]["agent"] == "triage@2.3.1"
