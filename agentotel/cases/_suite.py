"""Suites of cases: run every case of a folder into one report, and compare two reports (before / after).

    agentotel case run cases/ --report before.json       # on main
    agentotel case run cases/ --report after.json        # on the branch
    agentotel case compare before.json after.json        # Markdown for the pull request; exit 1 on a regression

A report is JSON: `{"agentotel_suite": 1, "cases": [...]}`, one entry per case with its verdict, every
gate's status and evidence, and the run's steps, tool calls, latency and cost. The comparison gives the
pass rate, gate failures by kind (unsafe actions: forbidden tools or arguments), tool calls, steps,
latency and cost per case and in total, and the cases that flipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from agentotel.cases.case import Case, CaseError

__all__ = ["case_files", "suite_entry", "write_report", "read_report", "Comparison", "compare_reports"]

FORMAT_VERSION = 1
UNSAFE = ("forbidden_tools", "forbidden_arguments")  # gates whose failure means the agent did something unsafe
METRICS = ("tool_calls", "steps", "latency_s", "cost_usd")


def case_files(targets: Iterable[str | Path]) -> list[Path]:
    """The case files named: files as given, folders searched for `*.yaml` / `*.yml` holding a case."""
    found: list[Path] = []
    for target in map(Path, targets):
        if target.is_dir():
            for path in sorted([*target.rglob("*.yaml"), *target.rglob("*.yml")]):
                try:
                    head = path.read_text(encoding="utf-8")[:4096]
                except OSError:
                    continue
                if "agentotel_case:" in head:  # other YAML in a cases/ folder is not ours
                    found.append(path)
        elif target.exists():
            found.append(target)
        else:
            raise CaseError(f"{target}: no such case file or folder")
    return found


def suite_entry(case: Case | None, path: Path, report: Any = None, error: str | None = None) -> dict[str, Any]:
    """One case's line in a suite report: its verdict and measures, or the error that kept it from running."""
    entry: dict[str, Any] = {
        "case": case.name if case is not None else path.stem,
        "path": str(path),
        "layer": case.layer if case is not None else None,
        "failure_mode": case.failure_mode if case is not None else None,
    }
    if report is not None:
        entry.update(report.to_dict())
        entry["case"] = case.name if case is not None else report.case
    else:
        entry.update({"passed": False, "error": error, "gates": [], "metrics": {}})
    return entry


def write_report(entries: list[dict[str, Any]], path: str | Path) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"agentotel_suite": FORMAT_VERSION, "cases": entries}, indent=2, ensure_ascii=False, default=str) + "\n",
                      encoding="utf-8")
    return target


