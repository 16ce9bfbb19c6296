"""What a new user noticed in the command line's output: ids, run names, filters, money, maps."""

import json

import pytest

from agentotel.cli import _cost, _float, _prefixes, main


@pytest.fixture
def demo(demo_store):
    return demo_store


def cli(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("value, text", [
    (0.00025830000000000004, "$0.000258"), (5.2e-05, "$0.0000520"), (0.0123, "$0.0123"), (0.5, "$0.500"),
    (1234.5, "$1,234.50"), (0, "$0"), (None, ""), (-0.0004, "-$0.000400"),
])
def test_money_reads_as_money(value, text):
    assert _cost(value) == text


@pytest.mark.parametrize("value, text", [
    (0.00025830000000000004, "0.0002583"), (5.2e-05, "0.000052"), (1 / 3, "0.333333"), (2.0, "2"),
    (123456.789, "123457"), (1e20, "1e+20"),
])
def test_floats_in_tables_have_no_noise_and_no_exponent(value, text):
    assert _float(value) == text


def test_ids_are_shortened_only_as_far_as_they_stay_unique():
    ids = ["3f2a9c01-aaaa", "3f2a9c01-aaab", "77aa0000-0000"]
    short = _prefixes(ids)
    assert short == {"3f2a9c01-aaaa": "3f2a9c01-aaaa", "3f2a9c01-aaab": "3f2a9c01-aaab", "77aa0000-0000": "77aa0000"}
    assert _prefixes(["0123456789abcdef", "0123456789abcdeg"])["0123456789abcdef"] == "0123456789abcdef"


def test_runs_filters(demo, capsys):
    def count(*flags):
        code, out, err = cli(capsys, "runs", "--dir", demo, "--json", *flags)
        assert code == 0, err
        return len(json.loads(out))

    assert count() == 2
    assert count("--status", "ok") == 2 and count("--status", "error") == 0
    assert count("--agent", "order-support") == 2 and count("--agent", "someone-else") == 0
    assert count("--since", "1d") == 2 and count("--until", "2000-01-01") == 0
    assert count("--user", "demo-user", "--since", "2000-01-01", "--until", "2999-12-31") == 2
    with pytest.raises(SystemExit) as exit:
        cli(capsys, "runs", "--dir", demo, "--since", "last tuesday")
    assert exit.value.code == 2 and "is not a date" in capsys.readouterr().err


def test_a_run_name_means_its_latest_run(demo, capsys):
    code, out, err = cli(capsys, "trajectory", "order-support", "--dir", demo, "--json")
    assert code == 0, err
    latest = json.loads(cli(capsys, "runs", "--dir", demo, "--json")[1])[0]
    assert json.loads(out)["run"]["run_id"] == latest["run_id"]
    code, _out, err = cli(capsys, "trajectory", "no-such-agent", "--dir", demo)
    assert code == 1 and "not a run id, trace id, prefix or run name" in err


def test_the_runs_table_shows_ids_that_resolve(demo, capsys):
    code, out, _err = cli(capsys, "runs", "--dir", demo)
    assert code == 0
    runs = json.loads(cli(capsys, "runs", "--dir", demo, "--json")[1])
    for run in runs:
        shown = next(w for w in out.split() if run["run_id"].startswith(w) and len(w) >= 8)
        assert cli(capsys, "trajectory", shown, "--dir", demo, "--json")[0] == 0
    assert "$0.000" in out and "e-0" not in out


def test_sql_json_writes_maps_as_objects(demo, capsys):
    code, out, err = cli(capsys, "sql", "SELECT attributes, resource_attributes, events FROM spans "
                         "WHERE operation = 'chat' LIMIT 1", "--dir", demo, "--format", "json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert isinstance(row["attributes"], dict) and isinstance(row["resource_attributes"], dict)
    assert "service.name" in row["resource_attributes"]


def test_no_doubled_words_in_the_full_trajectory(demo, capsys):
    """Span names repeat the operation the step's type already says ("retrieval retrieval help-center")."""
    import re
    from types import SimpleNamespace

    code, out, err = cli(capsys, "runs", "--dir", demo, "--json")
    for run in json.loads(out):
        code, text, err = cli(capsys, "trajectory", run["run_id"], "--full", "--dir", demo)
        assert code == 0, err
        doubled = re.findall(r"\b(\w+) \1\b", text)
        assert not doubled, doubled
    from agentotel.cli import _who
    agent = SimpleNamespace(type="agent", name="invoke_agent triage", tool_name=None, model=None)
    assert _who(agent) == "triage"
    assert _who(SimpleNamespace(type="agent", name="triage", tool_name=None, model=None)) == "triage"
