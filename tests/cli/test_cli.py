"""The `agentotel` command: every command's help, output forms, and one-line errors."""

from __future__ import annotations

import csv
import io
import json

import pytest

import agentotel
from agentotel.store import parquet_files
from agentotel import cli
from spanbuild import SpanStore, assistant


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def store(tmp_path):
    s = SpanStore(tmp_path / "traces")
    for run_id, result in (("run-a1", {"temp": 20}), ("run-b2", {"temp": "20C", "unit": "c"})):
        run = s.run("weather", run_id)
        run.llm(assistant(calls=[("c1", "get_weather", {"city": "Paris"})]))
        run.tool("get_weather", {"city": "Paris"}, result, call_id="c1")
        run.llm(assistant("It is 20 degrees"))
    s.write()
    return s.directory


def test_every_command_has_help_with_an_example():
    parser = cli.build_parser()
    commands = parser._subparsers._group_actions[0].choices  # noqa: SLF001 - the registered subcommands
    assert {"runs", "trajectory", "diff", "env", "sql", "compact", "demo"} <= set(commands)
    for name, sub in commands.items():
        text = sub.format_help()
        assert "Example:" in text and f"agentotel {name}" in text, name
        assert "--json" in text, name


def test_runs_table_and_json(store):
    code, out, _ = run_cli("runs", "--dir", str(store))
    assert code == 0 and "run-a1" in out and "run-b2" in out and "weather" in out
    assert "\x1b[" not in out  # colour only on a terminal
    code, out, _ = run_cli("runs", "--dir", str(store), "--json", "--limit", "1")
    rows = json.loads(out)
    assert [r["run_id"] for r in rows] == ["run-b2"] and rows[0]["steps"] == 3


def test_the_directory_defaults_to_agentotel_dir(store, monkeypatch):
    monkeypatch.setenv("AGENTOTEL_DIR", str(store))
    from agentotel import _config

    _config.reset()
    try:
        code, out, _ = run_cli("runs", "--json")
    finally:
        _config.reset()
    assert code == 0 and len(json.loads(out)) == 2


def test_trajectory_table_full_and_json(store):
    code, out, _ = run_cli("trajectory", "run-a", "--dir", str(store))
    assert code == 0 and "get_weather" in out and "← #1" in out
    code, out, _ = run_cli("trajectory", "run-a1", "--full", "--dir", str(store))
    assert code == 0 and '"city": "Paris"' in out
    code, out, _ = run_cli("trajectory", "run-a1", "--json", "--dir", str(store))
    data = json.loads(out)
    assert [s["type"] for s in data["steps"]] == ["llm", "tool", "llm"] and data["steps"][1]["requested_by"] == 1


def test_diff_shows_the_divergence_first_and_json_has_the_contract_shape(store):
    code, out, _ = run_cli("diff", "run-a1", "run-b2", "--dir", str(store))
    assert code == 0
    first_line = next(line for line in out.splitlines() if "divergence" in line.lower())
    assert "output_shape_changed" in first_line and "A#2" in first_line
    assert out.index("First divergence") < out.index("Totals")
    code, out, _ = run_cli("diff", "run-a1", "run-b2", "--json", "--dir", str(store))
    data = json.loads(out)
    assert set(data) == {"a", "b", "first_divergence", "pairs", "environment", "totals"}
    assert data["first_divergence"]["kind"] == "output_shape_changed"


def test_sql_formats(store):
    query = "SELECT run_id, steps FROM runs ORDER BY run_id"
    code, out, _ = run_cli("sql", query, "--format", "csv", "--dir", str(store))
    assert code == 0 and list(csv.reader(io.StringIO(out))) == [["run_id", "steps"], ["run-a1", "3"], ["run-b2", "3"]]
    code, out, _ = run_cli("sql", query, "--format", "json", "--dir", str(store))
    assert json.loads(out) == [{"run_id": "run-a1", "steps": 3}, {"run_id": "run-b2", "steps": 3}]
    code, out, err = run_cli("sql", query, "--dir", str(store))
    assert code == 0 and "run-a1" in out and "2 row(s)" in err


def test_a_negative_limit_is_a_usage_error(store, capsys):
    with pytest.raises(SystemExit) as exit_:  # argparse's usage error, as for any bad option
        run_cli("runs", "--limit", "-1", "--dir", str(store))
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "give 0 or more" in err and "Binder" not in err


