"""Replay of retrievals and generator tools: recorded through the store, served back without running the body."""

from __future__ import annotations

import asyncio

import pytest

import agentotel
from agentotel.cases import Case, ReplayMiss, ReplayMismatch, load_run, new_case, replay


class Live:
    searches = 0
    streams = 0


@agentotel.retrieval(data_source="help-center")
def search_docs(query: str, k: int = 2) -> list[dict]:
    Live.searches += 1
    return [{"id": f"doc-{i}", "score": 0.9 - i / 10, "text": f"{query} answer {i}"} for i in range(k)]


@agentotel.tool
def list_files(folder: str):
    """A tool that yields its answer."""
    Live.streams += 1
    yield from (f"{folder}/{name}" for name in ("a.py", "b.py"))


@agentotel.tool
async def alist_files(folder: str):
    Live.streams += 1
    for name in ("c.py",):
        yield f"{folder}/{name}"


def agent(question: str) -> dict:
    docs = search_docs(question)
    files = list(list_files("src"))

    async def more() -> list[str]:
        return [f async for f in alist_files("lib")]

    return {"docs": docs, "files": files + asyncio.run(more())}


@pytest.fixture
def case(tmp_path) -> Case:
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    try:
        with agentotel.run("helper", task="reset password") as run:
            agent("reset password")
            search_docs("the last step")  # the step the case is cut at
        assert agentotel.flush()
        record = load_run(agentotel.open(directory), run.id)
    finally:
        agentotel.shutdown()
    assert [s["type"] for s in record.steps] == ["retrieval", "tool", "tool", "retrieval"]
    cut = new_case(record, at=4, layer="tool", name="help").save(tmp_path / "cases" / "help.yaml")
    Live.searches = Live.streams = 0
    return Case.load(cut)


def test_a_case_freezes_retrievals_with_their_query_and_documents(case):
    assert [r.step for r in case.retrievals] == [1, 4]  # before the cut, and the cut step's own
    fixture = case.retrievals[0]
    assert (fixture.step, fixture.data_source, fixture.query) == (1, "help-center", "reset password")
    assert fixture.documents == [
        {"id": "doc-0", "score": 0.9, "content": "reset password answer 0"},
        {"id": "doc-1", "score": 0.8, "content": "reset password answer 1"},
    ]
    assert [(t.name, t.output) for t in case.tools] == [("list_files", ["src/a.py", "src/b.py"]), ("alist_files", ["lib/c.py"])]


def test_replay_serves_retrievals_and_generator_tools_without_running_them(case):
    with replay(case, mode="frozen") as replayer:
        answer = agent("reset password")
    assert Live.searches == 0 and Live.streams == 0
    assert [d["id"] for d in answer["docs"]] == ["doc-0", "doc-1"]
    assert answer["docs"][0]["content"] == "reset password answer 0"
    assert answer["files"] == ["src/a.py", "src/b.py", "lib/c.py"]
    assert [(e.kind, e.outcome) for e in replayer.events] == [("retrieval", "served"), ("tool", "served"), ("tool", "served")]


def test_a_retrieval_the_case_cannot_answer(case):
    with replay(case, mode="frozen") as replayer:
        with pytest.raises(ReplayMiss, match="no recorded result for retrieval help-center"):
            search_docs("something else")
    assert Live.searches == 0 and replayer.violations[0].kind == "retrieval"
    with replay(case, mode="live", policy="strict"):
        with pytest.raises(ReplayMismatch, match="not the recorded call"):
            search_docs("something else")  # off the recorded path while the recording is unserved
    with replay(case, mode="live", policy="fifo") as replayer:  # fifo: the unserved tool calls don't matter
        search_docs("reset password")
        search_docs("something else")  # past the recording: live
    assert Live.searches == 1 and [e.outcome for e in replayer.events] == ["served", "live"]


def test_a_replayed_generator_tool_records_its_span_like_a_live_one(case, tmp_path):
    directory = tmp_path / "replayed"
    agentotel.instrument(directory)
    try:
        with replay(case, mode="frozen"):
            with agentotel.run("helper", task="reset password"):
                agent("reset password")
        assert agentotel.flush()
        rows = agentotel.open(directory / "replays").sql(
            "SELECT type, output FROM steps WHERE type IN ('tool', 'retrieval') ORDER BY \"index\"").fetchall()
    finally:
        agentotel.shutdown()
    assert [r[0] for r in rows] == ["retrieval", "tool", "tool"]
    assert '"src/a.py"' in rows[1][1] and '"doc-0"' in rows[0][1]
