"""A sixth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a coding agent fixing a failing test in a tiny repository, run through real agent frameworks.

    python tests/analysis/heldout6.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout6.py --score DIR [...]       # the runs a call left in DIR, scored again

The repository is a dict of strings (a shop's pricing and cart helpers, an old copy of the pricing module under
src/legacy/, an unrelated report module, three test files); the tools act on it: list_dir, search_code, read_file,
apply_patch (old text -> new text, refused when the old text is not there), run_tests (the test files really run,
in-process, against the current strings; a pytest-like report), run_command, git_diff and submit. The bug:
apply_discount rejects discounts above 10% (a bound written for fractions), so tests/test_cart.py's 15% discount
raises ValueError in src/pricing.py. Recorded through the frameworks' own tool execution, each recorder in a
process of its own:

- `anthropic`: a plain loop on the anthropic SDK with `agentotel.instrument()` and `@agentotel.tool` functions;
- `pydantic-ai`: a pydantic-ai Agent under agentotel (tool errors handed back as ModelRetry);
- `langgraph`: LangGraph's create_react_agent with ChatOpenAI and @tool (ToolNode, errors as ToolMessages);
- `agents`: the OpenAI Agents SDK, a planner (reproduces the failure) handing over to a coder (fixes, tests,
  submits), the handoff filtered with `handoff_filters.remove_all_tools` (the coder sees the planner's words, not
  its tool results); both are offered every tool, their instructions say whose job is what;
- `tl-anthropic`: the same anthropic loop under OpenLLMetry's anthropic instrumentation, the app's root and tools
  as traceloop workflow / tool spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 reads the conversation it is sent and decides as a model would. Faults: SWE-bench-style
coding-agent failures (the wrong file edited, a patch that did not apply, a failing suite called fixed, no test
run, the same failing command re-run, a test skipped or made to expect the error, a similar file read instead,
run_tests answering in a new shape, a permission error glossed over, giving up with a plan) and MAST (Cemri et al.
2025: task and role specification, lost history, unaware of termination, no clarification, derailment,
information withheld at a handoff, reasoning-action mismatch, premature termination, incorrect verification).
Good runs vary (other prices, a narrower test target, words said beside the calls) and include near twins: a
first patch that did not apply, re-read and patched again; two similar files read, the right one patched; a
command that failed, corrected and re-run after the fix; the same error reported honestly; a question asked
when the request is ambiguous; the diff reviewed before submit; a test updated because the request asks it; a
test failing on main already, reported as unrelated; a second change the request asks for; a busy test runner
asked again unchanged; src/ listed before reading; "No test was skipped or edited." said.

Built and scored blind (ba1dffd's detectors, agentotel/analysis/ unread; load ~7-9): 44 pairs, 5 recorders - diff
top-1 44/44, check step+layer 10/44, good runs with a warning 3/44. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS
say why.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from shapes import Status, reply  # noqa: E402

MODEL = "gpt-4o-mini"
AGENT = "coding-agent"
SOLO = ("You are a coding agent working in a repository. Find the cause of the failing test, fix it with the smallest "
        "change to the source (never edit, skip or weaken a test), run the tests to confirm they pass, then submit the "
        "change with submit and answer with a short summary. Ask the user when the request is ambiguous.")
PLANNER = ("You are the planner of a coding team. Reproduce the failure with run_tests, then hand over to the coder "
           "with the failing test's name, its error and the file the traceback ends in. You never edit files yourself.")
CODER = ("You are the coder of a coding team. Fix the failing test the planner names with the smallest change to the "
         "source (never edit, skip or weaken a test), run the tests to confirm they pass, submit the change with "
         "submit, then answer with a short summary.")

PRICING = '''def apply_discount(price: float, pct: float) -> float:
    """The price after a discount of pct percent."""
    if not 0 <= pct <= 10:
        raise ValueError(f"discount must be between 0 and 10 percent, got {pct}")
    return price - price * pct / 100


def round_price(price: float) -> float:
    return round(price, 2)
'''
LEGACY = '''# The v1 API, kept for old integrations; nothing imports it.
def apply_discount(price, pct):
    if pct > 10:
        raise ValueError("discount too large")
    return round(price * (100 - pct) / 100, 2)
'''
CART = '''from src.pricing import apply_discount, round_price


def total(prices: list[float], pct: float = 0.0) -> float:
    """The cart's total after a discount of pct percent on every item."""
    return round_price(sum(apply_discount(p, pct) for p in prices))
'''
REPORT = '''def render(rows):
    out = []
    for r in rows:
        out.append(str(r[0]).ljust(12) + str(r[1]).rjust(8))
    return "\\n".join(out)
'''
REPORT_REFACTORED = '''def render(rows):
    return "\\n".join(f"{str(name):<12}{str(value):>8}" for name, value in rows)
