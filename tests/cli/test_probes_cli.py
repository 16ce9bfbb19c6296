"""Stored text is shown, never obeyed: run names, tool names and ids come from whoever sent the spans.

A run name carrying an escape sequence would recolour, hide or rewrite what the analyst reads in the
terminal; one carrying rich markup ("[bold red]…[/]", "[link=…]") would be styled and lose its brackets.
"""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentotel import open as agentotel_open
from agentotel.cli import Output, main

ROOT = Path(__file__).resolve().parents[2]
ESC = "\x1b"
HIDDEN = "ok\x1b[8m hidden from view\x1b[0m\x07\r"  # concealed text, a bell, a carriage return
MARKUP = "[b]alarm[/b][link=x]y[/link]:warning:"

RECORD = """
import sys, agentotel
agentotel.instrument(directory=sys.argv[1])
for i, name in enumerate(sys.argv[2:]):
    @agentotel.tool(name=name)
    def tool(x):
        return x
    with agentotel.run(name, run_id=f"run-{i}", user=name) as run:
        tool(1)
assert agentotel.flush()
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hostile") / "traces"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")])}
    proc = subprocess.run([sys.executable, "-c", RECORD, str(directory), HIDDEN, MARKUP],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return directory


def cli(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.mark.parametrize("command", [("runs",), ("trajectory", "run-0"), ("trajectory", "run-0", "--full"),
                                     ("diff", "run-0", "run-1")])
def test_control_characters_in_stored_text_never_reach_the_terminal(hostile, capsys, command):
    out = cli(capsys, *command, "--dir", hostile)
    assert ESC not in out and "\x07" not in out and "\r" not in out
    assert "␛[8m hidden from view␛[0m␇␍" in out  # shown as the characters' pictures, one cell each


def test_a_payload_shown_with_syntax_colours_is_checked_too():
    from rich.syntax import Syntax

    buffer = io.StringIO()
    Output(False, buffer).console.print(Syntax('{"x": "a\x1b]0;owned\x07b\x9b"}', "json"))
    out = buffer.getvalue()
    assert not set(out) & {ESC, "\x07", "\x9b"}  # an OSC that retitles the window, and a C1 escape
    assert '"a␛]0;owned' in out


@pytest.mark.parametrize("command", [("runs",), ("trajectory", "run-1"), ("diff", "run-0", "run-1")])
def test_markup_in_stored_text_is_shown_as_written(hostile, capsys, command):
    out = cli(capsys, *command, "--dir", hostile)
    assert MARKUP in " ".join(out.split())


def test_dates_at_the_ends_of_the_calendar_are_an_answer_or_a_usage_error(hostile, capsys):
    assert len(json.loads(cli(capsys, "runs", "--until", "9999-12-31", "--json", "--dir", hostile))) == 2
    with pytest.raises(SystemExit) as exit:
        main(["runs", "--since", "99999999d", "--dir", str(hostile)])
    assert exit.value.code == 2 and "'99999999d' reaches back before the year 1" in capsys.readouterr().err


def test_half_a_character_in_a_result_reaches_the_terminal_as_a_replacement(tmp_path):
    # Before: UnicodeEncodeError out of the console (a payload's "\ud83d" escape parsed into a lone surrogate).
    script = RECORD.replace("return x", 'return "cut in an emoji: \\ud83d"')
    directory = tmp_path / "traces"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "collector")]), "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-c", script, str(directory), "halves"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for args in (["trajectory", "run-0", "--full"], ["trajectory", "run-0", "--json"], ["diff", "run-0", "run-0"]):
        shown = subprocess.run([sys.executable, "-m", "agentotel.cli", *args, "--dir", str(directory)], capture_output=True,
                               env={**env, "PYTHONIOENCODING": "utf-8"}, timeout=120)
        assert shown.returncode == 0, shown.stderr.decode()
        if args[-1] == "--full":
            assert "cut in an emoji: \ufffd" in shown.stdout.decode("utf-8")


def _otlp_chats(run_id: str, conversations: list[list[dict]]) -> dict:
    """One OTLP/JSON export request: a run's root and a model call per conversation, each answering `out`."""
    from agentotel import semconv

    def attrs(**values):
        return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]

    trace, root = "1af7651916cd43dd8448eb211c80319c", "1000000000000001"
    spans = [{"traceId": trace, "spanId": root, "name": "invoke_agent a", "startTimeUnixNano": "1764000000000000000",
              "endTimeUnixNano": "1764000009000000000",
              "attributes": attrs(**{semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.AGENTOTEL_RUN_ID: run_id})}]
    for i, messages in enumerate(conversations):
        spans.append({"traceId": trace, "spanId": f"20000000000000{i:02d}", "parentSpanId": root, "name": "chat m",
                      "startTimeUnixNano": str(1764000001000000000 + i * 10**9),
                      "endTimeUnixNano": str(1764000001500000000 + i * 10**9),
                      "attributes": attrs(**{semconv.GEN_AI_OPERATION_NAME: "chat", semconv.GEN_AI_REQUEST_MODEL: "m",
                                             semconv.AGENTOTEL_RUN_ID: run_id,
                                             semconv.GEN_AI_INPUT_MESSAGES: json.dumps(messages),
                                             semconv.GEN_AI_OUTPUT_MESSAGES: json.dumps([_said("assistant", "out")])})})
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "p"}, "spans": spans}]}]}


def _said(role: str, text: str) -> dict:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def test_half_a_character_in_a_stored_conversation_is_read_as_a_replacement(tmp_path, capsys):
    # The second call's input is stored as a continuation of the first's conversation and parsed by the
    # store's own reader (store/messages.py), not the payload reader: before, its lone surrogate reached
    # the trajectory (UnicodeEncodeError on the way to a terminal, a page or a file).
    first = [_said("system", "cut \ud83d"), _said("user", "hi \udc00 there")]
    source = tmp_path / "chats.json"
    source.write_text(json.dumps(_otlp_chats("run-halves", [first, first + [_said("assistant", "\ud83d"), _said("user", "go")]])))
    directory = tmp_path / "traces"
    cli(capsys, "import", source, "--dir", directory)
    steps = agentotel_open(directory).trajectory("run-halves").to_dict()["steps"]
    assert [m["parts"][0]["content"] for m in steps[-1]["input"]] == ["cut \ufffd", "hi \ufffd there", "\ufffd", "go"]
    json.dumps(steps, ensure_ascii=False).encode("utf-8")  # raised UnicodeEncodeError before
