"""The `agentotel` command: runs, trajectories, diffs, environments and SQL over a trace store.

Thin on purpose: each command parses its arguments, calls the library (`agentotel.open`, the store,
the demo) and formats the answer — a table on a terminal, JSON with `--json`. A user mistake is one
line on stderr and exit status 1, never a traceback.

Other parts of agentotel add commands with `@command(...)` (see `_EXTENSIONS`).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import decimal
import importlib
import io
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

PROG = "agentotel"

# Modules that add their own commands through `command()` when they are present.
_EXTENSIONS = ("agentotel.cases.cli", "agentotel.view.cli")


class UserError(Exception):
    """A mistake in how the command was used; printed as one line, exit status 1."""


@dataclass
class _Command:
    name: str
    help: str
    example: str
    arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace, "Output"], int | None]
    store: bool = True  # takes --dir


_COMMANDS: dict[str, _Command] = {}


def command(name: str, *, help: str, example: str, store: bool = True,
            arguments: Callable[[argparse.ArgumentParser], None] = lambda p: None):
    """Register a subcommand: `handler(args, out)`. Every command gets --json (and --dir when `store`).

    `example` is shown under "Example:" in its --help (a test checks every command has one).
    """

    def register(handler: Callable[[argparse.Namespace, "Output"], int | None]):
        _COMMANDS[name] = _Command(name, help, example, arguments, handler, store)
        return handler

    return register


# -- output ---------------------------------------------------------------------------------------------
# Control characters in stored text (a run name, a tool's output: anyone who can send spans chose them) are
# shown as their Unicode pictures (ESC as ␛), one cell wide like the character they stand for, instead of
# reaching the terminal, which would obey them: recolour or hide text, move the cursor, retitle the window.
_PICTURES = {**{c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}, 0x7F: 0x2421,
             **{c: 0xFFFD for c in range(0x80, 0xA0)}}


def _console(**options: Any) -> Any:
    """A rich Console that prints stored text as text: no control characters, no emoji codes."""
    from rich.console import Console
    from rich.segment import Segment

    class _Console(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(text.translate(_PICTURES), **kwargs)

        def render(self, renderable: Any, options: Any = None) -> Iterator[Any]:
            # Renderables built from text without render_str (a payload's Syntax) are checked here.
            for segment in super().render(renderable, options):
                if not segment.control and segment.text.translate(_PICTURES) != segment.text:
                    segment = Segment(segment.text.translate(_PICTURES), segment.style)
                yield segment

    return _Console(emoji=False, highlight=False, **options)


class Output:
    """Where a command writes: rich tables on stdout (colour only on a terminal), notes on stderr."""

    def __init__(self, as_json: bool, stdout: Any = None, stderr: Any = None) -> None:
        self.json = as_json
        out, err = stdout or sys.stdout, stderr or sys.stderr
        tty = self.tty = _isatty(out)
        # Off a terminal: no colour, no cursor tricks, and a wide page so tables are not squeezed.
        self.console = _console(file=out, width=None if tty else 200, no_color=not tty, soft_wrap=not tty)
        self.errors = _console(file=err, stderr=True, no_color=not _isatty(err), soft_wrap=True)

    def emit_json(self, value: Any) -> None:
        self.console.file.write(json.dumps(value, indent=2, default=_json_default, ensure_ascii=False) + "\n")

    def warn(self, message: str) -> None:
        from rich.markup import escape

        self.errors.print(f"[yellow]warning:[/] {escape(message)}", markup=True, highlight=False)

    @contextlib.contextmanager
    def progress(self, label: str) -> Iterator[None]:
        """A spinner on stderr while something slow runs (only on a terminal; silent in pipes and CI)."""
        if not _isatty(self.errors.file):
            yield
            return
        with self.errors.status(label):
            yield


def _count(raw: str) -> int:
    """An argparse type: a whole number, 0 or more."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{raw} is negative: give 0 or more")
    return value


def _moment(raw: str) -> dt.datetime:
    """An argparse type: a date, an ISO timestamp (UTC unless it says otherwise), or an age like 90m, 24h, 7d."""
    text = raw.strip()
    match = re.fullmatch(r"(\d+)\s*([mhdw])", text)
    if match:
        unit = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[match.group(2)]
        try:
            return dt.datetime.now(dt.timezone.utc) - dt.timedelta(**{unit: int(match.group(1))})
        except OverflowError:
            raise argparse.ArgumentTypeError(f"{raw!r} reaches back before the year 1") from None
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a date (2026-05-01), a timestamp or an age (24h, 7d)") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def _until(raw: str) -> dt.datetime:
    """`_moment`, where a bare date means the end of that day (--until 2026-05-01 includes the 1st)."""
    value = _moment(raw)
    whole_day = re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw.strip()) and value.date() < dt.date.max  # 9999-12-31 has no next day
    return value + dt.timedelta(days=1) if whole_day else value


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _json_default(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):  # DuckDB's sum() of integers is a HUGEINT, i.e. a Decimal here
        return int(value) if value == value.to_integral_value() else float(value)
    return str(value)


