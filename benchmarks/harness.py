"""The benchmark contract (`Result`) and timing helpers that measure ours and a comparison fairly.

A benchmark module `benchmarks/bench_<area>.py` defines::

    def run(quick: bool) -> list[Result]: ...

`quick=True` is a smoke run (a few seconds, small inputs, one or two repeats) that the test suite
executes so benchmarks do not rot; `quick=False` produces the committed numbers. The module docstring's
first line titles its section in RESULTS.md and the rest of the docstring says what is measured.

Measure ours and the comparison in the same process, alternating (`alternate`), and report the
median with its spread. `Result.ratio` is always ours ÷ comparison in the row's unit, so for a rate
(spans/s) above 1 means we are faster, and for a cost (seconds, bytes) below 1 means we are cheaper.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["Result", "Sample", "alternate", "interleave", "timed", "error_result"]


@dataclass(frozen=True)
class Result:
    """One measured row: our figure, the comparison's figure, the target and whether it is met."""

    benchmark: str
    """What is compared, e.g. "export throughput"."""
    metric: str
    """The measured quantity, e.g. "spans per second, ReadableSpan -> durable store"."""
    unit: str
    """Unit of `ours` and `peer`, e.g. "spans/s", "bytes/span", "ms"."""
    ours: float | None
    peer_name: str | None = None
    """The comparison, e.g. "OTLP protobuf encode_spans"; None when there is none."""
    peer: float | None = None
    target: str | None = None
    """The target from the issue, in words, e.g. ">= 3x the peer's rate"; None when there is none."""
    met: bool | None = None
    """Whether the target is met; None when there is no target or it could not be measured."""
    notes: str = ""
    corpus: str = ""
    """What the measurement ran on, e.g. "corpus seed=0, 20,000 spans"."""
    ours_spread: float | None = None
    """Relative spread of our repeats (interquartile range / median), when repeated."""
    peer_spread: float | None = None
    repeats: int | None = None
    error: str | None = None
    """Set (by the harness) when the benchmark module failed; the row then carries no figures."""

    @property
    def ratio(self) -> float | None:
        """ours ÷ peer, or None when either is missing or the peer is not positive (no meaningful ratio)."""
        if self.ours is None or self.peer is None or self.peer <= 0:
            return None
        return self.ours / self.peer

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready values, with the derived ratio."""
        return {**asdict(self), "ratio": self.ratio}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Result":
        names = cls.__dataclass_fields__.keys()
        return cls(**{k: v for k, v in data.items() if k in names})


def error_result(benchmark: str, message: str) -> Result:
    """The row standing for a benchmark module that failed to import or raised."""
    return Result(benchmark=benchmark, metric="error", unit="", ours=None, met=False, error=message)


@dataclass(frozen=True)
class Sample:
    """Repeated measurements of one quantity (seconds per call, or a rate derived from them)."""

    values: tuple[float, ...] = field(default_factory=tuple)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def spread(self) -> float | None:
        """Interquartile range relative to the median (0.05 = 5 %); None with fewer than 3 values."""
        if len(self.values) < 3 or self.median == 0:
            return None
        q1, _, q3 = statistics.quantiles(self.values, n=4, method="inclusive")
        return abs(q3 - q1) / abs(self.median)

    def per_second(self, count: float) -> "Sample":
        """`count` items per measured second, for each repeat (a throughput sample)."""
        return Sample(tuple(count / v if v > 0 else float("inf") for v in self.values))

    def scaled(self, factor: float) -> "Sample":
        """Each value times `factor` (e.g. 1e3 for ms, 1/count for per-item time)."""
        return Sample(tuple(v * factor for v in self.values))

    def __len__(self) -> int:
        return len(self.values)


def _time_once(fn: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed(fn: Callable[[], Any], *, repeats: int, warmup: int = 1) -> Sample:
    """Seconds per call of `fn`, `repeats` times after `warmup` unmeasured calls."""
    for _ in range(warmup):
        fn()
    return Sample(tuple(_time_once(fn) for _ in range(repeats)))


def alternate(
    ours: Callable[[], Any], peer: Callable[[], Any], *, repeats: int, warmup: int = 1
) -> tuple[Sample, Sample]:
    """Seconds per call of `ours` and `peer`, measured alternately in this process.

    The order goes ours, peer, peer, ours, ... so slow drift (thermal, other load on a shared machine)
    falls on both sides equally. Each call is preceded by a garbage collection and is measured alone.
    """
    samples = interleave({"ours": ours, "peer": peer}, repeats=repeats, warmup=warmup)
    return samples["ours"], samples["peer"]


def interleave(
    cases: Mapping[str, Callable[[], Any]],
    *,
    repeats: int,
    warmup: int = 1,
    before: Callable[[], Any] | None = None,
) -> dict[str, Sample]:
    """Seconds per call of each case, the cases taking turns within every repeat.

    The order reverses on every other repeat (a b c, c b a, ...) so drift falls on every case alike.
    `before`, when given, runs untimed before each call (clearing a scratch folder, say).
    """
    names = list(cases)
    for _ in range(warmup):
        for name in names:
            if before is not None:
                before()
            cases[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(repeats):
        for name in names if i % 2 == 0 else reversed(names):
            if before is not None:
                before()
            times[name].append(_time_once(cases[name]))
    return {name: Sample(tuple(values)) for name, values in times.items()}
