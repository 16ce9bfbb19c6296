"""The `view` and `report` commands (registered with agentotel's command line)."""

from __future__ import annotations

import argparse
import webbrowser
from pathlib import Path

from agentotel.cli import Output, UserError, _open, command


def _view_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other address requires a token)")
    p.add_argument("--port", type=int, default=8089, help="port (default 8089; 0 picks a free one)")
    p.add_argument("--token", default=None,
                   help="the token clients must give (default: none on 127.0.0.1, a random one elsewhere)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")


@command("view", help="browse runs in a local, read-only web view: timelines, step trees, messages, diffs",
         example="agentotel view --dir ./agentotel-traces", arguments=_view_arguments)
def _view(args: argparse.Namespace, out: Output) -> None:
    from agentotel.view._server import ViewServer

    traces = _open(args, out)  # a missing or empty store is reported now, not in the browser
    directory = traces.directory
    traces.close()
    try:
        server = ViewServer(directory, host=args.host, port=args.port, token=args.token)
    except OSError as exc:
        raise UserError(f"{exc.strerror or exc} (try another --port)") from None
    out.console.print(f"agentotel view of [bold]{directory}[/] at {server.url}  (Ctrl-C stops it)", markup=True, highlight=False)
    if not args.no_browser:
        webbrowser.open(server.url)
    try:
        server.run()
    except KeyboardInterrupt:
        pass


def _report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="a run id, trace id, unique prefix, or run name")
    p.add_argument("run_b", metavar="RUN_B", nargs="?", help="a second run: the report is then their diff")
    p.add_argument("-o", "--output", required=True, metavar="FILE.html", help="where to write the report")


@command("report", help="write one run, or the diff of two, as a self-contained HTML file (no network needed)",
         example="agentotel report RUN_A RUN_B -o diff.html", arguments=_report_arguments)
def _report(args: argparse.Namespace, out: Output) -> None:
    from agentotel.view import report_html

    traces = _open(args, out)
    text = report_html(traces, args.run, args.run_b)
    target = Path(args.output)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    if out.json:
        out.emit_json({"path": str(target), "bytes": len(text.encode("utf-8"))})
    else:
        out.console.print(f"Wrote {target} ({len(text.encode('utf-8')) / 1024:,.0f} KiB): open it in any browser.", highlight=False)
