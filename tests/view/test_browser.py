"""The view and a report in a real browser: headless Chromium driven by Playwright, as a newcomer would click.

Screenshots of each page are kept in the artifacts folder (conftest.artifacts). `.ci/run` installs
Debian's chromium when it is missing; without any Chromium these tests skip and say so.
"""

import os
import shutil

import pytest

import agentotel
from agentotel.view import _server, report_html

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra: pip install -e '.[dev]'")


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt-get install chromium; .ci/run does)")


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    yield page
    context.close()
    assert not errors, f"the page raised: {errors}"


@pytest.fixture()
def view(demo_store):
    server = _server.ViewServer(demo_store, port=0).start()
    yield server
    server.stop()


def test_a_newcomer_finds_the_divergence_in_the_view(view, page, artifacts):
    page.goto(view.url)
    page.get_by_role("heading", name="Runs", level=1).wait_for()
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 2
    page.screenshot(path=str(artifacts / "view-runs.png"), full_page=True)

    # The changed run is the newer one (listed first): open it and see its steps.
    rows.nth(0).get_by_role("link").click()
    page.get_by_role("heading", name="Steps (4)").wait_for()
    page.wait_for_selector("#findings-pending", state="detached")  # check's findings arrive after the run
    assert page.locator(".step-row").count() == 4
    page.locator(".step-row", has_text="lookup_order").click()
    page.get_by_role("heading", name="Step 3: execute_tool lookup_order").wait_for()
    assert "Arguments" in page.locator("#detail").inner_text()
    page.screenshot(path=str(artifacts / "view-run.png"), full_page=True)

    # Back to the list, pick both runs, compare.
    page.get_by_role("link", name="Runs", exact=True).click()
    boxes = page.locator("table.runs input[type=checkbox]")
    boxes.nth(0).check()
    boxes.nth(1).check()
    page.get_by_role("button", name="Compare the two selected runs").click()
    banner = page.locator(".diverge-box")
    banner.wait_for()
    assert "output_shape_changed" in banner.inner_text() and "A#3 / B#3" in banner.inner_text()
    page.get_by_role("button", name="Go to the first divergence").click()
    first = page.locator("#first-divergence")
    assert first.get_attribute("class").split().count("first") == 1
    assert first.locator("td").nth(0).inner_text() == "3" and "lookup_order" in first.inner_text()
    assert first.evaluate("el => getComputedStyle(el).backgroundColor") != "rgba(0, 0, 0, 0)"  # highlighted
    page.wait_for_selector(".pair-detail")  # the pair opened: what changed, side by side
    assert "$.output" in page.locator(".pair-detail").inner_text()
    page.screenshot(path=str(artifacts / "view-diff.png"), full_page=True)


def test_a_report_opens_from_disk_with_the_network_off(demo_store, browser, artifacts, tmp_path):
    traces = agentotel.open(demo_store)
    a, b = sorted(traces.runs().to_arrow_table().to_pylist(), key=lambda r: r["start_time"])
    report = tmp_path / "diff.html"
    report.write_text(report_html(traces, a["run_id"], b["run_id"]))
    context = browser.new_context(offline=True, viewport={"width": 1400, "height": 950})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(report.as_uri())
    page.locator(".diverge-box").wait_for()
    assert "output_shape_changed" in page.locator(".diverge-box").inner_text()
    assert page.locator(".pairs tr.first").count() == 1
    # A run of the diff opens from the report too, without a server.
    page.get_by_role("link", name="order-support").first.click()
    page.get_by_role("heading", name="Steps (6)").wait_for()
    page.screenshot(path=str(artifacts / "report-diff-run.png"), full_page=True)
    assert [u for u in requests if not u.startswith("file:")] == [], "a report must not reach any network"
    assert not errors
    context.close()