def _table(*columns: str, title: str | None = None):
    from rich import box
    from rich.table import Table

    table = Table(*columns, title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    return table


def _ms(value: Any) -> str:
    if value is None:
        return ""
    value = float(value)
    return f"{value:.0f} ms" if value < 10_000 else f"{value / 1000:.1f} s"


def _cost(value: Any) -> str:
    """Dollars to three significant digits, never in exponent form: $1.25, $0.0123, $0.000258."""
    if value is None:
        return ""
    value = float(value)
    if value == 0 or not math.isfinite(value):
        return "$0" if value == 0 else f"${value}"
    sign, size = ("-" if value < 0 else ""), abs(value)
    if size >= 1:
        return f"{sign}${size:,.2f}"
    return f"{sign}${size:.{min(12, 2 - math.floor(math.log10(size)))}f}"


def _float(value: float) -> str:
    """A float as people write it: six significant digits, no exponent for everyday sizes, no float noise
    (0.00025830000000000004 is 0.0002583; 5.2e-05 is 0.000052)."""
    if value == 0 or not math.isfinite(value) or not 1e-9 <= abs(value) < 1e15:
        return repr(value)
    digits = max(0, 5 - math.floor(math.log10(abs(value))))
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _int(value: Any) -> str:
    return "" if value is None else f"{int(value):,}"


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, dt.datetime) else str(value or "")


def _status(value: str | None) -> str:
    colour = {"ok": "green", "error": "red", "running": "yellow"}.get(value or "", "")
    return f"[{colour}]{value}[/]" if colour else str(value or "")


def _prefixes(identifiers: Sequence[str | None], shortest: int = 8) -> dict[str, str]:
    """Each id's shortest prefix (at least `shortest` characters) that no other id of the list shares."""
    ids = sorted({i for i in identifiers if i})
    out = {}
    for k, identifier in enumerate(ids):
        n = shortest
        for other in (ids[k - 1] if k else None, ids[k + 1] if k + 1 < len(ids) else None):
            if other:
                common = next((j for j, (x, y) in enumerate(zip(identifier, other)) if x != y), min(len(identifier), len(other)))
                n = max(n, common + 1)
        out[identifier] = identifier[:n]
    return out


# -- opening the store -------------------------------------------------------------------------------------
def _open(args: argparse.Namespace, out: Output):
    from agentotel import query

    with out.progress("Reading the trace store…"), _store_warnings():
        traces = query.open(args.dir)
    for message in traces.warnings:
        out.warn(message)
    return traces


@contextlib.contextmanager
def _store_warnings() -> Iterator[None]:
    # The CLI prints the store's warnings itself, once, as plain lines.
    import warnings

    from agentotel.query import StoreWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StoreWarning)
        yield


# -- runs -----------------------------------------------------------------------------------------------
def _runs_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=_count, default=50, help="show at most this many runs, newest first (default 50; 0: all)")
    p.add_argument("--user", help="only runs started by this user")
    p.add_argument("--status", choices=("ok", "error", "running"), help="only runs that ended so (or are still running)")
    p.add_argument("--agent", help="only runs of this agent (the name given to agentotel.run, or gen_ai.agent.name)")
    p.add_argument("--since", type=_moment, metavar="WHEN",
                   help="only runs started at or after WHEN: a date (2026-05-01), a timestamp, or an age (90m, 24h, 7d)")
    p.add_argument("--until", type=_until, metavar="WHEN", help="only runs started before WHEN (a date: before that day ends)")
    p.add_argument("--include-replays", action="store_true",
                   help="also list the regression cases' replays (kept apart, in <store>/replays)")


@command("runs", help="list runs, newest first", example="agentotel runs --limit 20 --user alice",
         arguments=_runs_arguments)
