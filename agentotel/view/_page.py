"""The page: assets/index.html with its CSS, script and data inlined, so one file is the whole app."""

from __future__ import annotations

import datetime as dt
import html
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from agentotel.view import _data


_MARKER = re.compile("@@(?:CONNECT|TITLE|CSS|JS|DATA)@@")


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    return resources.files("agentotel.view").joinpath("assets", name).read_text(encoding="utf-8")


def page(config: dict[str, Any], *, title: str, connect: str) -> str:
    """The app's HTML with `config` (mode, token, and for a report the data) inlined.

    `connect` is the Content-Security-Policy's connect-src: 'self' for the view's API, 'none' for a
    report, which must never reach a network.
    """
    parts = {
        "@@CONNECT@@": connect,
        "@@TITLE@@": html.escape(title),
        "@@CSS@@": _asset("app.css"),
        "@@JS@@": _asset("app.js"),
        "@@DATA@@": _data.embed(config),
    }
    # One pass over the template: what is put in is never searched for markers. A run named "@@DATA@@"
    # otherwise had the data put in its <title>, where a result's "</title><img onerror=...>" ran.
    return _MARKER.sub(lambda m: parts[m.group(0)], _asset("index.html"))


def report_html(traces: Any, run: str, run_b: str | None = None) -> str:
    """One run (its steps, messages, findings, environment), or the diff of two, as a self-contained page.

    The file needs no server and no network: open it in any browser, attach it to a bug report, or keep it
    as a CI artifact.
    """
    if run_b is None:
        data = _data.run_payload(traces, run)
        title = f"{data['run']['name']} · run {data['run']['run_id']}"
    else:
        data = _data.diff_payload(traces, run, run_b)
        title = f"diff {data['a']['run']['name']} vs {data['b']['run']['name']}"
    created = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return page({"mode": "report", "page": data, "created": created}, title=title, connect="'none'")
