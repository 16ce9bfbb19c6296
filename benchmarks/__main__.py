"""`python -m benchmarks [names...] [--quick]`: run the benchmarks, print ratios, regenerate RESULTS.md.

Names are module suffixes (`store` for `bench_store.py`). Each benchmark module runs in its own child
process, so one module's global state (an installed tracer provider, patched clients, memory) cannot
leak into the next one's numbers, and a crash or hang becomes an error row instead of ending the run.
Full mode (no --quick) rewrites `benchmarks/RESULTS.md` from `benchmarks/results.json`, replacing only
the sections it ran, so a subset can be re-measured without losing the others. Exits 1 when a
benchmark module failed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from benchmarks import _report
from benchmarks.harness import Result, error_result

HERE = Path(__file__).resolve().parent


def discover() -> list[str]:
    """Area names of every `benchmarks/bench_<area>.py`, sorted."""
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))


def run_module(area: str, quick: bool) -> tuple[str, list[Result], float]:
    """Import and run one benchmark module here; a failure becomes an error row instead of stopping the run."""
    start = time.perf_counter()
    doc = ""
    try:
        module = importlib.import_module(f"benchmarks.bench_{area}")
        doc = (module.__doc__ or "").strip()
        results = module.run(quick=quick)
        bad = [r for r in results if not isinstance(r, Result)]
        if bad:
            raise TypeError(f"run() must return Result rows, got {type(bad[0]).__name__}")
        if not results:
            raise ValueError("run() returned no rows")
    except Exception as exc:  # noqa: BLE001 - one broken benchmark must not hide the others
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        traceback.print_exc(file=sys.stderr)
        results = [error_result(area, detail)]
    return doc, list(results), time.perf_counter() - start


def run_isolated(area: str, quick: bool, timeout_s: float | None = None) -> tuple[str, list[Result], float]:
    """Run one benchmark module in a child process (its rows print as they come); same result as run_module.

    When the child dies or hangs, the error row is printed here, since the child could not print it.
    """
    start = time.perf_counter()
    fd, out = tempfile.mkstemp(prefix=f"agentotel-bench-{area}-", suffix=".json")
    os.close(fd)
    command = [sys.executable, "-m", "benchmarks", "--child", out, area] + (["--quick"] if quick else [])
    try:
        # Its own process group, so a timeout also ends whatever servers the benchmark started.
        child = subprocess.Popen(command, cwd=HERE.parent, start_new_session=True)
        try:
            child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
        data = json.loads(Path(out).read_text() or "null")
        if data is not None:
            return data["doc"], [Result.from_dict(r) for r in data["results"]], data["elapsed_s"]
        failure = f"the benchmark process exited with {child.returncode} and no results"
    except subprocess.TimeoutExpired:
        failure = f"timed out after {timeout_s:.0f} s"
    finally:
        Path(out).unlink(missing_ok=True)
    results, elapsed = [error_result(area, failure)], time.perf_counter() - start
    _print_rows(results, elapsed)
    return "", results, elapsed


def _print_rows(results: list[Result], elapsed: float) -> None:
    for row in results:
        print("  " + _report.format_row(row), flush=True)
    print(f"  ({elapsed:.1f} s)", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (e.g. store query); default: all")
    parser.add_argument("--quick", action="store_true", help="smoke run of a few seconds each; writes nothing")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--no-write", action="store_true", help="full mode without rewriting RESULTS.md")
    parser.add_argument("--in-process", action="store_true", help="run every module in this process (debugging)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds allowed per module (default: none)")
    parser.add_argument("--child", metavar="JSON", help=argparse.SUPPRESS)  # internal: run one module, write its rows
    args = parser.parse_args(argv)

    available = discover()
    if args.list:
        print("\n".join(available))
        return 0
    wanted = [n.removeprefix("bench_").removesuffix(".py") for n in args.names] or available

    if args.child:
        [area] = wanted
        doc, results, elapsed = run_module(area, args.quick)
        _print_rows(results, elapsed)
        Path(args.child).write_text(
            json.dumps({"doc": doc, "results": [r.to_dict() for r in results], "elapsed_s": elapsed})
        )
        return 0

    unknown = [n for n in wanted if n not in available]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available)}")

    mode = "quick" if args.quick else "full"
    print(f"benchmarks ({mode}): {', '.join(wanted)}", flush=True)
    failed = False
    for area in wanted:
        print(f"\n== {area}", flush=True)
        if args.in_process:
            doc, results, elapsed = run_module(area, args.quick)
            _print_rows(results, elapsed)
        else:
            doc, results, elapsed = run_isolated(area, args.quick, args.timeout)
        failed |= any(r.error for r in results)
        if not args.quick and not args.no_write:
            # Written after every module, so a long run that is cut short keeps what it measured.
            path = _report.write({area: _report.section(area, doc, results, elapsed)}, corpus_stats=area == wanted[-1])
            print(f"  wrote {path.relative_to(HERE.parent)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