def _runs(args: argparse.Namespace, out: Output) -> None:
    from agentotel.query import pylist

    traces = _open(args, out)
    filters = {"user": args.user, "status": args.status, "agent": args.agent, "since": args.since, "until": args.until}
    rows = pylist(traces.runs(limit=args.limit or None, **filters).to_arrow_table())
    if args.include_replays:
        rows = _with_replays(rows, traces.directory, args)
    if out.json:
        out.emit_json(rows)
        return
    # A run with sub-agents shows its own cost and, labelled, the cost with its sub-agents (as `trajectory` does).
    nested = any((r["total_input_tokens"], r["total_cost_usd"]) != (r["input_tokens"], r["cost_usd"]) for r in rows)
    columns = ["run", "name", "user", "started", "duration", "status", "steps", "llm", "tools", "errors",
               "tokens in/out", "cost (own)"] + (["cost with sub-agents"] if nested else []) + ["models"]
    table = _table(*columns)
    short = _prefixes([r["run_id"] for r in rows])
    for r in rows:
        # Names, ids and models are stored text: escaped, so "[red]" in a run name is shown, not obeyed.
        cells = [_escape(short.get(r["run_id"], r["run_id"])), _escape(r["name"] or ""), _escape(r["user_id"] or ""),
                 _when(r["start_time"]), _ms(r["duration_ms"]),
                 _status(r["status"]), str(r["steps"]), str(r["model_calls"]), str(r["tool_calls"]),
                 str(r["errors"]) if r["errors"] else "", f"{_int(r['input_tokens'])}/{_int(r['output_tokens'])}",
                 _cost(r["cost_usd"])]
        if nested:
            cells.append(_cost(r["total_cost_usd"]) if r["total_cost_usd"] != r["cost_usd"] else "")
        table.add_row(*cells, _escape(", ".join(r["models"] or [])))
    if nested:
        table.caption = "steps, tokens and cost (own) are each run's own calls; cost with sub-agents adds the runs nested in it"
    out.console.print(table)
    if not rows:
        out.console.print("no runs match")