def read_report(path: str | Path) -> list[dict[str, Any]]:
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CaseError(f"{source}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise CaseError(f"{source}: not JSON ({exc})") from None
    if not isinstance(data, Mapping) or "agentotel_suite" not in data:
        raise CaseError(f"{source}: not a suite report (write one with `agentotel case run CASES --report FILE`)")
    return list(data.get("cases") or [])


# ---- comparing two reports ---------------------------------------------------------------------------


def _failed_gates(entry: Mapping[str, Any]) -> list[str]:
    return [g["name"].split(" ")[0] for g in entry.get("gates") or () if g.get("status", "pass" if g.get("passed") else "fail") != "pass"]


def _summary(entries: list[Mapping[str, Any]]) -> dict[str, Any]:
    passed = sum(1 for e in entries if e.get("passed"))
    failures: dict[str, int] = {}
    for entry in entries:
        for name in _failed_gates(entry):
            failures[name] = failures.get(name, 0) + 1
        if entry.get("error"):
            failures["error"] = failures.get("error", 0) + 1
    totals = {m: round(sum(float((e.get("metrics") or {}).get(m) or 0) for e in entries), 6) for m in METRICS}
    return {
        "cases": len(entries),
        "passed": passed,
        "pass_rate": round(passed / len(entries), 4) if entries else None,
        "gate_failures": dict(sorted(failures.items())),
        "unsafe_actions": sum(failures.get(name, 0) for name in UNSAFE),
        **totals,
    }


@dataclass
class Comparison:
    """Two suite reports side by side: totals, per-case rows, and the cases that flipped."""

    before: dict[str, Any]
    after: dict[str, Any]
    cases: list[dict[str, Any]] = field(default_factory=list)

    @property
    def regressions(self) -> list[str]:
        """Cases that passed before and fail now."""
        return [c["case"] for c in self.cases if c["before"] is True and c["after"] is False]

    @property
    def fixed(self) -> list[str]:
        return [c["case"] for c in self.cases if c["before"] is False and c["after"] is True]

    def to_dict(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "cases": self.cases,
                "regressions": self.regressions, "fixed": self.fixed}

    def markdown(self) -> str:
        """The comparison as a pull-request comment."""
        b, a = self.before, self.after
        lines = ["### agentotel regression cases", ""]
        if self.regressions:
            lines.append(f"**{len(self.regressions)} case(s) that passed now fail:** " + ", ".join(f"`{c}`" for c in self.regressions))
        if self.fixed:
            lines.append(f"**{len(self.fixed)} case(s) fixed:** " + ", ".join(f"`{c}`" for c in self.fixed))
        if not self.regressions and not self.fixed:
            lines.append("No case flipped.")
        lines += ["", "| | before | after |", "|---|---:|---:|",
                  f"| pass rate | {_rate(b)} | {_rate(a)} |",
                  f"| unsafe actions (forbidden tools or arguments) | {b['unsafe_actions']} | {a['unsafe_actions']} |"]
        for name in sorted(set(b["gate_failures"]) | set(a["gate_failures"])):
            lines.append(f"| failed `{name}` | {b['gate_failures'].get(name, 0)} | {a['gate_failures'].get(name, 0)} |")
        lines += [f"| tool calls | {_num(b['tool_calls'])} | {_num(a['tool_calls'])} |",
                  f"| steps | {_num(b['steps'])} | {_num(a['steps'])} |",
                  f"| latency | {b['latency_s']:.2f} s | {a['latency_s']:.2f} s |",
                  f"| cost | ${b['cost_usd']:.4f} | ${a['cost_usd']:.4f} |", "",
                  "| case | before | after | failed gates (after) | tool calls | steps | latency s | cost $ |",
                  "|---|---|---|---|---|---|---|---|"]
        for c in self.cases:
            lines.append(
                f"| `{c['case']}` | {_verdict(c['before'])} | {_verdict(c['after'])} | {', '.join(c['failed_after']) or ''} | "
                + " | ".join(_pair(c, m) for m in METRICS) + " |"
            )
        return "\n".join(lines) + "\n"


def compare_reports(before: list[Mapping[str, Any]], after: list[Mapping[str, Any]]) -> Comparison:
    """How a suite changed between two reports (cases matched by name)."""
    old = {e["case"]: e for e in before}
    new = {e["case"]: e for e in after}
    rows = []
    for name in [*old, *(n for n in new if n not in old)]:
        b, a = old.get(name), new.get(name)
        row: dict[str, Any] = {
            "case": name,
            "before": bool(b["passed"]) if b is not None else None,
            "after": bool(a["passed"]) if a is not None else None,
            "failed_after": _failed_gates(a) + (["error"] if a is not None and a.get("error") else []) if a is not None else [],
        }
        for metric in METRICS:
            row[metric] = {"before": (b.get("metrics") or {}).get(metric) if b else None,
                           "after": (a.get("metrics") or {}).get(metric) if a else None}
        rows.append(row)
    return Comparison(_summary(list(before)), _summary(list(after)), rows)


def _rate(summary: Mapping[str, Any]) -> str:
    if summary["pass_rate"] is None:
        return "no cases"
    return f"{summary['passed']}/{summary['cases']} ({summary['pass_rate']:.0%})"


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else "–"


def _verdict(value: bool | None) -> str:
    return {True: "pass", False: "**FAIL**", None: "–"}[value]


def _pair(row: Mapping[str, Any], metric: str) -> str:
    b, a = row[metric]["before"], row[metric]["after"]
    if isinstance(b, float) or isinstance(a, float):
        fmt = (lambda v: f"{v:.4f}") if metric == "cost_usd" else (lambda v: f"{v:.2f}")
    else:
        fmt = str
    show = lambda v: "–" if v is None else fmt(v)  # noqa: E731
    return show(a) if b == a else f"{show(b)} → {show(a)}"
