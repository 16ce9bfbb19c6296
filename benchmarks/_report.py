"""Formatting of results: one console line per row, and RESULTS.md regenerated from results.json."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.harness import Result

HERE = Path(__file__).resolve().parent
RESULTS_JSON = HERE / "results.json"
RESULTS_MD = HERE / "RESULTS.md"

# Distributions whose versions matter to the numbers (ours, the SDK, the comparisons); shown when installed.
_LIBRARIES = (
    "agentotel",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-common",
    "protobuf",
    "pyarrow",
    "duckdb",
    "openai",
    "anthropic",
    "opentelemetry-instrumentation-openai-v2",
    "openinference-instrumentation-openai",
    "opentelemetry-instrumentation-openai",
    "logfire",
)


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    if magnitude == 0:
        return "0"
    return f"{value:.3g}"


def _ratio(row: Result) -> str:
    ratio = row.ratio
    if ratio is None:
        return "n/a"
    return f"{ratio:,.0f}×" if abs(ratio) >= 100 else f"{ratio:#.3g}×"


def _spread(spread: float | None) -> str:
    return "" if spread is None else f" (±{spread * 50:.0f}%)"


def _met(row: Result) -> str:
    if row.error:
        return "ERROR"
    return {True: "met", False: "MISSED", None: "—"}[row.met]


def format_row(row: Result) -> str:
    """One console line: ours, the comparison, the ratio and the verdict."""
    if row.error:
        return f"{row.benchmark}: ERROR {row.error}"
    ours = f"{_number(row.ours)} {row.unit}{_spread(row.ours_spread)}"
    peer = f"{row.peer_name} {_number(row.peer)} {row.unit}{_spread(row.peer_spread)}" if row.peer_name else "no peer"
    target = f" | target {row.target}: {_met(row)}" if row.target else ""
    return f"{row.benchmark} — {row.metric}: ours {ours} | {peer} | ratio {_ratio(row)}{target}"


def section(area: str, doc: str, results: list[Result], elapsed_s: float) -> dict[str, Any]:
    """One benchmark module's run, as stored in results.json."""
    return {
        "area": area,
        "doc": doc,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed_s": round(elapsed_s, 1),
        "results": [r.to_dict() for r in results],
    }


def machine() -> dict[str, Any]:
    """Where the numbers were measured: CPU, cores, memory, OS, Python, library versions, commit."""
    info: dict[str, Any] = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "commit": _git_commit(),
    }
    versions = {}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    info["libraries"] = versions
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _git_commit() -> str | None:
    commit = _git("rev-parse", "--short", "HEAD")
    if commit and _git("status", "--porcelain", "--untracked-files=no", "--", "agentotel", "collector"):
        commit += " plus uncommitted changes to agentotel/ or collector/"
    return commit


def _corpus_stats() -> str | None:
    """The standard corpus's statistics as Markdown, or None when the corpus module cannot say."""
    try:
        from benchmarks import corpus

        return corpus.stats_markdown()
    except Exception as exc:  # noqa: BLE001 - the results must still be written
        print(f"corpus statistics unavailable: {exc!r}", file=sys.stderr)
        return None


def write(sections: dict[str, dict[str, Any]], *, corpus_stats: bool = True) -> Path:
    """Merge these sections into results.json and regenerate RESULTS.md from it (and the corpus statistics)."""
    stored: dict[str, Any] = {}
    if RESULTS_JSON.exists():
        try:
            stored = json.loads(RESULTS_JSON.read_text())
        except ValueError:
            stored = {}
    stored.setdefault("sections", {}).update(sections)
    stored["machine"] = machine()
    corpus = _corpus_stats() if corpus_stats or "corpus" not in stored else None
    if corpus is not None:
        stored["corpus"] = corpus
    RESULTS_JSON.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
    RESULTS_MD.write_text(render(stored))
    return RESULTS_MD


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(stored: dict[str, Any]) -> str:
    """RESULTS.md from the stored sections."""
    m = stored.get("machine", {})
    lines = [
        "# Benchmark results",
        "",
        "Generated by `python -m benchmarks` (full mode) from `benchmarks/results.json` — do not edit by hand.",
        "Ratio = ours ÷ comparison, in the row's unit: for a rate (per second) above 1 is better for us,",
        "for a cost (time, bytes) below 1 is better for us. ± is half the interquartile range of the repeats,",
        "relative to the median. Each section says when it was measured.",
        "",
        "## Machine",
        "",
        f"- CPU: {m.get('cpu')} — {m.get('cores')} cores visible (shared with other work during the run)",
        f"- Memory: {m.get('memory_gb')} GB",
        f"- OS: {m.get('os')}",
        f"- Python: {m.get('python')}",
        f"- agentotel commit: {m.get('commit')}",
        "- Libraries: " + ", ".join(f"{k} {v}" for k, v in sorted(m.get("libraries", {}).items())),
        "",
    ]
    sections = stored.get("sections", {})
    summary = [
        "## Summary",
        "",
        "| benchmark | measurement | compared with | ratio | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for area in sorted(sections):
        for data in sections[area]["results"]:
            row = Result.from_dict(data)
            summary.append(
                f"| {_cell(area)} | {_cell(row.benchmark)}: {_cell(row.metric)} | {_cell(row.peer_name or '—')} | {_ratio(row)} "
                f"| {_cell(row.target or '—')} | {_met(row)} |"
            )
    lines += summary + [""]
    for area in sorted(sections):
        lines += _render_section(sections[area])
    corpus = stored.get("corpus")
    if corpus:
        lines += ["## Corpus", "", corpus.rstrip(), ""]
    return "\n".join(lines) + "\n"


def _render_section(data: dict[str, Any]) -> list[str]:
    doc = (data.get("doc") or "").strip()
    title, _, body = doc.partition("\n")
    lines = [f"## {data['area']}: {title or 'bench_' + data['area']}", ""]
    if body.strip():
        lines += [body.strip(), ""]
    lines += [
        f"Measured {data['date']} ({data['elapsed_s']} s); reproduce with `python -m benchmarks {data['area']}`.",
        "",
        "| measurement | corpus | ours | comparison | ratio | target | met | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for item in data["results"]:
        row = Result.from_dict(item)
        if row.error:
            lines.append(f"| {_cell(row.benchmark)} | | | | | | ERROR | {_cell(row.error)} |")
            continue
        ours = f"{_number(row.ours)} {row.unit}{_spread(row.ours_spread)}"
        peer = (
            f"{_cell(row.peer_name)}: {_number(row.peer)} {row.unit}{_spread(row.peer_spread)}"
            if row.peer_name
            else "—"
        )
        notes = "; ".join(filter(None, [row.notes, f"{row.repeats} repeats" if row.repeats else ""]))
        lines.append(
            f"| {_cell(row.benchmark)}: {_cell(row.metric)} | {_cell(row.corpus)} | {ours} | {peer} "
            f"| {_ratio(row)} | {_cell(row.target or '—')} | {_met(row)} | {_cell(notes)} |"
        )
    return lines + [""]