def _with_replays(rows: list[dict[str, Any]], directory: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The store's runs and its replays' (agentotel.cases records them in <store>/replays), newest first."""
    from agentotel import query

    try:
        replays = query.open(directory / "replays")
    except query.StoreNotFound:
        return rows
    more = query.pylist(replays.runs(user=args.user, status=args.status, agent=args.agent, since=args.since,
                                     until=args.until, limit=args.limit or None).to_arrow_table())
    merged = sorted(rows + more, key=lambda r: str(r["start_time"]), reverse=True)
    return merged[: args.limit] if args.limit else merged


# -- trajectory -----------------------------------------------------------------------------------------
def _trajectory_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="run id, trace id, an unambiguous prefix of either, or a run name (its latest run)")
    p.add_argument("--full", action="store_true", help="print every step's whole input and output")


@command("trajectory", help="a run's steps in order", example="agentotel trajectory 3f2a --full",
         arguments=_trajectory_arguments)
def _trajectory(args: argparse.Namespace, out: Output) -> None:
    traces = _open(args, out)
    with out.progress("Rebuilding the trajectory…"):
        trajectory = traces.trajectory(args.run)
    if out.json:
        out.emit_json(trajectory.to_dict())
        return
    print_trajectory(out, trajectory, full=args.full)


# Span names are "{operation} {target}" (GenAI conventions): beside the step's type the operation word
# only repeats it ("retrieval retrieval docs", "agent invoke_agent triage").
_OPERATION_WORDS = frozenset({"retrieval", "invoke_agent", "create_agent", "execute_tool", "agent", "tool", "run"})


def _who(step: Any) -> str:
    if step.type == "tool":
        return step.tool_name or step.name
    if step.type in ("llm", "embedding"):
        return step.model or step.name
    name = step.name or ""
    first, _, rest = name.partition(" ")
    return rest if rest and first in _OPERATION_WORDS else name


def print_trajectory(out: Output, trajectory: Any, *, full: bool = False, title: str | None = None) -> None:
    """A trajectory as a table (and with `full`, every payload in full below it)."""
    from rich.markup import escape

    from agentotel.query.trajectory import summarize

    run = trajectory.run
    heading = title or (f"Run {escape(str(run.get('run_id')))}  {escape(str(run.get('name', '')))}  ·  {run.get('status', '')}  ·  "
                        f"{len(trajectory.steps)} steps  ·  {_ms(run.get('duration_ms'))}  ·  {_cost(run.get('cost_usd'))}")
    table = _table("#", "type", "step", "status", "duration", "tokens", "cost", "input", "output", title=heading)
    for s in trajectory.steps:
        label = "  " * s.depth + escape(_who(s))
        if s.requested_by:
            label += f" [dim]← #{s.requested_by}[/]"
        if s.orphan:
            label += " [yellow](parent lost)[/]"
        tokens = f"{_int(s.input_tokens)}/{_int(s.output_tokens)}" if s.input_tokens is not None else ""
        status = _status(s.status) + (f" {escape(s.error_type)}" if s.error_type else "")
        # A failed step's output cell says why it failed (it rarely has an output).
        output = f"[red]{escape(summarize(s.error, 100))}[/]" if s.error else escape(summarize(s.output, 48))
        table.add_row(str(s.index), s.type, label, status, _ms(s.duration_ms), tokens, _cost(s.cost_usd),
                      escape(summarize(s.input, 40, last=True)), output)
    out.console.print(table)
    if full:
        from rich.syntax import Syntax

        for s in trajectory.steps:
            out.console.rule(f"step {s.index}: {s.type} {escape(_who(s))}")
            if s.error:
                out.console.print("[bold red]error[/]")
                out.console.print(s.error, markup=False, highlight=False, soft_wrap=True)
            for label, value in (("input", s.input), ("output", s.output)):
                text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
                out.console.print(f"[bold]{label}[/]")
                if out.tty:
                    out.console.print(Syntax(text or "", "json", word_wrap=True, theme="ansi_dark"))
                else:  # piped: the payload whole, never cropped to a page width
                    out.console.file.write((text or "") + "\n")


# -- diff ----------------------------------------------------------------------------------------------
def _diff_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_a", metavar="RUN_A", help="the reference run (id, trace id or prefix)")
    p.add_argument("run_b", metavar="RUN_B", help="the run to compare with it")
    p.add_argument("--all", action="store_true", help="list every aligned pair, not only those that differ")


@command("diff", help="where and why two runs diverged", example="agentotel diff 3f2a 9c1e", arguments=_diff_arguments)
def _diff(args: argparse.Namespace, out: Output) -> None:
    traces = _open(args, out)
    with out.progress("Aligning the two runs…"):
        result = traces.diff(args.run_a, args.run_b)
    if out.json:
        out.emit_json(result.to_dict())
        return
    print_diff(out, result, every_pair=args.all)


def print_diff(out: Output, result: Any, *, every_pair: bool = False) -> None:
    """A run diff: the first divergence first, then differing pairs, environment and totals."""
    from rich.markup import escape

    from agentotel.analysis.diff import describe_changes

    a, b = result.a, result.b
    out.console.print(f"A: {a.run.get('run_id')} ({a.run.get('name')})   B: {b.run.get('run_id')} ({b.run.get('name')})",
                      markup=False)
    first = result.first_divergence
    if first is None:
        out.console.print("[green]No divergence:[/] every step aligned and matched.")
    else:
        where = f"A#{first['index_a'] or '-'} ↔ B#{first['index_b'] or '-'}"
        out.console.print(f"[bold red]First divergence[/] at {where}: [bold]{first['kind']}[/] — {escape(first['detail'])}")
    steps_a = {s.index: s for s in a.steps}
    steps_b = {s.index: s for s in b.steps}
    table = _table("A#", "B#", "status", "step in A", "step in B", "what changed", title="Aligned steps")
    for pair in result.pairs:
        if pair.status == "same" and not every_pair:
            continue
        sa, sb = steps_a.get(pair.index_a), steps_b.get(pair.index_b)
        status = pair.status if pair.status == "same" else f"[yellow]{pair.status}[/]"
        table.add_row(str(pair.index_a or "-"), str(pair.index_b or "-"), status, _diff_step(sa), _diff_step(sb),
                      escape(describe_changes(pair.changes)))
    if table.row_count:
        out.console.print(table)
    lines = result.environment_lines
    out.console.print("[bold]Environment:[/] " + ("same" if not lines else ""))
    for line in lines:
        out.console.print(f"  {line}", markup=False)
    totals = _table("", "A", "B", title="Totals")
    for key, values in result.totals.items():
        fmt = _cost if key == "cost_usd" else _ms if key == "duration_ms" else _int
        va, vb = fmt(values["a"]), fmt(values["b"])
        totals.add_row(key.replace("_", " "), va, vb if va == vb else f"[bold]{vb}[/]")
    out.console.print(totals)


def _diff_step(step: Any) -> str:
    from rich.markup import escape

    if step is None:
        return ""
    return f"{step.type} {escape(_who(step))}" + (" [red](failed)[/]" if step.status == "error" else "")


# -- env ----------------------------------------------------------------------------------------------
def _env_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="a run (id, trace id or prefix): show its environment")
    p.add_argument("run_b", metavar="RUN_B", nargs="?", help="a second run: show only what differs")


@command("env", help="a run's environment, or what differs between two", example="agentotel env 3f2a 9c1e",
         arguments=_env_arguments)
def _env(args: argparse.Namespace, out: Output) -> None:
    from agentotel.analysis.diff import compare_environments, run_snapshot

    traces = _open(args, out)
    trajectory_a = traces.trajectory(args.run)
    snap_a = run_snapshot(trajectory_a)
    if args.run_b is None:
        if snap_a is None:
            raise UserError(f"run {args.run!r} has no environment snapshot (recorded with environment capture off?)")
        if out.json:
            out.emit_json(snap_a)
        else:
            out.console.print_json(json.dumps(snap_a, default=str))
        return
    result = compare_environments(trajectory_a, traces.trajectory(args.run_b))
    if result is None:
        missing = args.run if snap_a is None else args.run_b
        raise UserError(f"run {missing!r} has no environment snapshot to compare")
    if out.json:
        out.emit_json(result.to_dict())
        return
    lines = list(result.lines())
    out.console.print("\n".join(lines) if lines else "The two environments are the same.", markup=False)


# -- sql ----------------------------------------------------------------------------------------------
def _sql_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="SQL over the views spans, runs, steps, llm_calls, tool_calls, retrievals")
    p.add_argument("--format", choices=("table", "json", "csv"), default=None, help="output format (default table)")


@command("sql", help="run SQL over the trace views",
         example="agentotel sql \"SELECT tool_name, count(*) FROM tool_calls GROUP BY 1\" --format csv",
         arguments=_sql_arguments)
def _sql(args: argparse.Namespace, out: Output) -> None:
    import duckdb

    from agentotel.query import SQLError, pylist

    if not args.query.strip():
        raise UserError("the query is empty: give SQL over the views, e.g. \"SELECT * FROM runs\"")
    traces = _open(args, out)
    fmt = args.format or ("json" if out.json else "table")
    try:
        relation = traces.sql(args.query)
        if relation is None:  # a statement with no result (SET, CREATE VIEW ...)
            return
        table = relation.to_arrow_table()
    except duckdb.Error as exc:
        raise SQLError(" ".join(str(exc).split())) from None
    rows = pylist(table)
    if fmt == "json":
        out.emit_json(_maps_as_objects(table, rows))
    elif fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")  # "\r\n" would follow the last field into `$(...)`
        writer.writerow(table.column_names)
        for row in rows:
            writer.writerow([_csv_cell(row[c]) for c in table.column_names])
        out.console.file.write(buffer.getvalue())
    else:
        grid = _table(*table.column_names)
        for row in rows:
            grid.add_row(*(_cell(row[c]) for c in table.column_names))
        out.console.print(grid)
        out.errors.print(f"{len(rows)} row(s)")


def _cell(value: Any) -> str:
    from rich.markup import escape

    if value is None:
        return "[dim]NULL[/]"
    text = value if isinstance(value, str) else _scalar_text(value)
    text = " ".join(text.split())
    return escape(text if len(text) <= 80 else text[:79] + "…")


def _csv_cell(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float)):
        return value
    return _scalar_text(value)


def _scalar_text(value: Any) -> str:
    """A value as text in a table or CSV cell: numbers and times bare, lists and maps as JSON."""
    if isinstance(value, (dt.datetime, dt.date, dt.time, decimal.Decimal)):
        return str(_json_default(value))
    if isinstance(value, float):
        return _float(value)
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def _maps_as_objects(table: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with every map column (DuckDB MAP, Arrow map: a list of key/value pairs) as a JSON object."""
    import pyarrow as pa

    def plain(kind: Any, value: Any) -> Any:
        if value is None:
            return None
        if pa.types.is_map(kind):
            return {str(k): plain(kind.item_type, v) for k, v in value}
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            return [plain(kind.value_type, v) for v in value]
        if pa.types.is_struct(kind):
            return {f.name: plain(f.type, value.get(f.name)) for f in kind}
        return value

    nested = [f for f in table.schema if pa.types.is_nested(f.type)]
    if not nested:
        return rows
    for row in rows:
        for f in nested:
            row[f.name] = plain(f.type, row[f.name])
    return rows


# -- compact ------------------------------------------------------------------------------------------
def _compact_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--grace", type=float, default=None, metavar="SECONDS",
        help="replaced files leave spans/ at once (a plain glob counts each span once) and are deleted "
             "once retired this long (default 60; 0: now), so queries planned before keep working",
    )  # fmt: skip
    parser.add_argument("--retain", type=_days, metavar="DAYS",
                        help="first drop the date partitions older than this many days (30 or 30d; UTC dates)")