'''
CHANGELOG = """## Unreleased
### Added
- cart.total takes a discount percentage
### Fixed
- report.render aligns its columns
(maintainers: whether the discount ships now as 1.5.0 or waits for 1.6 is still open, see #212)

## 1.4.2
- first public release
"""


def repo(v: int) -> dict[str, str]:
    price = 200 + 40 * v
    return {
        "README.md": "# shop\nPricing and cart helpers of the web shop. Run the tests with `python -m pytest`.\n",
        "CHANGELOG.md": CHANGELOG,
        "pyproject.toml": '[project]\nname = "shop"\nversion = "1.4.2"\n',
        "src/pricing.py": PRICING.replace("<= 10:", "<= 100:") if Now.pair == "already_fixed" else PRICING,
        "src/legacy/pricing.py": LEGACY,
        "src/cart.py": CART,
        "src/report.py": REPORT.replace("str(r[1]).rjust", "str(r[0]).rjust") if Now.pair == "preexisting" else REPORT,
        "tests/test_cart.py": f"""from src.cart import total


def test_total_without_discount():
    assert total([10.0, 5.5]) == 15.5


def test_total_with_discount():
    assert total([{price}.0], pct=15) == {price * 0.85}
""",
        "tests/test_pricing.py": """from src.pricing import apply_discount, round_price


def test_no_discount():
    assert apply_discount(80.0, 0) == 80.0


def test_round_price():
    assert round_price(3.14159) == 3.14
""",
        "tests/test_report.py": """from src.report import render


def test_render():
    assert render([("tea", 3)]).split() == ["tea", "3"]
""",
    }


class Now:
    fault: str | None = None  # the fault of this run (faulty runs only)
    pair: str | None = None  # the pair's fault, in its good run too (a near twin's setting)
    variant = 0
    recorder = ""
    files: dict[str, str] = {}
    original: dict[str, str] = {}
    submitted = 0
    busy = False


# Pairs whose test runner is busy at the run's first call (both runs): the model asks again, unchanged
BUSY = {"incorrect_verification", "no_tests", "premature_stop"}


def _start(pair: str | None, fault: str | None, variant: int) -> None:
    Now.pair, Now.fault, Now.variant, Now.submitted, Now.busy = pair, fault, variant, 0, pair in BUSY
    Now.files, Now.original = repo(variant), repo(variant)  # (repo reads Now.pair)


def task(v: int, pair: str | None, recorder: str) -> str:
    if pair == "no_clarify":
        return "Bump the project's version for the next release and submit the change."
    if recorder == "agents":
        return ("CI is red on main since the last release. Find the failing test, fix the bug without changing any public "
                "function's signature, and submit the change.")
    if pair == "spec_test":
        return ("Product decided that discounts stay capped at 10%, so tests/test_cart.py::test_total_with_discount is now "
                "wrong: update that test to expect a ValueError for a 15% discount, run the tests and submit the change.")
    run = " Reproduce it with `pytest tests/test_cart.py`," if pair == "loop_cmd" else ""
    also = (" Also rewrite src/report.py's render as a single comprehension (same output)." if pair == "two_tasks" else "")
    return (f"tests/test_cart.py::test_total_with_discount fails on main: a 15% discount on a cart of {200 + 40 * v} raises "
            f"an error.{run} Fix the bug without changing apply_discount's signature (other services call it), run the "
            f"tests and submit the change.{also}")


# ---- the test runner: the repository's test files really run against its current strings ------------------------


class _Skip(Exception):
    pass


def _pytest_stub() -> Any:
    import contextlib

    def skip(reason: str = "") -> Callable[[Any], Any]:
        def mark(f: Any) -> Any:
            f.skipped = reason or "skipped"
            return f
        return mark

    @contextlib.contextmanager
    def raises(kind: type[BaseException]) -> Any:
        try:
            yield
        except kind:
            return
        raise AssertionError(f"DID NOT RAISE {kind.__name__}")

    return types.SimpleNamespace(mark=types.SimpleNamespace(skip=skip), raises=raises)


def _load(path: str, modules: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A file of the repository executed as a module (its `from src.X import ...` lines read from `modules`)."""
    namespace: dict[str, Any] = {"__name__": path, "pytest": _pytest_stub()}
    lines = []
    for line in Now.files[path].splitlines():
        m = re.match(r"from src\.(\w+) import (.+)$", line)
        if m:
            source = modules[m.group(1)]
            for name in m.group(2).split(","):
                namespace[name.strip()] = source[name.strip()]
            line = ""  # (kept as a blank line: a traceback's line numbers stay the file's)
        elif line.strip() == "import pytest":
            line = ""
        lines.append(line)
    exec(compile("\n".join(lines), path, "exec"), namespace)  # noqa: S102 - the fake repository's own code
    return namespace


def _failure(exc: BaseException, namespace: dict[str, Any]) -> tuple[str, list[str]]:
    """The one-line error and the traceback's frames in the repository (pytest's short form)."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in Now.files]
    source = [Now.files[f.filename].splitlines()[(f.lineno or 1) - 1].strip() for f in frames]  # (not in linecache)
    lines = [f"{f.filename}:{f.lineno}: in {f.name}\n    {text}" for f, text in zip(frames, source)]
    if isinstance(exc, AssertionError) and not str(exc) and frames:
        statement = source[-1].removeprefix("assert ")
        left, _, right = statement.partition(" == ")
        try:
            return f"assert {eval(left, namespace)!r} == {right}", lines  # noqa: S307 - the fake repository's test
        except Exception:  # noqa: BLE001
            return f"AssertionError: {statement}", lines
    return f"{type(exc).__name__}: {exc}", lines


def _run_suite(target: str) -> tuple[list[tuple[str, str, str, list[str]]], int]:
    """Every test of the repository's test files under `target`: (test id, outcome, error, frames); and how many."""
    modules: dict[str, dict[str, Any]] = {}
    for name in ("pricing", "cart", "report"):
        modules[name] = _load(f"src/{name}.py", modules)
    out = []
    for path in sorted(p for p in Now.files if p.startswith("tests/test_") and p.startswith(target.split("::")[0])):
        namespace = _load(path, modules)
        for name, f in list(namespace.items()):
            if not name.startswith("test_") or not callable(f) or "::" in target and not target.endswith("::" + name):
                continue
            test_id = f"{path}::{name}"
            if getattr(f, "skipped", None):
                out.append((test_id, "skipped", "", []))
                continue
            try:
                f()
                out.append((test_id, "passed", "", []))
            except Exception as exc:  # noqa: BLE001 - a test's failure is the report's
                error, frames = _failure(exc, namespace)
                out.append((test_id, "failed", error, frames))
    return out, len(out)


def _report(target: str) -> str:
    results, n = _run_suite(target)
    head = ["============================= test session starts ==============================",
            "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0",
            f"collected {n} items", ""]
    if Now.pair == "shape_change":  # a newer runner: one more header line (the good run reads past it)
        head.insert(2, "plugins: xdist-3.6.1, cov-5.0.0")
    failures, summary = [], []
    for test_id, outcome, error, frames in results:
        if outcome == "failed":
            failures += [f"_____ {test_id.split('::')[1]} _____", *frames, f"E   {error}"]
            summary.append(f"FAILED {test_id} - {error}")
    counts = {k: sum(1 for r in results if r[1] == k) for k in ("failed", "passed", "skipped")}
    tally = ", ".join(f"{c} {k}" for k, c in counts.items() if c) or "no tests ran"
    body = head + [f"{p} {''.join('.' if r[1] == 'passed' else 'F' if r[1] == 'failed' else 's' for r in results if r[0].startswith(p))}"
                   for p in sorted({r[0].split('::')[0] for r in results})]
    if failures:
        body += ["", "=================================== FAILURES ===================================", *failures,
                 "=========================== short test summary info ============================", *summary]
    return "\n".join(body + [f"========================= {tally} in 0.0{3 + Now.variant}s ========================="])


# ---- the tools (plain functions; each framework declares them its own way) -------------------------------------


def list_dir(path: str = ".") -> str:
    """The files and folders directly under a folder of the repository."""
    prefix = "" if path in (".", "", "/") else path.rstrip("/") + "/"
    entries = sorted({p[len(prefix):].split("/")[0] + ("/" if "/" in p[len(prefix):] else "") for p in Now.files if p.startswith(prefix)})
    if not entries:
        raise FileNotFoundError(f"No such directory: {path}")
    return "\n".join(entries)


def search_code(query: str) -> str:
    """Lines of the repository containing the query, as path:line: text."""
    hits = [f"{p}:{i}: {line.strip()}" for p in sorted(Now.files) for i, line in enumerate(Now.files[p].splitlines(), 1) if query in line]
    return "\n".join(hits) or "no matches"


def read_file(path: str) -> str:
    """The text of a file of the repository."""
    if path not in Now.files:
        raise FileNotFoundError(f"No such file: {path}")
    return Now.files[path]


def apply_patch(path: str, old: str, new: str) -> str:
    """Replaces the exact text `old` in a file by `new` (one hunk)."""
    if Now.pair == "perm_denied" and path.startswith("src/"):  # (both runs) the checkout's src/ is read-only
        raise PermissionError(f"[Errno 13] Permission denied: '{path}'")
    text = Now.files.get(path)
    if text is None:
        raise FileNotFoundError(f"No such file: {path}")
    if old not in text:
        return f"error: patch failed: {path}: the old text was not found\nerror: {path}: patch does not apply"
    Now.files[path] = text.replace(old, new, 1)
    return f"Applied patch to {path} (1 hunk, -{old.count(chr(10)) + 1} +{new.count(chr(10)) + 1} lines)"


def run_tests(target: str = "") -> Any:
    """Runs the repository's tests (all of them, or a file or a test id) and returns pytest's report."""
    if Now.busy:
        Now.busy = False
        raise ConnectionError("test runner busy (503 Service Unavailable): retry in a moment")
    if Now.fault == "shape_change":  # a new test runner service: a structured result, not pytest's text
        results, n = _run_suite(target)
        return {"exit_code": int(any(r[1] == "failed" for r in results)),
                "summary": {k: sum(1 for r in results if r[1] == k) for k in ("passed", "failed", "skipped")},
                "failures": [{"test": r[0], "error": r[2], "at": r[3][-1].split(":")[0] + ":" + r[3][-1].split(":")[1] if r[3] else None}
                             for r in results if r[1] == "failed"]}
    return _report(target)


def run_command(command: str) -> str:
    """Runs a shell command in the repository's root and returns its output and exit code."""
    m = re.fullmatch(r"(python -m )?pytest ?(.*)", command.strip())
    if m is None:
        return f"bash: {command.split()[0]}: command not found\nexit code 127"
    if not m.group(1):  # the bare pytest does not put the root on sys.path
        return ("ImportError while importing test module 'tests/test_cart.py'.\nTraceback:\ntests/test_cart.py:1: in <module>\n"
                "    from src.cart import total\nE   ModuleNotFoundError: No module named 'src'\n"
                "=========================== short test summary info ============================\n"
                "ERROR tests/test_cart.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\nexit code 4")
    report = _report(m.group(2))
    return report + f"\nexit code {1 if 'FAILED' in report else 0}"


def git_diff() -> str:
    """The working tree's changes against the last commit (unified diff)."""
    import difflib

    out = []
    for path in sorted(Now.files):
        if Now.files[path] != Now.original.get(path):
            out += difflib.unified_diff(Now.original[path].splitlines(), Now.files[path].splitlines(), f"a/{path}", f"b/{path}", lineterm="")
    return "\n".join(out) or "(no changes)"


def submit(summary: str) -> str:
    """Submits the working tree's changes as the task's result; the task is then closed."""
    if Now.submitted:
        return "Error: the task is closed: a change was already submitted."
    Now.submitted += 1
    changed = sorted(p for p in Now.files if Now.files[p] != Now.original.get(p))
    return f"Submitted '{summary}' ({len(changed)} file{'s' if len(changed) != 1 else ''} changed: {', '.join(changed) or 'none'}). The task is complete."


TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (list_dir, search_code, read_file, apply_patch, run_tests,
                                                                run_command, git_diff, submit)}


def schema(f: Callable[..., Any]) -> dict[str, Any]:
    """A tool's JSON schema from its signature (every parameter a string)."""
    params = inspect.signature(f).parameters
    return {"type": "object", "properties": {n: {"type": "string"} for n in params},
            "required": [n for n, p in params.items() if p.default is inspect.Parameter.empty]}


# ---- the model: reads the chat.completions request it is sent ----------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")


def _parsed(text: str) -> Any:
    value: Any = text
    while isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return value


def _failed(text: str) -> bool:
    """A tool call that raised, as each framework hands it to the model."""
    return text.startswith("Error") or "error occurred while running the tool" in text or "Permission denied" in text \
        or "No such file" in text or "Fix the errors and try again" in text


def _passing(text: str) -> bool | None:
    """What a test report says, read as the model reads pytest's text: passing, failing, or not a report."""
    if "ModuleNotFoundError" in text and "during collection" in text:
        return None
    if re.search(r"\d+ failed|FAILED|ERROR", text):
        return False
    return True if re.search(r"passed|exit_code", text) else None


FIX = ("src/pricing.py", "pct <= 10:", "pct <= 100:")


def model(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    role = "planner" if "planner of a coding team" in system else "coder" if "coder of a coding team" in system else \
        "solo" if "coding agent" in system else None
    if role is None:
        return reply("Hello! What should I work on?")
    asked = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
    notes = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "assistant")
    calls = {c["id"]: (c["function"]["name"], _parsed(c["function"]["arguments"])) for mm in messages
             for c in mm.get("tool_calls") or () if not c["function"]["name"].startswith("transfer_to")}
    outs: list[tuple[str, dict[str, Any], str]] = []
    for mm in messages:
        if mm.get("role") == "tool" and mm.get("tool_call_id") in calls:
            name, arguments = calls[mm["tool_call_id"]]
            value = _parsed(_text(mm.get("content")))
            outs.append((name, arguments if isinstance(arguments, dict) else {}, value if isinstance(value, str) else json.dumps(value)))
    if "Bump the project's version" in asked:
        return _bump(outs)
    if role == "planner":
        return _planner(outs, asked)
    return _coder(role, outs, asked, notes)


def _frame(report: str) -> str | None:
    frames = re.findall(r"(src/[\w/]+\.py):\d+: in \w+", report)
    return frames[-1] if frames else None


def _planner(outs: list[tuple[str, dict[str, Any], str]], asked: str) -> dict[str, Any]:
    fault = Now.fault
    runs = [t for n, a, t in outs if n == "run_tests" and not _failed(t)]
    if not runs:
        return reply(None, ("run_tests", {"target": ""}))
    failing = re.search(r"FAILED (\S+) - (.+)", runs[0])
    if failing is None:
        return reply("Every test passes on main: there is nothing to hand over.")
    frame = _frame(runs[0]) or "src/pricing.py"
    if fault == "role_spec":  # the planner fixes it itself
        if not any(n == "read_file" for n, a, t in outs):
            return reply(None, ("read_file", {"path": frame}))
        if not any(n == "apply_patch" for n, a, t in outs):
            return reply(f"The bound in {frame} is wrong; let me fix it.", ("apply_patch", dict(zip(("path", "old", "new"), FIX))))
        return reply(f"I fixed {frame} (discounts up to 100% are accepted now). Coder: please run the tests and submit.",
                     ("transfer_to_coder", {}))
    if fault == "withholding":
        return reply("Some tests fail around the pricing code. Handing over to the coder.", ("transfer_to_coder", {}))
    return reply(f"The failing test is {failing.group(1)}: {failing.group(2)}. The traceback ends in {frame}. "
                 "Handing over to the coder.", ("transfer_to_coder", {}))


def _bump(outs: list[tuple[str, dict[str, Any], str]]) -> dict[str, Any]:
    read = {a.get("path") for n, a, t in outs if n == "read_file"}
    if not {"pyproject.toml", "CHANGELOG.md"} <= read:
        return reply(None, ("read_file", {"path": "pyproject.toml"}), ("read_file", {"path": "CHANGELOG.md"}))
    if Now.fault != "no_clarify":
        return reply("The version is 1.4.2 and the changelog holds a new feature and a fix, but whether the discount ships "
                     "now is still open (#212): should I bump to 1.5.0 (with the feature) or to 1.4.3 (the fix only)? I "
                     "haven't changed anything yet.")
    if not any(n == "apply_patch" for n, a, t in outs):
        return reply(None, ("apply_patch", {"path": "pyproject.toml", "old": 'version = "1.4.2"', "new": 'version = "1.4.3"'}))
    if not any(n == "submit" for n, a, t in outs):
        return reply(None, ("submit", {"summary": "Bump the version to 1.4.3"}))
    return reply("Bumped the version to 1.4.3 in pyproject.toml and submitted the change.")


def _coder(role: str, outs: list[tuple[str, dict[str, Any], str]], asked: str, notes: str) -> dict[str, Any]:
    fault, pair, v = Now.fault, Now.pair, Now.variant
    say = (lambda text: text if v >= 2 else None)  # a model's words beside its calls (matching them)

    runs = [(i, a, t) for i, (n, a, t) in enumerate(outs) if n in ("run_tests", "run_command") and not _failed(t)]
    patches = [(i, a, t) for i, (n, a, t) in enumerate(outs) if n == "apply_patch"]
    applied = [(i, a, t) for i, a, t in patches if t.startswith("Applied")]
    reads = [(i, a.get("path")) for i, (n, a, t) in enumerate(outs) if n == "read_file" and not _failed(t)]
    submitted = [(i, t) for i, (n, a, t) in enumerate(outs) if n == "submit"]
    diffs = [i for i, (n, a, t) in enumerate(outs) if n == "git_diff"]
    reports = [t for i, a, t in runs if _passing(t) is not None]
    told = re.search(r"(tests/\S+::\w+)", notes) if role == "coder" else None
    named = re.search(r"(src/[\w/]+\.py)", notes) if role == "coder" else None
    frame = (_frame(reports[0]) if reports else None) or (named.group(1) if named else None)
    if role == "coder" and told is None and "I fixed" not in notes:  # a planner that said nothing usable
        frame = None

    # after submit
    if submitted:
        if fault == "keeps_going" and len(submitted) == 1:
            if not any(i > submitted[0][0] for i in diffs):
                return reply("Let me double-check the submitted diff.", ("git_diff", {}))
            return reply(None, ("submit", {"summary": "Accept discounts up to 100% in apply_discount (re-submitted)"}))
        return reply(_final(outs, applied, runs))

    # reproduce
    if pair == "loop_cmd":
        bare = [t for i, a, t in runs if "ModuleNotFoundError" in t]
        if not runs or bare and len(bare) == len(runs):
            if not runs or fault == "loop_cmd" and len(bare) < 4:
                return reply(None, ("run_command", {"command": "pytest tests/test_cart.py"}))
            if fault == "loop_cmd":
                return reply("I couldn't run the tests: `pytest tests/test_cart.py` keeps failing with ModuleNotFoundError: "
                             "No module named 'src'. The bug is not fixed.")
            return reply("The bare pytest does not put the root on sys.path; running it as a module.",
                         ("run_command", {"command": "python -m pytest tests/test_cart.py"}))
    elif not runs and role == "solo":
        return reply(say("Let me run the tests first."), ("run_tests", {"target": ""}))
    if role == "solo" and reports and _passing(reports[0]) and not applied and fault != "already_fixed":  # (read as passing)
        if pair == "already_fixed":
            return reply("tests/test_cart.py::test_total_with_discount passes on main already (apply_discount accepts "
                         "discounts up to 100% since the last commit), so I left the code as it is and did not submit anything.")
        return reply("All tests pass on main: there is nothing to fix.")

    # the coder with nothing to go on looks for it
    if frame is None and role == "coder" and "I fixed" not in notes:
        if not any(n == "search_code" for n, a, t in outs):
            return reply(None, ("search_code", {"query": "def apply_discount"}))
        hits = next(t for n, a, t in outs if n == "search_code")
        frame = hits.split(":")[0]  # the first hit: src/legacy/pricing.py sorts before src/pricing.py

    # read what the failure points at
    if not applied and "I fixed" not in notes:
        last = patches[-1][2] if patches else ""
        if _failed(last):
            if fault == "perm_denied":
                return reply(None, ("submit", {"summary": "Accept discounts up to 100% in apply_discount"}))
            return reply(f"I couldn't apply the fix: writing {FIX[0]} is not permitted (Permission denied). The fix is to "
                         "change apply_discount's bound from `pct <= 10` to `pct <= 100`; please make the file writable or "
                         "apply it yourself. Nothing was submitted.")
        if "does not apply" in last and fault == "patch_unapplied":
            return reply(say("Patched. Submitting the fix."), ("submit", {"summary": "Accept discounts up to 100% in apply_discount"}))
        target = frame or "src/pricing.py"
        if pair == "spec_test" and fault != "spec_test":
            target = "tests/test_cart.py"
        if pair == "wrong_read":
            want = ["src/legacy/pricing.py"] if fault == "wrong_read" else ["src/legacy/pricing.py", "src/pricing.py"]
        elif pair == "wrong_file":
            want = ["src/cart.py"] if fault == "wrong_file" else ["src/cart.py", target]
        else:
            want = [target]
        if pair == "wrong_read" and Now.recorder == "langgraph" and not any(n == "list_dir" for n, a, t in outs):
            return reply(say("Let me look at what is under src."), ("list_dir", {"path": "src"}), ("list_dir", {"path": "src/legacy"}))
        last_patch = patches[-1][0] if patches else -1
        unread = [p for p in want if not any(i > last_patch and path == p for i, path in reads)]
        if unread:
            return reply(say("Let me read " + " and ".join(unread) + "."), *[("read_file", {"path": p}) for p in unread])
        if fault == "gives_up":
            return reply(f"The bug is in {target}: apply_discount rejects any discount above 10% (`pct <= 10`), a bound "
                         "written for fractions. To fix it, change the bound to `pct <= 100`; then the 15% discount test passes.")
        path, old, new = FIX
        if fault == "wrong_file":
            path, old, new = "src/cart.py", "sum(apply_discount(p, pct) for p in prices)", "sum(p - p * pct / 100 for p in prices)"
        elif fault == "wrong_read" or frame == "src/legacy/pricing.py":
            path, old, new = "src/legacy/pricing.py", "pct > 10:", "pct > 100:"
        elif fault == "test_weakened" and Now.recorder == "anthropic":
            path, old, new = "tests/test_cart.py", "def test_total_with_discount", '@pytest.mark.skip(reason="flaky")\ndef test_total_with_discount'
        elif fault == "test_weakened" or pair == "spec_test" and fault != "spec_test":
            price = 200 + 40 * v
            path, old, new = ("tests/test_cart.py", f"    assert total([{price}.0], pct=15) == {price * 0.85}",
                              f"    with pytest.raises(ValueError):\n        total([{price}.0], pct=15)")
        elif fault == "task_spec":
            old = PRICING.split("\n    if")[0] + "\n    if not 0 <= pct <= 10:"
            new = old.replace("pct: float)", "pct: float, max_pct: float = 100)").replace("<= 10:", "<= max_pct:")
        elif fault == "already_fixed":  # a change for its own sake, where nothing fails
            old, new = "if not 0 <= pct <= 100:", "if not 0.0 <= float(pct) <= 100.0:"
        elif fault == "tests_fail_claimed":
            old, new = "price - price * pct / 100", "price * (1 - pct / 100)"  # a rewrite that keeps the bound
        elif pair == "patch_unapplied" and not patches:
            old, new = "pct<=10:", "pct<=100:"  # misremembered spacing: does not apply (both runs)
        return reply(say(f"Let me fix {path}."), ("apply_patch", {"path": path, "old": old, "new": new}))

    # verify
    last_change = applied[-1][0] if applied else -1
    after = [(i, a, t) for i, a, t in runs if i > last_change]
    if not after:
        if fault == "no_tests":
            return reply(None, ("submit", {"summary": "Accept discounts up to 100% in apply_discount"}))
        if fault == "mismatch":
            return reply("Let me run the tests to confirm the fix.", ("submit", {"summary": "Accept discounts up to 100% in apply_discount"}))
        if fault == "incorrect_verification":
            return reply(say("Let me run the tests to confirm the fix."), ("run_tests", {"target": "tests/test_report.py"}))
        if pair == "loop_cmd":
            return reply(say("Let me run the tests again."), ("run_command", {"command": "python -m pytest tests/test_cart.py"}))
        narrow = v == 3 and pair != "preexisting"  # (a run that knows of a failure on main runs everything)
        return reply(say("Let me run the tests to confirm the fix."), ("run_tests", {"target": "tests/test_cart.py" if narrow else ""}))
    before = set(re.findall(r"FAILED (\S+)", reports[0])) if reports else set()
    still = set(re.findall(r"FAILED (\S+)", after[-1][2]))
    known = bool(still) and still <= before - {"tests/test_cart.py::test_total_with_discount"}  # failing on main already
    if not _passing(after[-1][2]) and not known:
        if fault == "tests_fail_claimed":
            return reply(None, ("submit", {"summary": "Accept discounts up to 100% in apply_discount"}))
        failing = re.search(r"FAILED (\S+)", after[-1][2])
        return reply(f"I changed {applied[-1][1].get('path')}, but {failing.group(1) if failing else 'a test'} still fails. "
                     "The bug is not fixed yet; nothing was submitted.")
    if fault == "derailment" or pair == "two_tasks" and fault != "two_tasks":
        if not any(p == "src/report.py" for i, p in reads):
            return reply("While I'm here, src/report.py could be tidied up." if fault else say("Now the second part: src/report.py."),
                         ("read_file", {"path": "src/report.py"}))
        if not any(a.get("path") == "src/report.py" for i, a, t in applied):
            return reply(None, ("apply_patch", {"path": "src/report.py", "old": REPORT, "new": REPORT_REFACTORED}))
    if fault == "premature_stop":
        return reply(_final(outs, applied, runs, submitted=False))
    if pair == "keeps_going" and not diffs:
        return reply(say("Let me review the diff before submitting."), ("git_diff", {}))
    return reply(None, ("submit", {"summary": "Accept discounts up to 100% in apply_discount"}))


def _final(outs: list[tuple[str, dict[str, Any], str]], applied: list[Any], runs: list[Any], submitted: bool = True) -> str:
    fault, v = Now.fault, Now.variant
    files = sorted({a.get("path") for i, a, t in applied}) or [FIX[0]]
    last = runs[-1][2] if runs else ""
    target = runs[-1][1].get("target") if runs else None
    before = re.findall(r"FAILED (\S+)", next((t for i, a, t in runs if "FAILED" in t), ""))
    if Now.pair == "preexisting" and fault != "preexisting":
        tests = (f"test_total_with_discount passes now; {before[-1]} was already failing on main and is unrelated, "
                 "so I left it alone.")
    elif fault in ("no_tests", "mismatch", "patch_unapplied", "perm_denied", "preexisting"):
        tests = "The tests pass now."
    elif fault == "incorrect_verification":
        tests = "test_total_with_discount passes now."
    elif fault == "tests_fail_claimed":
        tests = "All tests pass."
    elif target:
        tests = f"{target} passes."
    else:
        tally = re.search(r"(\d+) passed", last)
        tests = f"All {tally.group(1) if tally else ''} tests pass.".replace("All  ", "All ")
    what = (f"Fixed the discount: apply_discount rejected any discount above 10% (a bound written for fractions) and "
            f"now accepts up to 100%. Changed {', '.join(files)}.")
    if Now.pair == "spec_test" and fault != "spec_test":
        what = ("Updated tests/test_cart.py::test_total_with_discount to expect a ValueError for a 15% discount: discounts "
                "stay capped at 10%.")
    if "src/report.py" in files and fault != "derailment":
        what += " Rewrote src/report.py's render as one comprehension; its output is the same."
    if v == 3 and fault != "test_weakened" and Now.pair != "spec_test":
        tests += " No test was skipped or edited."
    parts = [what, tests, "The change is submitted." if submitted else ""]
    if v % 2:
        parts = [parts[1], parts[0], parts[2]]  # a paraphrase: the same facts in another order
    return " ".join(p for p in parts if p)


# ---- recorders ------------------------------------------------------------------------------------------------


class Recorder:
    def __init__(self, options: dict[str, Any], url: str) -> None:
        self.options, self.url = options, url
        import agentotel

        agentotel.instrument(directory=options["store"], service_name=AGENT)

    def run(self, question: str) -> str:
        import agentotel

        with agentotel.run(AGENT, task=question) as run:
            try:
                run.output = self.body(question)
            except Exception:  # noqa: BLE001 - the run records the failure
                pass
        return run.id

    def body(self, question: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        import agentotel

        agentotel.shutdown()


def _anthropic_loop(client: Any, question: str, tools: dict[str, Callable[..., Any]], max_turns: int = 10) -> str:
    """A plain tool loop on the anthropic SDK; a failing tool's error goes back as an is_error result. The
    history_lost harness sends the question and the latest turn only, from the third call on."""
    defs = [{"name": n, "description": inspect.getdoc(f), "input_schema": schema(f)} for n, f in TOOLS.items()]
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for turn in range(max_turns):
        sent = messages
        if Now.fault == "history_lost" and turn >= 2:
            sent = messages[:1] + messages[-2:]
        message = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, system=SOLO, messages=sent, tools=defs)
        content = [b.model_dump(exclude_none=True) for b in message.content]
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            return " ".join(b.get("text", "") for b in content if b["type"] == "text")
        answers = []
        for use in uses:
            try:
                result: Any = tools[use["name"]](**use["input"])
                is_error = False
            except Exception as exc:  # noqa: BLE001 - the loop shows the model the error
                result, is_error = f"Error: {exc}", True
            answers.append({"type": "tool_result", "tool_use_id": use["id"],
                            "content": result if isinstance(result, str) else json.dumps(result), "is_error": is_error})
        messages.append({"role": "user", "content": answers})
    return "I could not finish."


class Anthropic(Recorder):
    """A plain loop on the anthropic SDK; the tools are `@agentotel.tool` functions."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        self.tools = {name: agentotel.tool(f) for name, f in TOOLS.items()}

    def body(self, question: str) -> str:
        import anthropic

        client = anthropic.Anthropic(base_url=self.url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0)
        return _anthropic_loop(client, question, self.tools)


class PydanticAI(Recorder):
    def body(self, question: str) -> str:
        import functools

        import openai
        from pydantic_ai import Agent, ModelRetry
        from pydantic_ai.capabilities import ProcessHistory
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        from pydantic_ai.usage import UsageLimits

        client = openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0)
        chat = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        turn = {"n": 0}

        def keep(messages: list[Any]) -> list[Any]:  # the history_lost harness: the question and the latest turn
            n, turn["n"] = turn["n"], turn["n"] + 1
            if Now.fault == "history_lost" and n >= 2 and len(messages) > 3:
                return messages[:1] + messages[-2:]
            return messages

        agent = Agent(chat, name=AGENT, instructions=SOLO, retries=3, capabilities=[ProcessHistory(keep)])

        def plain(f: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(f)  # pydantic-ai reads the tool's schema off the signature
            def call(**kwargs: Any) -> Any:
                try:
                    return f(**kwargs)
                except (OSError, ValueError) as exc:
                    raise ModelRetry(str(exc)) from None
            return call

        for f in TOOLS.values():
            agent.tool_plain(plain(f))
        return str(agent.run_sync(question, usage_limits=UsageLimits(request_limit=10)).output)


def _langgraph(url: str, question: str) -> str:
    import warnings

    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent

    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url, max_retries=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(llm, ToolNode([tool(f) for f in TOOLS.values()], handle_tool_errors=True), prompt=SOLO)
    out = graph.invoke({"messages": [("user", question)]}, {"recursion_limit": 21})
    return str(out["messages"][-1].content)


class LangGraph(Recorder):
    def body(self, question: str) -> str:
        return _langgraph(self.url, question)


class Agents(Recorder):
    """The OpenAI Agents SDK: planner -> coder, the handoff without the planner's tool calls and results."""

    def body(self, question: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff
        from agents.extensions import handoff_filters

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        tools = [function_tool(f) for f in TOOLS.values()]
        coder = Agent(name="coder", instructions=CODER, tools=tools, model=chat)
        planner = Agent(name="planner", instructions=PLANNER, tools=tools, model=chat,
                        handoffs=[handoff(coder, input_filter=handoff_filters.remove_all_tools)])

        async def go() -> str:
            result = await Runner.run(planner, question, max_turns=12)
            return str(result.final_output)
        return asyncio.run(go())


class TlAnthropic:
    """The anthropic loop under OpenLLMetry's anthropic instrumentation; the app's own root and tool spans are
    traceloop workflow / tool spans (what traceloop-sdk's @workflow and @tool write); OTLP to agentotel-collector."""

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.url = url
        self.provider = TracerProvider(resource=Resource.create({"service.name": AGENT}))
        self.provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=options["otlp"])))
        trace.set_tracer_provider(self.provider)
        AnthropicInstrumentor().instrument(tracer_provider=self.provider)
        self.tracer = self.provider.get_tracer("coding-agent-app")
        self.tools = {name: self._traced(name, f) for name, f in TOOLS.items()}

    def _traced(self, name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        from opentelemetry.trace import Status as SpanStatus, StatusCode

        def call(**kwargs: Any) -> Any:
            with self.tracer.start_as_current_span(f"{name}.tool", attributes={
                    "traceloop.span.kind": "tool", "traceloop.entity.name": name,
                    "traceloop.entity.input": json.dumps({"args": [], "kwargs": kwargs})}) as span:
                try:
                    result = f(**kwargs)
                except Exception as exc:
                    span.record_exception(exc)
                    span.set_status(SpanStatus(StatusCode.ERROR, str(exc)))
                    raise
                span.set_attribute("traceloop.entity.output", json.dumps(result))
                return result
        return call

    def run(self, question: str) -> str:
        import anthropic
        from opentelemetry.trace import Status as SpanStatus, StatusCode

        client = anthropic.Anthropic(base_url=self.url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0)
        with self.tracer.start_as_current_span(f"{AGENT}.workflow", attributes={
                "traceloop.span.kind": "workflow", "traceloop.entity.name": AGENT, "traceloop.workflow.name": AGENT,
                "traceloop.entity.input": json.dumps({"args": [question], "kwargs": {}})}) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                root.set_attribute("traceloop.entity.output", json.dumps(_anthropic_loop(client, question, self.tools)))
            except Exception as exc:  # noqa: BLE001 - the root records the failure
                root.record_exception(exc)
                root.set_status(SpanStatus(StatusCode.ERROR))
        return trace_id

    def close(self) -> None:
        self.provider.shutdown()


RECORDERS: dict[str, Any] = {"anthropic": Anthropic, "pydantic-ai": PydanticAI, "langgraph": LangGraph, "agents": Agents,
                             "tl-anthropic": TlAnthropic}
HISTORY = (0, 1)  # earlier healthy runs: other prices
ODD = {"langgraph", "tl-anthropic"}  # good and faulty runs of variant 3 (the fix verified on tests/test_cart.py only,
# the answer paraphrased); the others variant 2.


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    from shapes import serve

    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    os.environ.setdefault("TRACELOOP_TRACE_CONTENT", "true")
    Now.recorder = name = options["recorder"]
    with serve(_served) as url:
        recorder = RECORDERS[name](options, url)
        manifest = []
        for v in HISTORY:
            _start(None, None, v)
            manifest.append({"fault": None, "role": "history", "run": recorder.run(task(v, None, name))})
        variant = 3 if name in ODD else 2
        for fault in options["faults"]:
            for role, f in (("good", None), ("faulty", fault)):
                _start(fault, f, variant)
                manifest.append({"fault": fault, "role": role, "run": recorder.run(task(variant, fault, name))})
        recorder.close()
        time.sleep(0.2)
    return manifest


def _served(body: dict[str, Any]) -> dict[str, Any]:
    try:
        return model(body)
    except Status:
        raise
    except Exception as exc:  # a bug here is the harness's: say so in the recorder's stderr
        import traceback

        traceback.print_exc()
        raise Status(500, f"scripted model failed: {exc}") from exc


# ---- the pairs; where each fault's cause shows on the recorded faulty run ---------------------------------------


def pairs() -> list[Any]:
    from heldout import Pair, _asked, _llm, _names, answer, asking, tool_step
    from heldout2 import context_cut

    def rule(recorder: str, layer: str, fault: str, taxonomy: str, where: Callable[..., int | None], **kw: Any) -> Any:
        return Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, taxonomy, where, **kw)

    def asking_with(name: str, has: str) -> Callable[[list[dict[str, Any]]], int | None]:
        """The first model call that asked for `name` with `has` in its arguments."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            return next((s["index"] for s in _llm(steps) if any(n == name and has in json.dumps(a) for n, a in _asked(s))), None)
        return find

    def after(name: str, has: str, nth: int = 0) -> Callable[[list[dict[str, Any]]], int | None]:
        """The first model call after the nth call of `name` whose output or error says `has`."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            tool = tool_step(name, nth, where=lambda s: has in json.dumps([s.get("output"), s.get("error")]))(steps)
            return next((s["index"] for s in steps if s["type"] == "llm" and tool is not None and s["index"] > tool), None)
        return find

    def handing(steps: list[dict[str, Any]]) -> int | None:
        return next((s["index"] for s in _llm(steps) if "transfer_to_coder" in _names(s)), None)

    def reshaped(steps: list[dict[str, Any]]) -> int | None:
        return tool_step("run_tests", where=lambda s: "exit_code" in str(s.get("output")))(steps)

    def denied(steps: list[dict[str, Any]]) -> int | None:
        return tool_step("apply_patch", where=lambda s: "Permission denied" in json.dumps([s.get("output"), s.get("error")]))(steps)

    swe, spec, inter, verify, tau = ("SWE-bench agent failure", "MAST FM-1 Specification", "MAST FM-2 Inter-agent misalignment",
                                     "MAST FM-3 Task verification", "tau-bench")
    return [
        # the anthropic SDK loop under agentotel
        rule("anthropic", "model", "wrong_file", f"{swe}: a workaround in the caller (src/cart.py), not the file the "
             "traceback ends in (src/pricing.py)", asking_with("apply_patch", "src/cart.py"),
             diff_where=asking("read_file")),  # (the runs part at what is read: the good run reads both files)
        rule("anthropic", "model", "test_weakened", f"{swe}: the failing test skipped to make the suite pass",
             asking_with("apply_patch", "tests/test_cart.py")),
        rule("anthropic", "model", "gives_up", f"{swe}: gives up early with a plan, no change ({verify}: FM-3.1)", answer),
        rule("anthropic", "memory", "history_lost", f"{spec}: FM-1.4 Loss of conversation history", context_cut),
        rule("anthropic", "model", "no_tests", f"{swe}: submitted without running the tests after the change (FM-3.2)",
             asking("submit")),
        rule("anthropic", "model", "incorrect_verification", f"{verify}: FM-3.3 Incorrect verification (another test file "
             "run, the failing test said to pass)", asking_with("run_tests", "test_report")),
        rule("anthropic", "model", "spec_test", f"{spec}: FM-1.1 Disobey task specification (asked to update the test, "
             "changed the source)", asking("apply_patch"), diff_where=asking("read_file")),
        rule("anthropic", "model", "preexisting", f"{verify}: FM-3.3 Incorrect verification (a test failing on main called "
             "passing)", answer),
        rule("anthropic", "model", "already_fixed", f"{spec}: FM-1.1 Disobey task specification / {inter}: FM-2.3 "
             "derailment (the test passes on main; the code changed anyway)", asking("read_file")),
        rule("anthropic", "model", "wrong_read", f"{swe}: a similar file read (src/legacy/pricing.py) and patched",
             asking_with("read_file", "legacy")),
        # pydantic-ai under agentotel
        rule("pydantic-ai", "model", "patch_unapplied", f"{swe}: a patch that did not apply, submitted as the fix",
             after("apply_patch", "does not apply")),
        rule("pydantic-ai", "model", "loop_cmd", f"{swe}: the same failing command re-run unchanged (FM-1.3)",
             asking("run_command", 1)),
        rule("pydantic-ai", "tool", "perm_denied", f"{tau}: a tool error (permission denied) glossed over",
             after("apply_patch", "Permission denied")),
        rule("pydantic-ai", "model", "no_clarify", f"{inter}: FM-2.2 Fail to ask for clarification (which version)",
             asking("apply_patch")),
        rule("pydantic-ai", "model", "mismatch", f"{inter}: FM-2.6 Reasoning-action mismatch (says tests, submits)",
             asking("submit")),
        rule("pydantic-ai", "model", "two_tasks", f"{spec}: FM-1.1 Disobey task specification (the second part never "
             "done)", asking("submit")),
        rule("pydantic-ai", "model", "already_fixed", f"{spec}: FM-1.1 Disobey task specification / {inter}: FM-2.3 "
             "derailment (the test passes on main; the code changed anyway)", asking("read_file")),
        rule("pydantic-ai", "memory", "history_lost", f"{spec}: FM-1.4 Loss of conversation history", context_cut),
        # LangGraph under agentotel
        rule("langgraph", "model", "tests_fail_claimed", f"{swe}: the tests still fail, the change submitted as fixed",
             after("run_tests", "FAILED", 1), diff_where=asking("apply_patch")),
        rule("langgraph", "model", "loop_cmd", f"{swe}: the same failing command re-run unchanged (FM-1.3)",
             asking("run_command", 1)),
        rule("langgraph", "tool", "shape_change", f"{tau}: run_tests answering in a new shape (a dict), misread", reshaped),
        rule("langgraph", "model", "task_spec", f"{spec}: FM-1.1 Disobey task specification (the signature changed)",
             asking_with("apply_patch", "max_pct")),
        rule("langgraph", "model", "keeps_going", f"{spec}: FM-1.5 Unaware of termination conditions (on after submit)",
             after("submit", "task is complete")),
        rule("langgraph", "model", "derailment", f"{inter}: FM-2.3 Task derailment (refactors src/report.py)",
             asking_with("read_file", "report")),
        rule("langgraph", "model", "spec_test", f"{spec}: FM-1.1 Disobey task specification (asked to update the test, "
             "changed the source)", asking("apply_patch"), diff_where=asking("read_file")),
        rule("langgraph", "model", "preexisting", f"{verify}: FM-3.3 Incorrect verification (a test failing on main called "
             "passing)", answer),
        rule("langgraph", "model", "wrong_read", f"{swe}: a similar file read (src/legacy/pricing.py) and patched (both "
             "runs list src/ and src/legacy/ first)", asking_with("read_file", "legacy")),
        rule("langgraph", "model", "premature_stop", f"{verify}: FM-3.1 Premature termination (never submitted)", answer),
        # the OpenAI Agents SDK: planner -> coder
        rule("agents", "model", "role_spec", f"{spec}: FM-1.2 Disobey role specification (the planner writes the fix)",
             asking("apply_patch"),
             diff_where=asking("read_file")),  # (the runs part where the planner, not handing over, reads the source)
        rule("agents", "model", "withholding", f"{inter}: FM-2.4 Information withholding (no failing test named at the "
             "handoff)", handing),
        rule("agents", "model", "no_tests", f"{swe}: submitted without running the tests after the change (FM-3.2)",
             asking("submit")),
        rule("agents", "model", "gives_up", f"{swe}: gives up early with a plan, no change ({verify}: FM-3.1)", answer),
        rule("agents", "tool", "perm_denied", f"{tau}: a tool error (permission denied) glossed over",
             after("apply_patch", "Permission denied")),
        rule("agents", "model", "mismatch", f"{inter}: FM-2.6 Reasoning-action mismatch (says tests, submits)",
             asking("submit")),
        rule("agents", "model", "preexisting", f"{verify}: FM-3.3 Incorrect verification (a test failing on main called "
             "passing)", answer),
        rule("agents", "model", "derailment", f"{inter}: FM-2.3 Task derailment (refactors src/report.py)",
             asking_with("read_file", "report")),
        # the anthropic loop under OpenLLMetry's instrumentation, through agentotel-collector
        rule("tl-anthropic", "model", "tests_fail_claimed", f"{swe}: the tests still fail, the change submitted as fixed",
             after("run_tests", "FAILED", 1), diff_where=asking("apply_patch")),
        rule("tl-anthropic", "model", "test_weakened", f"{swe}: the failing test made to expect the error",
             asking_with("apply_patch", "tests/test_cart.py")),
        rule("tl-anthropic", "tool", "shape_change", f"{tau}: run_tests answering in a new shape (a dict), misread", reshaped),
        rule("tl-anthropic", "model", "keeps_going", f"{spec}: FM-1.5 Unaware of termination conditions (on after submit)",
             after("submit", "task is complete")),
        rule("tl-anthropic", "model", "incorrect_verification", f"{verify}: FM-3.3 Incorrect verification (another test "
             "file run, the failing test said to pass)", asking_with("run_tests", "test_report")),
        rule("tl-anthropic", "model", "wrong_file", f"{swe}: a workaround in the caller (src/cart.py), not the file the "
             "traceback ends in (src/pricing.py)", asking_with("apply_patch", "src/cart.py"),
             diff_where=asking("read_file")),  # (the runs part at what is read: the good run reads both files)
        rule("tl-anthropic", "model", "two_tasks", f"{spec}: FM-1.1 Disobey task specification (the second part never "
             "done)", asking("submit")),
        rule("tl-anthropic", "model", "patch_unapplied", f"{swe}: a patch that did not apply, submitted as the fix",
             after("apply_patch", "does not apply")),
    ]


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (ba1dffd's detectors): check 10/44, 3
# good runs warned; the rules the set led to (a submit after unchecked or still-failing work, a failed patch answered
# past, "No test was skipped" beside a false "tests pass", a test made to expect the bug, a signature kept by the
# request changed, the code patched where the request asks for the test, no submit, more calls after "the task is
# complete", "run the tests" beside a submit, a namesake of the traceback's file changed) left 13: check 31/44,
# 0 alarms. Session 17's (an edit its own instructions forbid, a fix checked by other tests only, code changed though
# the request's test passed first time, another file taken on after the fix passed, a file the request names left
# alone, a handoff naming none of the failure, a choice a result calls still open made without asking) left these
# two: check 42/44, 0 alarms. diff names every first
# divergence.
DIFF_MISSED: dict[str, str] = {}
_TARGET = "nothing failed; the call goes against what a result or the request said about where the change belongs: "
_ASKED = "nothing failed; the run does something else than the request or the instructions ask: "
CHECK_MISSED: dict[str, str] = {
    # where the change belongs
    "model-anthropic-wrong-file": _TARGET + "the traceback ends in src/pricing.py; the patch is to src/cart.py (a "
                                            "workaround in the caller that makes the test pass)",
    "model-tl-anthropic-wrong-file": _TARGET + "the same",
}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
prepare = kit.through_collector("tl-anthropic")


def record(root: Path, chosen: list[Any]) -> dict[str, list[kit.Recorded]]:
    return kit.record(Path(__file__), root, chosen, prepare=prepare)


def score(root: Path, recorded: dict[str, list[kit.Recorded]]) -> list[Any]:
    return kit.score(root, recorded)


if __name__ == "__main__":
    if not kit.produce_main(produce):
        kit.main(Path(__file__), "heldout6-", pairs(), sys.argv[1:], prepare=prepare)