def test_a_limit_past_any_number_of_runs_lists_them_all(store):
    # Before: DuckDB's "Type INT128 with value ... can't be cast", and exit 1.
    code, out, _ = run_cli("runs", "--limit", "9" * 30, "--json", "--dir", str(store))
    assert code == 0 and sorted(r["run_id"] for r in json.loads(out)) == ["run-a1", "run-b2"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (("runs", "--dir", "{missing}"), "no trace store at"),
        (("trajectory", "nope", "--dir", "{store}"), "no run matches 'nope'"),
        (("trajectory", "run-", "--dir", "{store}"), "ambiguous"),
        (("sql", "SELEC 1", "--dir", "{store}"), "syntax error"),
        (("sql", "SELECT nope FROM runs", "--dir", "{store}"), "nope"),
        (("env", "run-a1", "--dir", "{store}"), "no environment snapshot"),
        (("compact", "--dir", "{missing}"), "no trace store at"),
        (("sql", "  ", "--dir", "{store}"), "the query is empty"),
        (("runs", "--dir", "{store}/spans"), "did you mean"),
    ],
)
def test_user_errors_are_one_line_and_a_non_zero_exit(store, tmp_path, argv, message):
    argv = [a.format(store=store, missing=tmp_path / "missing") for a in argv]
    code, out, err = run_cli(*argv)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("agentotel: error:") and message in err
    assert "Traceback" not in err


def test_a_corrupt_file_is_a_warning_line_not_a_failure(store):
    (store / "spans" / "date=2026-05-28" / "broken.parquet").write_bytes(b"garbage")
    code, out, err = run_cli("runs", "--dir", str(store), "--json")
    assert code == 0 and len(json.loads(out)) == 2
    assert "warning:" in err and "broken.parquet" in err


def test_compact_merges_small_files_and_keeps_every_span(tmp_path):
    s = SpanStore(tmp_path)
    for i in range(4):
        run = s.run("r", f"run-{i}")
        run.tool("t", {"i": i}, {"ok": True})
        s.write([run])
    before = agentotel.open(tmp_path).sql("SELECT count(*) FROM spans").fetchall()[0][0]
    code, out, err = run_cli("compact", "--dir", str(tmp_path), "--json")
    assert code == 0, err
    stats = json.loads(out)
    assert isinstance(stats, dict) and stats
    assert len(parquet_files(tmp_path)) < 4  # the merged inputs leave spans/ at once (kept in .replaced/ for the grace period)
    assert agentotel.open(tmp_path).sql("SELECT count(*) FROM spans").fetchall()[0][0] == before
    code, _out, err = run_cli("compact", "--dir", str(tmp_path), "--grace", "0")
    assert code == 0, err
    assert len(list((tmp_path / "spans").rglob("*.parquet"))) < 4
    assert agentotel.open(tmp_path).sql("SELECT count(*) FROM spans").fetchall()[0][0] == before


@pytest.fixture
def demo(demo_run):
    """`agentotel demo` run once, as a user would: a fresh process, a new directory (tests/conftest.py)."""
    return demo_run


def test_demo_records_two_runs_and_points_at_the_divergence(demo):
    # How long it takes is not asserted here (these machines are noisy): the demo's time is printed by -s.
    directory, proc, elapsed = demo
    assert proc.returncode == 0, proc.stderr
    print(f"the demo took {elapsed:.1f} s")
    out = proc.stdout
    assert "First divergence at A#3 ↔ B#3: output_shape_changed" in out and "lookup_order" in out
    traces = agentotel.open(directory)
    assert len(traces.runs().fetchall()) == 2
    a, b = sorted(traces.runs().to_arrow_table().to_pylist(), key=lambda r: r["start_time"])
    assert [s.tool_name for s in traces.trajectory(a["run_id"]).steps if s.type == "tool"] == ["lookup_order", "track_shipment"]
    assert [s.tool_name for s in traces.trajectory(b["run_id"]).steps if s.type == "tool"] == ["lookup_order"]
    assert all(s.tool_call_id and s.requested_by for s in traces.trajectory(a["run_id"]).steps if s.type == "tool")


def test_env_shows_a_snapshot_and_compares_two(demo):
    directory, proc, _ = demo
    assert proc.returncode == 0, proc.stderr
    runs = agentotel.open(directory).runs().fetchall()
    a, b = runs[1][0], runs[0][0]
    code, out, err = run_cli("env", a, "--dir", str(directory), "--json")
    assert code == 0, err
    assert isinstance(json.loads(out), dict) and json.loads(out)
    code, out, err = run_cli("env", a, b, "--dir", str(directory))
    assert code == 0 and out.strip(), err
    code, out, err = run_cli("env", a, b, "--dir", str(directory), "--json")
    assert code == 0 and json.loads(out)["same"] is True


def test_a_file_damaged_past_its_footer_is_still_one_line(store):
    (path,) = list((store / "spans").rglob("*.parquet"))
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle : middle + 64] = b"\xff" * 64  # pages damaged, footer intact
    path.write_bytes(bytes(data))
    code, out, err = run_cli("trajectory", "run-a1", "--dir", str(store))
    assert "Traceback" not in err
    if code != 0:  # DuckDB noticed the damage: one line naming the store
        assert code == 1 and err.count("\n") == 1 and err.startswith("agentotel: error:")