def _days(raw: str) -> int:
    """An argparse type: a whole number of days, `30` or `30d`."""
    text = raw.strip().removesuffix("d")
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of days (30 or 30d, at least 1)")
    return int(text)


@command("compact", help="merge small Parquet files into larger ones (and drop old partitions with --retain)",
         example="agentotel compact --dir ./agentotel-traces --retain 30d", arguments=_compact_arguments)
def _compact(args: argparse.Namespace, out: Output) -> None:
    from agentotel import store
    from agentotel.store import erase

    directory = _store_location(args)
    with out.progress(f"Compacting {directory}…"):
        dropped = erase.drop_older_than(directory, args.retain) if args.retain else None
        stats = store.compact(directory, **({} if args.grace is None else {"grace_s": args.grace}))
    if dropped is not None:
        stats = {"partitions_dropped": len(dropped["partitions"]), "files_dropped": dropped["files"],
                 "bytes_dropped": dropped["bytes"], "kept_from": dropped["cutoff"], **stats}
    if out.json:
        out.emit_json(stats)
        return
    table = _table("", "", title=f"Compacted {directory}")
    for key, value in stats.items():
        table.add_row(str(key).replace("_", " "), str(value))
    out.console.print(table)


def _store_location(args: argparse.Namespace) -> Path | str:
    """The store a maintenance command works on: a local folder that must exist, or an object-storage URI."""
    from agentotel import _config
    from agentotel.store import fs

    directory = Path(args.dir) if args.dir else _config.current().directory
    uri = fs.remote_uri(directory)
    if uri is not None:
        return uri
    if not directory.is_dir():
        raise UserError(f"no trace store at {directory}")
    return directory


