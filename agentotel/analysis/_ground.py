"""Whether an answer's specific facts — ids, numbers, dates, URLs, e-mail addresses — came from somewhere.

A fact is grounded when the text the agent was given (tool results, documents, the task, earlier
messages) contains it, or when it is trivially derived from the numbers tool results hold: a count of a list,
a sum, difference, product, ratio or percentage of two of them, a total or average of a list's values,
a rounding; a date is also grounded when it is the day the run started (or the day either side). Small
numbers (list positions, counts up to 10), durations and years in prose are never judged: too easy to get right
by chance, too common to be a fabrication worth an alarm.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import re
from typing import Any, Iterable, Mapping

_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_MONTH_DAY = re.compile(_MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b", re.I)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH + r"(?:,?\s+(\d{4}))?\b", re.I)
# An identifier: letters and at least two digits in one token (A-1042, JD014600003, inv_88213).
_ID = re.compile(r"\b(?=[\w-]*\d[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{3,}\b")
_UNIT = re.compile(r"^\d+(?:st|nd|rd|th|am|pm|h|hrs?|min|s|ms|kg|g|km|m|cm|mm|mb|gb|kb|tb|x|k|px|d)$", re.I)
# A duration ("about 30 minutes", "within 14 days"): service terms and common knowledge, not a fact to fabricate.
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s*-\s*\d+)?\s*(?:business\s+|working\s+)?"
                       r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")

_SMALL = 10  # counts and positions up to this are never judged
_MAX_NUMBERS = 80  # distinct source numbers combined pairwise (80² products: still a millisecond or two)


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _dates(text: str) -> set[tuple[int | None, int, int]]:
    found: set[tuple[int | None, int, int]] = set()
    for y, m, d in _ISO_DATE.findall(text):
        found.add((int(y), int(m), int(d)))
    for month, day, year in _MONTH_DAY.findall(text):
        found.add((int(year) if year else None, _MONTHS.index(month[:3].lower()) + 1, int(day)))
    for day, month, year in _DAY_MONTH.findall(text):
        found.add((int(year) if year else None, _MONTHS.index(month[:3].lower()) + 1, int(day)))
    return found


def _date_known(date: tuple[int | None, int, int], known: set[tuple[int | None, int, int]]) -> bool:
    year, month, day = date
    return any(m == month and d == day and (year is None or y is None or y == year) for y, m, d in known)


def _counts_and_totals(values: Iterable[Any]) -> set[float]:
    """Lengths of every list in the tool outputs, and the totals of each list's numbers per field."""
    found: set[float] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            found.add(float(len(node)))
            numbers = [v for v in node if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if numbers:
                found.update((float(sum(numbers)), sum(numbers) / len(numbers)))
            by_field: dict[str, list[float]] = {}
            for item in node:
                if isinstance(item, Mapping):
                    for key, value in item.items():
                        if isinstance(value, (int, float)) and not isinstance(value, bool):
                            by_field.setdefault(key, []).append(value)
                walk(item)
            for values in by_field.values():  # a total and an average of each field
                found.update((float(sum(values)), sum(values) / len(values)))

    for value in values:
        walk(value)
    return found


def _data_numbers(values: Iterable[Any]) -> list[float]:
    """The numbers tool results hold as data (numeric fields, or every number of a result that is plain text)."""
    found: list[float] = []

    def walk(node: Any, top: bool) -> None:
        if isinstance(node, bool):
            return
        if isinstance(node, (int, float)):
            found.append(float(node))
        elif isinstance(node, str) and top:
            found.extend(v for t in _NUMBER.findall(node) if (v := _number(t)) is not None)
        elif isinstance(node, Mapping):
            for child in node.values():
                walk(child, False)
        elif isinstance(node, list):
            for child in node:
                walk(child, False)

    for value in values:
        walk(value, True)
    return list(dict.fromkeys(found))


def _derivable(numbers: list[float]) -> set[float]:
    """Sums, differences, products, ratios and percentages of two different numbers of the results. Numbers
    in prose (a line number, a version) are not combined: with enough of them any small number is a sum of two."""
    out = set(numbers)
    for a, b in itertools.permutations(numbers[:_MAX_NUMBERS], 2):
        out.update((a + b, a - b, a * b))
        if b:
            out.update((a / b, 100 * a / b))
    return out


def _matches(value: float, decimals: int, known: list[float]) -> bool:
    """Whether a known number rounds to `value` at its decimals (`known` sorted)."""
    tolerance = 0.5 * 10 ** -decimals + 1e-9  # the answer may have rounded it
    at = bisect.bisect_left(known, value - tolerance)
    return at < len(known) and known[at] <= value + tolerance


def ids(text: str) -> list[str]:
    """The identifiers in a text (letters and at least two digits in one token: A-1042, doc-0001), units aside."""
    return [t for t in _ID.findall(_URL.sub(" ", text)) if not _UNIT.match(t) and not _ISO_DATE.fullmatch(t)]


def ungrounded(answer: str, sources: str, outputs: Iterable[Any] = (), *, today: Any = None) -> list[str]:
    """The ids, numbers, dates, URLs and e-mail addresses of `answer` that `sources` neither contains nor
    trivially gives (`outputs`: the tool results as data, for counts and totals; `today`: when the run
    started, a date an agent may state without being told)."""
    haystack = sources.lower()
    missing: list[str] = []
    rest = answer
    for pattern in (_URL, _EMAIL):
        for token in pattern.findall(rest):
            token = token.rstrip(".,;:!?")
            bare = token.lower().split("://", 1)[-1].rstrip("/")
            if bare not in haystack:
                missing.append(token)
        rest = pattern.sub(" ", rest)
    known_dates: set[tuple[int | None, int, int]] | None = None
    for pattern in (_ISO_DATE, _MONTH_DAY, _DAY_MONTH):
        for match in pattern.finditer(rest):
            date = next(iter(_dates(match.group(0))), None)
            if date is None or match.group(0).lower() in haystack:
                continue
            if known_dates is None:
                known_dates = _dates(sources)
                if isinstance(today, (dt.date, dt.datetime)):
                    for shift in (-1, 0, 1):
                        day = (today if isinstance(today, dt.date) and not isinstance(today, dt.datetime) else today.date())
                        day = day + dt.timedelta(days=shift)
                        known_dates.add((day.year, day.month, day.day))
            if not _date_known(date, known_dates):
                missing.append(match.group(0))
        rest = pattern.sub(" ", rest)
    for token in _ID.findall(rest):
        if not _UNIT.match(token) and token.lower() not in haystack:
            missing.append(token)
    rest = _DURATION.sub(" ", _ID.sub(" ", rest))
    candidates = []
    for token in _NUMBER.findall(rest):
        value = _number(token)
        if value is None or value <= _SMALL or (value.is_integer() and 1900 <= value <= 2100 and "." not in token):
            continue
        candidates.append((token, value))
    if candidates:
        outputs = list(outputs)
        stated = {v for t in _NUMBER.findall(sources) if (v := _number(t)) is not None}
        known = sorted(stated | _derivable(_data_numbers(outputs)) | _counts_and_totals(outputs))
        for token, value in candidates:
            decimals = len(token.split(".", 1)[1]) if "." in token else 0
            if not _matches(value, decimals, known) and not _matches(value / 100, decimals + 2, known):
                missing.append(token)
    return list(dict.fromkeys(missing))

