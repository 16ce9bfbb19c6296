"""The view's API refuses values it cannot use with a 400 that says why, never a 500 and a traceback."""

import json
import logging
import urllib.error
import urllib.request

import pytest

from agentotel.view import _server


@pytest.fixture(scope="module")
def view(demo_store):
    server = _server.ViewServer(demo_store, port=0).start()
    yield server
    server.stop()


def _get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize("query, phrase", [
    ("offset=1e30", "offset: '1e30' is not a whole number"),
    ("offset=nan", "offset: 'nan' is not a whole number"),
    ("offset=99999999999999999999", "is not a whole number from 0 to 9223372036854775807"),
    ("offset=-1", "offset: '-1' is not a whole number"),
    ("limit=inf", "limit: 'inf' is not a whole number from 1 to 500"),
    ("limit=0", "limit: '0' is not a whole number from 1 to 500"),
    ("limit=2.5", "limit: '2.5' is not a whole number"),
    ("min_cost=nan", "min_cost: 'nan' is not a number"),
    ("max_cost=-inf", "max_cost: '-inf' is not a number"),
])
def test_numbers_the_runs_page_cannot_use_are_400(view, caplog, query, phrase):
    with caplog.at_level(logging.ERROR, logger="agentotel.view._server"):
        status, body = _get(view.url + "api/runs?" + query)
    assert (status, phrase in body["error"]) == (400, True), body
    assert not caplog.records  # a refusal, not a failure of the view


def test_until_the_last_day_of_the_calendar_is_every_run(view):
    status, body = _get(view.url + "api/runs?until=9999-12-31")
    assert status == 200 and body["total"] == 2