# -- forget ---------------------------------------------------------------------------------------------
def _forget_arguments(parser: argparse.ArgumentParser) -> None:
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", metavar="ID", help="erase every span of this user (enduser.id)")
    who.add_argument("--session", metavar="ID", help="erase every span of this session (gen_ai.conversation.id)")
    who.add_argument("--run", metavar="ID", help="erase every span of this run (its full run id)")


@command("forget", help="erase a user's, a session's or a run's spans from the store, files rewritten atomically",
         example="agentotel forget --user alice --dir ./agentotel-traces", arguments=_forget_arguments)
def _forget(args: argparse.Namespace, out: Output) -> int:
    from agentotel.store import erase

    directory = _store_location(args)
    with out.progress(f"Erasing from {directory}…"):
        try:
            stats = erase.forget(directory, user=args.user, session=args.session, run=args.run)
        except erase.EraseError as exc:
            raise UserError(str(exc)) from None
    if out.json:
        out.emit_json(stats)
    else:
        who = next(f"{k.removesuffix('_id')} {v}" for k, v in stats.items() if k.endswith("_id"))
        out.console.print(f"Erased {stats['rows']} span(s) of {who}: {stats['files_rewritten']} file(s) rewritten, "
                          f"{stats['files_removed']} removed.", markup=False, highlight=False)
    if stats["wal_rows_pending"]:
        out.warn(f"{stats['wal_rows_pending']} more span(s) of it are in a running writer's write-ahead log: "
                 "run `agentotel forget` again once that writer has folded it (within a minute, or at its exit)")
        return 1
    return 0


