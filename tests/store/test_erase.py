"""`agentotel forget` and `compact --retain`: rows erased from every file (and the WAL), old partitions dropped."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

import agentotel
from agentotel.cli import main
from agentotel.store import erase

ROOT = Path(__file__).resolve().parents[2]

RECORD = textwrap.dedent('''
    import json, sys
    import agentotel
    from agentotel.store import erase

    directory, mode = sys.argv[1], sys.argv[2]
    agentotel.instrument(directory)

    @agentotel.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return "value of " + key

    def one(user, session):
        with agentotel.run("support", user=user, session=session, task="help " + user):
            lookup("a")
            lookup("b")

    if mode == "store":
        one("alice", "s1"); one("bob", "s2"); one("alice", "s3")
        agentotel.shutdown()
    else:  # a live writer: its spans are durable in its WAL, not folded yet
        one("carol", "s9")
        assert agentotel.flush()
        print(json.dumps(erase.forget(directory, user="carol")))
        agentotel.shutdown()
''')


def record(directory: Path, mode: str = "store") -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")]),
           "AGENTOTEL_CAPTURE_ENVIRONMENT": "false"}
    proc = subprocess.run([sys.executable, "-c", RECORD, str(directory), mode], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def glob_count(directory: Path, where: str = "true") -> int:
    pattern = str(directory / "spans" / "**" / "*.parquet")
    return duckdb.sql(f"SELECT count(*) FROM read_parquet('{pattern}', hive_partitioning = true) WHERE {where}").fetchall()[0][0]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The store recorded once (a process start and three runs); each test erases from its own copy."""
    directory = tmp_path_factory.mktemp("recorded") / "traces"
    record(directory)
    return directory


@pytest.fixture()
def store(tmp_path, recorded):
    directory = tmp_path / "traces"
    shutil.copytree(recorded, directory)
    return directory


def test_forget_a_user_erases_their_spans_everywhere_and_keeps_the_rest(store, capsys):
    bob_before = glob_count(store, "user_id = 'bob'")
    alice_before = glob_count(store, "user_id = 'alice'")
    assert alice_before == 6 and bob_before == 3  # a run and two tool calls each
    assert main(["compact", "--dir", str(store), "--grace", "60"]) == 0  # a merged file, and retired copies in .replaced/
    capsys.readouterr()
    assert main(["forget", "--user", "alice", "--dir", str(store), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["rows"] >= alice_before and stats["wal_rows_pending"] == 0
    assert glob_count(store, "user_id = 'alice'") == 0 and glob_count(store, "user_id = 'bob'") == bob_before
    retired = list((store / ".replaced").rglob("*.parquet"))
    assert all(duckdb.sql(f"SELECT count(*) FROM '{p}' WHERE user_id = 'alice'").fetchall()[0][0] == 0 for p in retired)
    traces = agentotel.open(store)
    assert [r[0] for r in traces.sql("SELECT user_id FROM runs").fetchall()] == ["bob"]
    assert not list(store.rglob(".*.tmp"))


def test_forget_a_session_or_a_run(store, capsys):
    traces = agentotel.open(store)
    run_of_bob = traces.sql("SELECT run_id FROM runs WHERE user_id = 'bob'").fetchall()[0][0]
    assert main(["forget", "--session", "s3", "--dir", str(store)]) == 0
    assert "Erased 3 span(s) of session s3" in capsys.readouterr().out
    assert main(["forget", "--run", run_of_bob, "--dir", str(store)]) == 0
    assert glob_count(store, "user_id = 'bob'") == 0 and glob_count(store, "session_id = 's1'") == 3
    capsys.readouterr()
    assert main(["forget", "--run", "no-such-run", "--dir", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 0


def test_forget_names_exactly_one_kind_of_id(store):
    with pytest.raises(erase.EraseError, match="exactly one"):
        erase.forget(store, user="alice", run="x")
    with pytest.raises(SystemExit):
        main(["forget", "--dir", str(store)])


def test_a_live_writers_wal_is_counted_and_erased_once_folded(tmp_path, capsys):
    directory = tmp_path / "traces"
    pending = json.loads(record(directory, mode="live"))
    assert pending["wal_rows_pending"] == 3 and pending["rows"] == 0  # durable in the WAL, not yet Parquet
    seen = agentotel.open(directory).sql("SELECT count(*) FROM spans WHERE user_id = 'carol'").fetchall()[0][0]
    assert seen == 3  # folded by the writer at its exit (or still in its WAL, which forget folds first)
    assert main(["forget", "--user", "carol", "--dir", str(directory), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 3
    assert not list((directory / "wal").glob("*.arrows"))
    assert not list((directory / "spans").rglob("*.parquet"))  # carol's were the only spans: no file is left


def test_compact_retain_drops_partitions_past_the_window(store, capsys):
    (today,) = [p for p in (store / "spans").glob("date=*")]
    old = store / "spans" / "date=2020-01-01"
    old.mkdir()
    for f in today.glob("*.parquet"):
        shutil.copy(f, old / f.name)
    assert main(["compact", "--dir", str(store), "--retain", "30d", "--grace", "0", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["partitions_dropped"] == 1 and not old.exists() and today.exists()
    assert glob_count(store) == 9
    with pytest.raises(SystemExit):
        main(["compact", "--dir", str(store), "--retain", "0"])