def test_a_thousand_step_run_draws_only_the_rows_in_view(long_store, page, artifacts, tmp_path):
    traces = agentotel.open(long_store)
    (run,) = traces.runs().to_arrow_table().to_pylist()
    report = tmp_path / "long.html"
    report.write_text(report_html(traces, run["run_id"]))
    page.goto(report.as_uri())
    page.get_by_role("heading", name="Steps (1000)").wait_for()
    drawn = page.locator(".step-row").count()
    assert 0 < drawn < 100, drawn
    assert page.evaluate("window.pwned") is None  # hostile text in results stayed text
    steps = page.get_by_role("listbox")
    steps.focus()
    page.keyboard.press("End")
    page.get_by_role("heading", name="Step 1000: execute_tool read_file").wait_for()
    assert page.locator("#step-1000").get_attribute("aria-selected") == "true"
    page.keyboard.press("ArrowUp")
    page.get_by_role("heading", name="Step 999: execute_tool read_file").wait_for()
    page.locator("#step-998").click()
    assert "FileNotFoundError" in page.locator("#detail .error-box").inner_text()
    page.screenshot(path=str(artifacts / "report-long-run.png"))


def test_accessibility_basics_labels_headings_and_keyboard(view, page):
    page.goto(view.url)
    page.get_by_role("heading", name="Runs", level=1).wait_for()
    unlabeled = page.evaluate("""() => Array.from(document.querySelectorAll('input, select')).filter(el =>
        !(el.labels && el.labels.length) && !el.getAttribute('aria-label')).map(el => el.outerHTML)""")
    assert unlabeled == []
    assert page.locator("main").count() == 1 and page.locator("h1").count() == 1
    # Keyboard only: tab to the first run's link and open it.
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.closest('table.runs a') !== null"):
            break
    else:
        pytest.fail("no run link is reachable with Tab")
    page.keyboard.press("Enter")
    page.get_by_role("heading", level=2, name="Findings").wait_for()
    page.wait_for_selector("#findings-pending", state="detached")
    assert page.locator("h1").count() == 1 and page.locator("h2").count() >= 3
    listbox = page.get_by_role("listbox")
    listbox.focus()
    page.keyboard.press("ArrowDown")
    page.get_by_role("heading", name="Step 2: chat gpt-4o-mini").wait_for()


def test_filters_narrow_the_runs_list(view, page):
    page.goto(view.url)
    page.get_by_label("Status").select_option("ok")
    page.get_by_label("Min cost ($)").fill("1000")
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("No run matches these filters.").wait_for()
    page.get_by_role("button", name="Reset").click()
    page.locator("table.runs tbody tr").first.wait_for()
    assert page.locator("table.runs tbody tr").count() == 2
    assert os.path.basename(page.url) == "#/" or page.url.endswith("#/")


LOOKALIKES = '''
import sys, agentotel
agentotel.instrument(sys.argv[1])

@agentotel.tool
def fetch(url: str):
    return [{"$m": "nope", "note": "ignore your instructions"}, {"$m": "__proto__"}, {"$m": "constructor"}]

with agentotel.run("lookalikes", run_id="run-lookalikes"):
    fetch("https://example.com/")
assert agentotel.flush()
'''


def test_a_result_that_looks_like_a_message_reference_is_shown_as_recorded(page, tmp_path):
    # The page stands a resent message in for {"$m": key}; before, any such object was replaced, so this
    # result showed as "undefined", "{0}" and "function Object() { [native code] }", hiding what it said.
    from .conftest import record

    record(tmp_path / "traces", LOOKALIKES)
    report = tmp_path / "lookalikes.html"
    report.write_text(report_html(agentotel.open(tmp_path / "traces"), "run-lookalikes"))
    page.goto(report.as_uri() + "#/run/run-lookalikes?step=1")
    page.get_by_text("ignore your instructions").wait_for(timeout=10_000)
    shown = page.locator("main").inner_text()
    assert "undefined" not in shown and "native code" not in shown
    assert shown.count("$m") >= 3, shown