# -- check ---------------------------------------------------------------------------------------------
def _check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", metavar="RUN", nargs="+", help="run ids, trace ids, or unambiguous prefixes")
    p.add_argument("--fail-on", choices=("warning", "error"),
                   help="exit 1 when a finding of this severity (or worse) exists, for CI (default: always exit 0)")
    p.add_argument("--repeats", type=int, help="the same tool call this many times in a run is a loop (default: only a call repeated right after the same answer)")
    p.add_argument("--max-steps", type=int, help="budget: flag a run with more steps")
    p.add_argument("--max-tool-calls", type=int, help="budget: flag a run with more tool calls")
    p.add_argument("--max-tokens", type=int, help="budget: flag a run using more tokens (in + out)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="budget: flag a run costing more")
    p.add_argument("--forbid", action="append", metavar="TOOL", help="policy: a tool the agent must not call (repeatable)")
    p.add_argument("--require", action="append", metavar="TOOL", help="policy: a tool whose evidence an answer needs (repeatable)")


_CUT_HINT = "agentotel case new {run} --at {at} --layer {layer} -o cases/{name}.yaml"


@command("check", help="where and why runs went wrong: each finding at its step, with layer, severity and a fix",
         example="agentotel check 3f2a --fail-on error", arguments=_check_arguments)
def _check(args: argparse.Namespace, out: Output) -> int:
    """Findings per run, held to each agent's policy (pyproject.toml [tool.agentotel.check] or agentotel.toml)
    with the options given on top; the exit status gates CI with --fail-on."""
    from agentotel.analysis import detectors, policy
    from agentotel.analysis._record import load

    overrides = {"repeated_tool_calls": args.repeats, "max_steps": args.max_steps, "max_tool_calls": args.max_tool_calls,
                 "max_tokens": args.max_tokens, "max_cost_usd": args.max_cost,
                 "forbidden_tools": tuple(args.forbid) if args.forbid else None,
                 "required_tools": tuple(args.require) if args.require else None}
    traces = _open(args, out)
    checked = []
    with out.progress("Checking…"):
        for name in args.runs:
            record, history = load(traces, name)
            held_to = policy.load_policy(detectors._agent(record)).with_options(**overrides)
            checked.append((record, detectors.detect(record, history, policy=held_to)))
    every = [f for _record, found in checked for f in found]
    worst = detectors.worst(every)
    failed = args.fail_on is not None and worst is not None and \
        detectors.SEVERITIES.index(worst) >= detectors.SEVERITIES.index(args.fail_on)
    if out.json:
        out.emit_json({"runs": [{"run_id": record.run_id, "findings": [f.to_dict() for f in found],
                                 "suggested_cut": _suggested_cut(record, found)}
                                for record, found in checked], "worst": worst, "failed": failed})
        return 1 if failed else 0
    for record, found in checked:
        print_findings(out, record, found)
    if failed:
        out.errors.print(f"{PROG}: findings at {args.fail_on} or worse (--fail-on {args.fail_on})", markup=False, highlight=False)
    return 1 if failed else 0


def _first_cause(found: Sequence[Any]) -> Any:
    """The finding a case would be about: the earliest cause, a warning or worse before an info."""
    serious = [f for f in found if f.index is not None and f.severity != "info"] or [f for f in found if f.index is not None]
    return min(serious, key=lambda f: f.index) if serious else None


def _suggested_cut(record: Any, found: Sequence[Any]) -> int | None:
    """Where `agentotel case new` would cut for the first cause: past a tool step, at the model step that met it."""
    from agentotel.cases.case import suggest_cut

    first = _first_cause(found)
    return suggest_cut(record, [first]) if first is not None else None


def print_findings(out: Output, record: Any, found: Sequence[Any]) -> None:
    """A run's findings as a table: step, severity, layer, kind, what happened (with the step's error) and
    what to do; then the command that makes the first one a regression case."""
    if not found:
        out.console.print(f"run {record.run_id}: no findings", markup=False, highlight=False)
        return
    by_index = {s["index"]: s for s in record.steps}
    table = _table("step", "severity", "layer", "kind", "finding", title=f"run {_escape(str(record.run_id))}: {len(found)} finding(s)")
    for f in found:
        text = f.message
        step = by_index.get(f.index) or {}
        error = record.error(step) if step else None
        if error and error not in text:
            text += f"\nerror at step {f.index}: {error}"
        severity = {"error": "[red]error[/]", "warning": "[yellow]warning[/]"}.get(f.severity, f.severity)
        table.add_row(str(f.index if f.index is not None else ""), severity, f.layer, f.kind,
                      _escape(text) + f"\n[dim]→ {_escape(f.suggestion)}[/]")
    out.console.print(table)
    first = _first_cause(found)
    if first is not None:
        at = _suggested_cut(record, found)
        name = str(first.evidence.get("tool") or first.kind).replace("_", "-")
        out.console.print("To make it a regression case:\n  " + _CUT_HINT.format(
            run=str(record.run_id)[:12], at=at, layer=first.layer, name=name), markup=False, highlight=False)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


# -- import -------------------------------------------------------------------------------------------
def _import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="OTLP files: JSON lines (the OpenTelemetry Collector's file exporter) or protobuf; plain, .gz or .zst")
    parser.add_argument("--max-request-bytes", metavar="SIZE", default="64MiB",
                        help="a request (a line, or a protobuf message) larger than this is skipped, not read (default: 64MiB)")


@command("import", help="store the spans of OTLP JSON or protobuf files, as agentotel-collector would",
         example="agentotel import traces.jsonl.zst --dir ./agentotel-traces", arguments=_import_arguments)
def _import(args: argparse.Namespace, out: Output) -> int:
    from agentotel import _config
    from agentotel.store.otlp import import_files

    directory = Path(args.dir) if args.dir else _config.current().directory
    max_request_bytes = _config.parse_size("--max-request-bytes", args.max_request_bytes)
    missing = [p for p in args.paths if not Path(p).is_file()]
    if missing:
        raise UserError(f"no such file: {', '.join(missing)}")
    try:
        with out.progress(f"Importing {len(args.paths)} file(s) into {directory}…"):
            stats = import_files(directory, args.paths, max_request_bytes=max_request_bytes)
    except (ValueError, ImportError, OSError) as exc:
        raise UserError(str(exc)) from None
    if out.json:
        out.emit_json(stats)
    else:
        rejected = f" ({stats['rejected']} rejected: no usable ids)" if stats["rejected"] else ""
        out.console.print(f"Imported {stats['spans']} span(s) from {stats['files']} file(s) into {directory}{rejected}.",
                          markup=False, highlight=False)
    shown = stats["problems"][:_SHOWN_PROBLEMS]
    for problem in shown:
        out.errors.print(f"{PROG}: skipped {problem}", markup=False, highlight=False)
    if stats["skipped"] > len(shown):
        out.errors.print(f"{PROG}: … and {stats['skipped'] - len(shown)} more skipped", markup=False, highlight=False)
    return 1 if stats["skipped"] else 0


_SHOWN_PROBLEMS = 20  # a screenful (--json holds more)


# -- demo ---------------------------------------------------------------------------------------------
@command("demo", help="record two runs of a small agent (no network, no API key) and show where they diverge",
         example="agentotel demo --dir /tmp/agentotel-demo")
def _demo(args: argparse.Namespace, out: Output) -> None:
    from agentotel import demo

    with out.progress("Running the demo agent twice…"):
        result = demo.run_demo(args.dir)
    traces = result.traces
    a, b = traces.trajectory(result.run_a), traces.trajectory(result.run_b)
    diff = traces.diff(result.run_a, result.run_b)
    if out.json:
        out.emit_json({"directory": str(result.directory), "runs": [a.to_dict(), b.to_dict()], "diff": diff.to_dict()})
        return
    out.console.print(f"Recorded two runs of the demo agent in [bold]{result.directory}[/].\n")
    print_trajectory(out, a, title=f"Run A {result.run_a}: {demo.DESCRIPTION_A}")
    print_trajectory(out, b, title=f"Run B {result.run_b}: {demo.DESCRIPTION_B}")
    print_diff(out, diff)
    out.console.print(
        f"\nTry: agentotel trajectory {result.run_b[:8]} --full --dir {result.directory}\n"
        f"     agentotel sql \"SELECT tool_name, output FROM tool_calls\" --dir {result.directory}\n"
        f"     agentotel view --dir {result.directory}     (the runs and the diff in your browser)"
    )


# -- entry point --------------------------------------------------------------------------------------
def _load_extensions() -> None:
    for module in _EXTENSIONS:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the extension exists but something it needs is missing: say so
                raise


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    from agentotel import __version__

    _load_extensions()
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Query agent runs recorded by agentotel: list them, rebuild one step by step, diff two.",
        epilog="Example:\n  agentotel demo\n  agentotel runs\n  agentotel diff RUN_A RUN_B",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agentotel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for cmd in _COMMANDS.values():
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help[:1].upper() + cmd.help[1:] + ".",
                           epilog=f"Example:\n  {cmd.example}", formatter_class=argparse.RawDescriptionHelpFormatter)
        cmd.arguments(p)
        if cmd.store:
            p.add_argument("--dir", default=None,
                           help="the trace store: a folder or s3://bucket/prefix (default: $AGENTOTEL_DIR, else ./agentotel-traces)")
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        p.set_defaults(_command=cmd)
    return parser


def main(argv: Sequence[str] | None = None, *, stdout: Any = None, stderr: Any = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 a user error, 2 bad arguments)."""
    import duckdb

    from agentotel._config import ConfigError
    from agentotel.query import QueryError

    parser = build_parser()
    args = parser.parse_args(argv)
    out = Output(args.json, stdout, stderr)
    try:
        return int(args._command.handler(args, out) or 0)
    except (UserError, QueryError, ConfigError) as exc:
        out.errors.print(f"{PROG}: error: {exc}", markup=False, highlight=False)
        return 1
    except duckdb.Error as exc:  # a query that failed while its rows were read
        out.errors.print(f"{PROG}: error: {' '.join(str(exc).split())}", markup=False, highlight=False)
        return 1
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        out.errors.print(f"{PROG}: error: {exc.strerror or exc}: {exc.filename}", markup=False, highlight=False)
        return 1
    except KeyboardInterrupt:
        out.errors.print(f"{PROG}: interrupted", markup=False)
        return 130
    except BrokenPipeError:  # `agentotel sql ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    # Run as `python -m agentotel.cli`, this file is `__main__`; extensions register their commands with
    # the importable `agentotel.cli`, so that module's main() is the one that knows them all.
    from agentotel.cli import main as _main

    sys.exit(_main())
