"""Whether an answer's specific facts — ids, numbers, dates, URLs, e-mail addresses — came from somewhere.

A fact is grounded when the text the agent was given (tool results, documents, the task, earlier
messages) contains it, or when it is trivially derived from the numbers tool results hold: a count of a list,
a sum, difference, product, ratio or percentage of two of them, a total or average of a list's values,
a percentage change, a rounding, a unit conversion (km and miles, kg and pounds, Celsius and Fahrenheit, ...);
a total or average of one field over several results; a date is grounded in any format (ISO, with a time,
"15 June", 15.06.2026, 06/15/2026) when the sources hold that day in any format, or a day a period they state
away from one ("within 30 days" of a delivery), or when it is the day the run started (or the day either side); a clock time when the sources hold it (24-hour or am/pm). Small
numbers (list positions, counts up to 10), durations and years in prose are never judged: too easy to get right
by chance, too common to be a fabrication worth an alarm.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
# The local part at most 64 characters (RFC 5321's limit): unbounded, [\w.+-]+ ran from each position of a long
# run of such characters ("1.1.1.1...", 100 KB in a tool result) to its end looking for the '@': quadratic.
_EMAIL = re.compile(r"\b[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")  # also inside a timestamp (2026-06-15T14:30:00Z)
# A numeric date with a four-digit year first or last: 15.06.2026, 06/15/2026, 2026/06/15 (day and month may be
# either way round: a date is grounded when one reading is). Not 3.11.12: versions have no four-digit year.
_NUMERIC_DATE = re.compile(r"(?<![\w./])(?:(\d{4})([./])(\d{1,2})\2(\d{1,2})|(\d{1,2})([./])(\d{1,2})\6(\d{4}))(?![\w/]|\.\d)")
# A clock time: 14:30, 14:30:00, 4:45 pm (a timestamp's T14:30 too).
_TIME = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d(?:\.\d+)?)?(?:\s*([ap])\.?m\.?\b)?(?![\d:])", re.I)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_MONTH_DAY = re.compile(_MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b", re.I)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH + r"(?:,?\s+(\d{4}))?\b", re.I)
# An identifier: letters and at least two digits in one token (A-1042, JD014600003, inv_88213).
# (not a number joined to a word: "30-day", "24-hour", "128-bit" say what a number counts)
# Its look-aheads find the first two digits and the first letter within 40 characters, each by one way only:
# `[\w-]*\d[\w-]*\d` from every word boundary of a long run ("ACC-ACC-...", "1-1-1-...": 100 KB in an answer) ran
# to the run's end in many ways, and check took minutes.
_ID = re.compile(r"\b(?!\d+(?:\.\d+)?-[a-z]+\b)(?=(?:[^\W\d]|-){0,40}\d(?:[^\W\d]|-){0,40}\d)"
                 r"(?=(?:[^\WA-Za-z]|-){0,40}[A-Za-z])[A-Za-z0-9][\w-]{3,}\b")
# A date and hour as a timestamp starts ("2026-12-07T15:00:00Z" gives the token 2026-12-07T15): a time, no id.
_ISO_HOUR = re.compile(r"\d{4}-\d\d-\d\d[T_]\d\d", re.I)
_UNIT = re.compile(r"^\d+(?:st|nd|rd|th|am|pm|h|hrs?|min|s|ms|kg|g|km|m|cm|mm|mb|gb|kb|tb|x|k|px|d)$", re.I)
# A duration ("about 30 minutes", "within 14 days", "the 30-day window"): service terms and common knowledge, not a
# fact to fabricate.
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s*-\s*\d+)?(?:\s*|-)(?:business\s+|working\s+)?"
                       r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")

_SMALL = 10  # counts and positions up to this are never judged
# A version said as one: "driver 3.0", "version 2.1", "v1.4", "3.0 or later".
_VERSION_SAID = re.compile(r"\b(?:version|driver|release|v)\s*\d+\.\d+|\d+\.\d+\s+(?:or|and)\s+(?:later|newer|above|higher)", re.I)
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "mn": 1e6, "bn": 1e9}
_SCALE = re.compile(r"\s*(thousand|million|billion|trillion|mn|bn)\b", re.I)
# Words that say a number is rounded: "about 1,600", "roughly 260 miles", "nearly 9,000".
_HEDGE = re.compile(r"(?:\b(?:about|around|roughly|approximately|approx\.?|nearly|almost|some|close to|over|under|"
                    r"more than|less than|upwards of)|~|≈)\s*(?:[$€£¥]|[A-Z]{3}\s)?\s*$", re.I)
# A plain-text result with more distinct numbers than this is prose (a log, a page): its numbers ground an answer
# as stated, but are not combined (sums and ratios of dozens of line numbers and timestamps give any small number).
_PROSE_NUMBERS = 12
_MAX_NUMBERS = 80  # distinct source numbers combined pairwise (80² products: still a millisecond or two)


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _numeric_readings(match: re.Match[str]) -> list[tuple[int | None, int, int]]:
    """The days a numeric date may mean: year first is y/m/d; year last is d/m/y or m/d/y."""
    if match.group(1):
        return [(int(match.group(1)), int(match.group(3)), int(match.group(4)))]
    a, b, year = int(match.group(5)), int(match.group(7)), int(match.group(8))
    return [r for r in ((year, b, a), (year, a, b)) if 1 <= r[1] <= 12 and 1 <= r[2] <= 31]


def _dates(text: str) -> set[tuple[int | None, int, int]]:
    found: set[tuple[int | None, int, int]] = set()
    for y, m, d in _ISO_DATE.findall(text):
        found.add((int(y), int(m), int(d)))
    for match in _NUMERIC_DATE.finditer(text):
        found.update(_numeric_readings(match))
    for month, day, year in _MONTH_DAY.findall(text):
        found.add((int(year) if year else None, _MONTHS.index(month[:3].lower()) + 1, int(day)))
    for day, month, year in _DAY_MONTH.findall(text):
        found.add((int(year) if year else None, _MONTHS.index(month[:3].lower()) + 1, int(day)))
    return found


def _times(match: re.Match[str]) -> list[tuple[int, int]]:
    """The (hour, minute) a clock time may mean on a 24-hour clock (4:45 without am/pm: 4:45 or 16:45)."""
    hour, minute, half = int(match.group(1)), int(match.group(2)), (match.group(3) or "").lower()
    if half:
        return [((hour % 12) + (12 if half == "p" else 0), minute)]
    return [(hour, minute), (hour + 12, minute)] if 1 <= hour < 12 else [(hour, minute)]


# A period the sources state ("within 30 days", "a 14-day window", "2 weeks"): a date that far from a date they
# hold is worked out from them (delivered 2026-11-10, refunds within 30 days: open until 2026-12-10).
_PERIOD = re.compile(r"(?<![\w.])(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)[\s-]*"
                     r"(?:calendar\s+|business\s+|working\s+|full\s+)?(day|week|month|year)s?\b", re.I)
_NUMBER_WORDS = {w: n for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)}


# A count an answer multiplies by - never judged itself, it scales only a figure the answer grounds: "x 5 days",
# "for 3 nights", "2 adults".
_COUNT_OF = re.compile(r"(?:[x\u00d7]\s*|\bfor\s+)?\b(\d{1,2})\s+(?:calendar\s+)?(?:days?|nights?|people|persons?|guests?|adults?|"
                       r"children|items?|units?|months?|weeks?|seats?|rooms?|tickets?|pieces?|hours?)\b", re.I)
_DAY_NEXT = re.compile(r"\bthe\s+(?:day|night)\s+(?:before|after)\b|\b(?:next|previous|following)\s+day\b", re.I)
_DAYS_FIELD = re.compile(r"\"[a-z_]*days?(?:_[a-z]+)*\"\s*:\s*(\d{1,3})\b", re.I)


def _shifted(known: set[tuple[int | None, int, int]], sources: str) -> set[tuple[int | None, int, int]]:
    """The known dates moved by each period the sources state, either way (a few dates, a few periods)."""
    stated = [(int(n) if n.isdigit() else _NUMBER_WORDS[n.lower()], unit.lower()) for n, unit in _PERIOD.findall(sources)[:20]]
    periods = {n * (7 if unit == "week" else 1) for n, unit in stated if unit in ("day", "week")} - {0}
    months = {n * (12 if unit == "year" else 1) for n, unit in stated if unit in ("month", "year")} - {0}
    # a record's day count ("days_supply": 30), and that with another period on top: a last fill of 2026-11-20 with 30
    # days' supply runs out 2026-12-20, and "no earlier than 2 days before" it is 2026-12-18
    if _DAY_NEXT.search(sources):  # "out the day before the conference starts, back the day after it ends"
        periods.add(1)
    counts = {int(n) for n in _DAYS_FIELD.findall(sources)[:10]} - {0}
    periods |= counts | {c + p for c in counts for p in periods} | {c - p for c in counts for p in periods if c > p}
    out: set[tuple[int | None, int, int]] = set()
    for year, month, day in sorted(k for k in known if k[0] is not None)[:50]:
        try:
            start = dt.date(year, month, day)
        except ValueError:
            continue
        for days in sorted(periods)[:40]:
            for moved in (start + dt.timedelta(days=days), start - dt.timedelta(days=days)):
                out.add((moved.year, moved.month, moved.day))
                # (and the day after a window closes: "3 in any 365 days" from 2025-12-22 frees 2026-12-23)
                after = moved + dt.timedelta(days=1)
                out.add((after.year, after.month, after.day))
        for count in sorted(months)[:10]:  # "held six months": issued 2026-07-20, a test from 2027-01-20
            for sign in (1, -1):
                total = start.year * 12 + start.month - 1 + sign * count
                year2, month2 = divmod(total, 12)
                moved = dt.date(year2, month2 + 1, min(day, _month_days(year2, month2 + 1)))
                out.add((moved.year, moved.month, moved.day))
    return out


def _month_days(year: int, month: int) -> int:
    return ((dt.date(year + month // 12, month % 12 + 1, 1)) - dt.date(year, month, 1)).days


# A length the sources or the answer give ("a 30-minute call", "minutes": 30, "1 hour"): a time that far from a time
# they hold is worked out (11:00 for 30 minutes ends at 11:30).
_LENGTH = re.compile(r"(?<![\w.])(\d{1,3})[\s-]*(minutes?|mins?|hours?|hrs?|h)\b|\"(?:minutes|mins|duration_minutes|"
                     r"length_minutes|duration_min)\"\s*:\s*(\d{1,3})", re.I)
# A place whose time a text gives: "Europe/Berlin", "New York time", "in Berlin" (an IANA zone's city).
_ZONE = re.compile(r"\b([A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)\b|\b(UTC|GMT)\b|\b([A-Z][a-z]+(?: [A-Z][a-z]+)?)\b")
_AREAS = ("Europe", "America", "Asia", "Australia", "Africa", "Pacific", "Atlantic")


def _clock_moved(known: set[tuple[int, int]], sources: str, answer: str, today: Any) -> set[tuple[int, int]]:
    """The known clock times moved by a length the texts give, and from one time zone the texts name into
    another ("9:00 New York time" for 15:00 in Berlin), either way."""
    from zoneinfo import ZoneInfo

    minutes = {int(n or k) * (60 if (unit or "m").lower().startswith("h") else 1) for n, unit, k in _LENGTH.findall(sources + "\n" + answer)[:20]}
    zones: set[str] = set()
    for iana, utc, words in _ZONE.findall(answer + "\n" + sources[:20000]):
        if iana or utc:
            zones.add(iana or "UTC")
        elif words and len(zones) < 8:
            for area in _AREAS:  # a city name: the zone named after it
                try:
                    ZoneInfo(f"{area}/{words.replace(' ', '_')}")
                except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
                    continue
                zones.add(f"{area}/{words.replace(' ', '_')}")
                break
    day = today if isinstance(today, dt.datetime) else dt.datetime.combine(today, dt.time(12)) if isinstance(today, dt.date) \
        else dt.datetime.now()
    offsets = set()
    for zone in zones:
        try:
            shift = day.replace(tzinfo=None).replace(tzinfo=ZoneInfo(zone)).utcoffset()
        except (KeyError, ValueError, OSError):
            continue
        if shift is not None:
            offsets.add(int(shift.total_seconds() // 60))
    minutes |= {abs(a - b) for a in offsets for b in offsets} - {0}
    out: set[tuple[int, int]] = set()
    for hour, minute in known:
        for by in sorted(minutes)[:20]:
            for moved in (hour * 60 + minute + by, hour * 60 + minute - by):
                out.add(divmod(moved % (24 * 60), 60))
    return out


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
    # A total and an average of one field over several results (three calls' prices summed).
    by_key: dict[str, list[float]] = {}

    def fields(node: Any) -> None:
        if isinstance(node, Mapping):
            for key, child in node.items():
                if isinstance(child, (int, float)) and not isinstance(child, bool):
                    by_key.setdefault(str(key), []).append(float(child))
                else:
                    fields(child)
        elif isinstance(node, list):
            for child in node:
                fields(child)

    for value in values:
        fields(value)
    for numbers in by_key.values():
        if len(numbers) > 1:
            found.update((sum(numbers), sum(numbers) / len(numbers)))
    return found


# Units an answer may restate a number in: km/miles, kg/pounds, m/feet, cm/inches, litres/gallons, ounces/grams.
_FACTORS = (1.609344, 2.20462, 3.28084, 2.54, 3.78541, 28.3495)


def _data_numbers(values: Iterable[Any]) -> list[float]:
    """The numbers tool results hold as data (numeric fields, or every number of a short result that is plain text)."""
    found: list[float] = []

    def walk(node: Any, top: bool) -> None:
        if isinstance(node, bool):
            return
        if isinstance(node, (int, float)):
            found.append(float(node))
        elif isinstance(node, str) and top:
            numbers = [v for t in _NUMBER.findall(node) if (v := _number(t)) is not None]
            if len(set(numbers)) <= _PROSE_NUMBERS:  # a short reading ("18.5 C, wind 12 km/h"), not a log or a page
                found.extend(numbers)
        elif isinstance(node, Mapping):
            for child in node.values():
                walk(child, False)
        elif isinstance(node, list):
            for child in node:
                walk(child, False)

    for value in values:
        walk(value, True)
    return list(dict.fromkeys(found))


# A list of figures a text writes out: "Passengers (kg): 92, 78, 85, 70, 88, 64".
_PROSE_LIST = re.compile(r"(?<![\w.,])\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?){2,}(?![\w.]|,\d)")


def _prose_totals(sources: str) -> set[float]:
    """The total of each list of figures the sources write out, and of two such lists together (the passengers' and
    the bags' kilograms of one brief: 564)."""
    sums = [sum(float(n) for n in re.findall(r"\d+(?:\.\d+)?", m.group(0))) for m in _PROSE_LIST.finditer(sources)][:10]
    return set(sums) | {a + b for a, b in itertools.combinations(sums, 2)}


def _derivable(numbers: list[float], totals: Iterable[float] = (), *, units: bool = True) -> set[float]:
    """Sums, differences, products, ratios, percentages and percentage changes of two different numbers of the
    results, ratios of two totals, shares of a total, and each number in other units. Numbers in prose (a line number, a version)
    are not combined: with enough of them any small number is a sum of two."""
    out = set(numbers)
    for a in numbers[:_MAX_NUMBERS] if units else ():  # the number in other units
        out.update(a * f for f in _FACTORS)
        out.update(a / f for f in _FACTORS)
        out.update((a * 1.8 + 32, (a - 32) / 1.8))  # Celsius and Fahrenheit
    for a, b in itertools.permutations(numbers[:_MAX_NUMBERS], 2):
        out.update((a + b, a - b, a * b))
        if b:
            out.update((a / b, 100 * a / b, 100 * abs(a - b) / abs(b)))  # a ratio, a percentage, a percentage change
    totals = list(totals)[:_MAX_NUMBERS]
    for a, b in itertools.permutations(totals, 2):
        if b:
            out.add(a / b)  # a ratio of two totals: revenue over orders of two quarters, an average order
    for a, b in itertools.product(numbers[:_MAX_NUMBERS], totals):
        if b:
            out.update((a / b, 100 * a / b))  # a share of a total: one region's revenue over all regions'
    return out


# A share the sources name: "capped at half of the last net pay", "a third of", "15% off".
SHARE_WORDS = {"half": 0.5, "a third": 1 / 3, "one third": 1 / 3, "two thirds": 2 / 3, "a quarter": 0.25, "one quarter": 0.25,
                "three quarters": 0.75}
_PERCENT = re.compile(r"(?<![\d.])(\d{1,2}(?:\.\d+)?)\s*(?:%|percent\b)")


def _shares(numbers: list[float], sources: str) -> set[float]:
    """Each number of the results times a share the sources name (half of 1318.62 is 659.31), and what is left of it."""
    shares = {v for words, v in SHARE_WORDS.items() if re.search(rf"\b{words}\b", sources)}
    shares |= {float(p) / 100 for p in _PERCENT.findall(sources)[:10]}
    return {n * f for n in numbers[:_MAX_NUMBERS] for s in shares for f in (s, 1 - s)}


# A factor the sources write as a formula: "biweekly gross x 26 / 12", "weekly pay * 52 / 12".
_WRITTEN_FACTOR = re.compile(r"[x×*]\s*(\d+(?:\.\d+)?)\s*[/÷]\s*(\d+(?:\.\d+)?)")


def _by_written_factor(numbers: list[float], sources: str) -> set[float]:
    """Each number of the results times a factor a formula of the sources writes (5192.31 x 26 / 12 = 11,250.00),
    and the mean of two of them so scaled (two pay stubs' gross, averaged, then annualised and made monthly)."""
    factors = {a / b for x, y in _WRITTEN_FACTOR.findall(sources)[:10] if (a := float(x)) and (b := float(y))}
    out = {n * f for n in numbers[:_MAX_NUMBERS] for f in factors}
    out |= {(a + b) / 2 * f for a, b in itertools.combinations(numbers[:_MAX_NUMBERS], 2) for f in factors}
    return out


# A conversion the sources state: "1 kg = 2.2046 lb", "1 ft = 0.3048 m", "(1 gallon is 3.785 l)".
_STATED_UNIT = re.compile(r"\b1\s*([a-z\u00b0]{1,8})\.?\s*(?:=|is|equals)\s*(\d+(?:\.\d+)?)\s*([a-z\u00b0]{1,8})\b")


def _by_stated_unit(haystack: str) -> set[float]:
    """Each figure the sources give in a unit a stated conversion names, in the other unit (205 lb with "1 kg =
    2.2046 lb": 92.99 kg; 38 ft with "1 ft = 0.3048 m": 11.58 m). `haystack` is lower case."""
    out: set[float] = set()
    for one, factor, other in _STATED_UNIT.findall(haystack)[:10]:
        rate = float(factor)
        if not rate:
            continue
        for unit, scale in ((one, rate), (other, 1 / rate)):
            for token in re.findall(rf"(\d[\d,]*(?:\.\d+)?)\s*{re.escape(unit)}\b", haystack)[:_MAX_NUMBERS]:
                if (value := _number(token)) is not None:
                    out.add(value * scale)
    return out


def _in_thousands(totals: set[float], numbers: list[float]) -> set[float]:
    """A list's total, alone or with one more figure of the results, a thousandth of it: the day's loads in kg and
    this one, told in tonnes (9800 + 10400 + 7420 kg: 27.62 t)."""
    listed = sorted(totals)[:_MAX_NUMBERS]
    return {t / 1000 for t in listed} | {(t + n) / 1000 for t in listed for n in numbers[:_MAX_NUMBERS]}


# A field in a minor unit (net_cents 1973657, latency_ms 5120, fee_bps 25): the figure in the major unit is read out.
_MINOR_KEY = re.compile(r"(?:^|_)(cents?|pence|minor|ct|ms|millis|bps)$", re.I)
_MINOR = {"cent": 100, "cents": 100, "pence": 100, "minor": 100, "ct": 100, "ms": 1000, "millis": 1000, "bps": 100}


def _minor_units(values: Iterable[Any]) -> set[float]:
    """The numbers of fields named for a minor unit, in the major one (1973657 cents: 19736.57)."""
    out: set[float] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for key, child in node.items():
                unit = _MINOR_KEY.search(str(key))
                if unit and isinstance(child, (int, float)) and not isinstance(child, bool):
                    out.add(child / _MINOR[unit.group(1).lower()])
                else:
                    walk(child)
        elif isinstance(node, list):
            for child in node[:1000]:
                walk(child)

    for value in values:
        walk(value)
    return out


def _matches(value: float, tolerance: float, known: list[float]) -> bool:
    """Whether a known number rounds to `value` (within the tolerance its precision gives; `known` sorted)."""
    tolerance += 1e-9
    at = bisect.bisect_left(known, value - tolerance)
    return at < len(known) and known[at] <= value + tolerance


def ids(text: str) -> list[str]:
    """The identifiers in a text (letters and at least two digits in one token: A-1042, doc-0001), units aside."""
    return [t for t in _ID.findall(_URL.sub(" ", text)) if not _UNIT.match(t) and not _ISO_DATE.fullmatch(t)
            and not _ISO_HOUR.fullmatch(t)]


# A product the answer works out itself: "3 passengers x $50", "2 × 49.90", "4 nights at 120 EUR".
# Tried only where a number starts (not after a digit, nor after a digit and a comma): a match starting inside
# a number is one starting at its first digit, cut short, so the matches are the same; tried at every digit, a
# long run of digits cost quadratic time (100,000 of them: 81 s of `agentotel check`).
_PRODUCT = re.compile(r"(?<!\d)(?<!\d,)(\d[\d,]*(?:\.\d+)?)\s*(?:[a-z]+\s+){0,2}(?:x|×|\*|times|at)\s*[$€£]?\s*(\d[\d,]*(?:\.\d+)?)", re.I)


def _worked_in_answer(answer: str, known: set[float]) -> set[float]:
    """The products an answer shows its working for ("$150.00 (3 passengers x $50)") of numbers known otherwise:
    a figure so worked out is grounded as far as its factors are."""
    out = set()
    for match in _PRODUCT.finditer(answer):
        a, b = _number(match.group(1)), _number(match.group(2))
        if a is not None and b is not None and any(abs(a - k) < 1e-9 for k in known) and any(abs(b - k) < 1e-9 for k in known):
            out.add(a * b)
    # a count the answer multiplies by what it names ("48 x Ergo task chair ... comes to $4,272.00"): the count
    # times any known figure (the chair's unit price)
    for match in _COUNT_TIMES.finditer(answer):
        a = _number(match.group(1))
        if a is not None and any(abs(a - k) < 1e-9 for k in known):
            out.update(a * k for k in list(known)[:_MAX_NUMBERS])
    return out | _summed_in_answer(answer, known | out)


# A total the answer gives after its parts: "... is $256.00; ... the one-way fee to LAX is $150.00. New total: $406.00".
_TOTAL_SAID = re.compile(r"\b(?:total|in\s+all|altogether|comes\s+to|sum|overall)\b[^.;\d]{0,20}$", re.I)


def _summed_in_answer(answer: str, known: set[float]) -> set[float]:
    """A total an answer states that is the sum of two to four known figures it stated before it: grounded as far as
    its parts are (the sum of everything a tool gave is _counts_and_totals' to find)."""
    figures = [(m.start(), v) for m in _NUMBER.finditer(answer) if (v := _number(m.group(0))) is not None and v > _SMALL]
    out: set[float] = set()
    for n, (at, value) in enumerate(figures):
        if not _TOTAL_SAID.search(answer, max(0, at - 40), at):
            continue
        parts = [v for _a, v in figures[max(0, n - 8):n] if any(abs(v - k) < 1e-9 for k in known)]
        if any(abs(sum(c) - value) < 0.005 for size in (2, 3, 4) for c in itertools.combinations(parts, size)):
            out.add(value)
    return out


_COUNT_TIMES = re.compile(r"(?<![\d.,])(\d{1,5})\s*(?:x|×)\s+(?=[A-Za-z])")


# A sentence and the mark ending it, one after another (each match takes a whole one: linear on any text).
_CLAUSE = re.compile(r"[^.!?\n]*(?:[.!?\n]|$)")


def _ahead(date: tuple[int | None, int, int], day: dt.date) -> bool:
    """Whether a day (its year may be unsaid) falls within the eight weeks after `day`."""
    year, month, dom = date
    for y in ([year] if year else [day.year, day.year + 1]):
        try:
            gap = (dt.date(y, month, dom) - day).days
        except ValueError:
            continue
        if 0 <= gap <= 56:
            return True
    return False


_TIMES_PREFIX = re.compile(r"(?<![\w-])[x×](?=\d+(?:\.\d+)?(?![\w-]))", re.I)


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
    shifted: set[tuple[int | None, int, int]] | None = None
    day = today.date() if isinstance(today, dt.datetime) else today if isinstance(today, dt.date) else None
    for pattern in (_ISO_DATE, _NUMERIC_DATE, _MONTH_DAY, _DAY_MONTH):
        # days a question offers to choose from ("Which date would you like - Monday 7, Tuesday 8 or Wednesday 9
        # December?") are proposals, not facts: the days ahead in a sentence that asks
        asking = [m.span() for m in _CLAUSE.finditer(rest) if m.group(0).endswith("?")] if "?" in rest else []
        for match in pattern.finditer(rest):
            readings = _numeric_readings(match) if pattern is _NUMERIC_DATE else list(_dates(match.group(0)))
            if not readings or match.group(0).lower() in haystack:
                continue
            if day is not None and any(a <= match.start() < b for a, b in asking) and all(
                    _ahead(date, day) for date in readings):
                continue
            if known_dates is None:
                known_dates = _dates(sources)
                if isinstance(today, (dt.date, dt.datetime)):
                    for shift in (-1, 0, 1):
                        day = (today if isinstance(today, dt.date) and not isinstance(today, dt.datetime) else today.date())
                        day = day + dt.timedelta(days=shift)
                        known_dates.add((day.year, day.month, day.day))
            if not any(_date_known(date, known_dates) for date in readings):
                if shifted is None:
                    shifted = _shifted(known_dates, sources)
                if not any(_date_known(date, shifted) for date in readings):
                    missing.append(match.group(0))
        rest = pattern.sub(" ", rest)
    known_times, worked_out = None, None
    for match in _TIME.finditer(rest):
        if known_times is None:
            known_times = {t for m in _TIME.finditer(sources) for t in _times(m)}
        if not set(_times(match)) & known_times:
            if worked_out is None:
                worked_out = _clock_moved(known_times, sources, answer, today)
            if not set(_times(match)) & worked_out:
                missing.append(match.group(0).strip())
    rest = _TIME.sub(" ", rest)
    rest = _TIMES_PREFIX.sub(" ", rest)  # a count written "x130" (PLB-12 x130) is the number 130, no id
    for token in _ID.findall(rest):
        # (a version written with its mark - v2026.1 for version 2026.1 - is the version)
        if not _UNIT.match(token) and token.lower() not in haystack and not (token[:1] in "vV" and token[1:2].isdigit()
                                                                              and token[1:].lower() in haystack):
            missing.append(token)
    rest = _DURATION.sub(" ", _ID.sub(" ", rest))
    candidates = []
    for match in _NUMBER.finditer(rest):
        token = match.group(0)
        value = _number(token)
        if value is None or (value.is_integer() and 1900 <= value <= 2100 and "." not in token):
            continue
        scale = _SCALE.match(rest, match.end())
        multiplier = _SCALES[scale.group(1).lower()] if scale else 1
        if value * multiplier <= _SMALL and not (not value.is_integer() and rest.startswith("%", match.end())) \
                and not ("." in token and _VERSION_SAID.search(rest[max(0, match.start() - 12):match.end() + 12])):
            continue  # a count or a position; a percentage with decimals (0.6 %) is a measurement, judged; so is a
            # version ("driver 3.0 or later"), which is no count
        # The precision the answer claims: its decimals ("14.1 million": to the hundred thousand); a hedged
        # round number ("about 1,600", "roughly 260") only to its last non-zero digit.
        decimals = len(token.split(".", 1)[1]) if "." in token else 0
        if not decimals and _HEDGE.search(rest, max(0, match.start() - 24), match.start()):
            digits = token.replace(",", "")
            decimals = -(len(digits) - len(digits.rstrip("0")))
        percent = rest.startswith("%", match.end())
        candidates.append((token + (scale.group(0) if scale else ""), value * multiplier, 0.5 * 10 ** -decimals * multiplier, percent))
    if candidates:
        outputs = list(outputs)
        stated = {v for t in _NUMBER.findall(sources) if (v := _number(t)) is not None}
        totals = _counts_and_totals(outputs) | _prose_totals(sources)
        numbers, ratios = _data_numbers(outputs), sorted(totals - {0.0})
        known = stated | _derivable(numbers, ratios) | totals
        known |= _worked_in_answer(answer, stated | known)
        known |= _shares(numbers, haystack) | _minor_units(outputs) | _by_written_factor(numbers, haystack) | _by_stated_unit(haystack)
        known |= _in_thousands(totals, numbers)
        known = sorted(known | {-v for v in known if v < 0})  # an answer says "-12.5" or "12.5 below zero": unsigned
        # A percentage is no quantity in other units: it is stated, or a ratio, change, sum or difference.
        plain = sorted((k := stated | _derivable(numbers, ratios, units=False) | totals) | {-v for v in k if v < 0}) if any(
            c[3] for c in candidates) else known
        unmatched = [(token, value, tolerance, percent) for token, value, tolerance, percent in candidates
                     if not _matches(value, tolerance, plain if percent else known) and not _matches(value / 100, tolerance / 100, plain if percent else known)]
        if unmatched:
            # (a percentage is a measure or a rate, no line of a quote; a small figure is a sum of anything)
            worked = [(token, value, tolerance) for token, value, tolerance, percent in unmatched if not percent and value > _SMALL]
            left = set(_worked_through(worked, [value for _t, value, tolerance, _p in candidates if _matches(value, tolerance, known)],
                                       sorted(stated | set(numbers)), sorted({float(p) for p in _PERCENT.findall(haystack)})[:10],
                                       [v for t in _NUMBER.findall(rest) if (v := _number(t)) is not None],
                                       _priced(rest, haystack), [float(n) for n in _COUNT_OF.findall(answer)][:8]))
            unmatched = [u for u in unmatched if u[3] or u[1] <= _SMALL or u[:3] in left]
        missing += [token.strip() for token, _v, _t, _p in unmatched]
    return list(dict.fromkeys(missing))


def _one_step(a: float, b: float) -> tuple[float, ...]:
    """What one step of a quote's arithmetic makes of a figure and a number: a small number only scales it (3 floors
    x 35) or is a rate (1.5% of it) - added, any figure is a sum of two."""
    if b > _SMALL:
        return (a * b, a + b, a - b, b - a, a * b / 100, a / b)
    return (a * b / 100, a * b, a / b) if b >= 2 else (a * b / 100,)


# A count and what it counts in an answer ("3 adults"), and a money rate the sources give beside a word ("Adult (16
# and over) GBP 34.00", "Pets GBP 15.00 each").
_COUNTED = re.compile(r"(?<![\d.,])(\d{1,2})\s+([a-z]{3,})", re.I)
_RATE = r"\b{}[a-z]*\b[^.\n]{{0,60}}?(?:gbp|usd|eur|chf|[$\u20ac\u00a3])\s?(\d[\d,]*(?:\.\d+)?)"
_MONEY_RATE = re.compile(r"(?:gbp|usd|eur|chf|[$\u20ac\u00a3])\s?(\d[\d,]*(?:\.\d+)?)")


def _priced(answer: str, haystack: str) -> tuple[list[float], list[float]]:
    """The lines an answer counts at the sources' rates (3 adults at the adult fare: 102.0), and the sources' money
    rates (at most 40): what a total of a quote's lines is made of."""
    lines = []
    for count, word in _COUNTED.findall(answer):
        rate = re.search(_RATE.format(re.escape(word.lower()[:5])), haystack)
        if rate is not None and (value := _number(rate.group(1))) is not None:
            lines.append(int(count) * value)
    rates = [v for t in dict.fromkeys(_MONEY_RATE.findall(haystack)) if (v := _number(t)) is not None][:40]
    return lines[:8], rates


def _worked_through(unmatched: list[tuple[str, float, float]], grounded: list[float], base: list[float],
                    percents: list[float] = (), said: list[float] = (), priced: tuple[list[float], list[float]] = ((), ()),
                    counts: list[float] = ()) -> list[tuple[str, float, float]]:
    """The answer's figures still unfounded once each is tried as one step of arithmetic on a figure the answer states
    and grounds (or has worked out) and a number of the sources: a quote's lines worked from a rate the instructions
    give ("35.00 m3 at EUR 42.00/m3: EUR 1470.00", "3 floors" x "EUR 35 per floor"), a value less an excluded part,
    a percentage of a figure worked out before it, the total of the lines, or a product of two or three factors the
    answer writes out ("5 nights at GBP 2.60 per metre on 12 m: GBP 156.00"), each grounded or a whole number a
    grounded one rounds to (11.58 m charged as 12), or a total of lines the answer counts at the sources' rates and
    figures it grounds, with at most one more line at a rate the sources give ("Tall camper (GBP 164.00) plus 3
    adults and the dog = GBP 281.00": 164 + 3 x 34 + 15). Only from figures the answer itself grounds: any two
    numbers of the sources combine into too much."""
    base = base[:_MAX_NUMBERS]
    chain = list(dict.fromkeys(grounded))
    sources, lines = set(base), set(priced[0])
    for _round in range(3):  # a figure worked from one worked out later in the text
        left = []
        whole = {float(f(a)) for a in chain for f in (math.floor, math.ceil)}
        factors = [v for v in dict.fromkeys(said) if v > 0 and (v in sources or v in whole or v in chain)]
        for token, value, tolerance in unmatched:
            tol = tolerance + 1e-9
            # (a small number only scales: "3 floors" x 35; added, any figure is a sum of two)
            if any(abs(r - value) <= tol for a in chain for b in (*base, *chain) if (a != b or a in base) and b > 0
                   for r in (_one_step(a, b))):
                chain.append(value)
            elif len(chain) >= 2 and any(abs(sum(c) - value) <= tol for size in (3, 4, 5, 6) for c in itertools.combinations(chain[-8:], size)):
                chain.append(value)  # the total of the lines before it
            elif any(abs(a * b * p / 100 - value) <= tol for p in percents for a in chain for b in (*base, *chain) if b > 0):
                chain.append(value)  # a rate of a product: 50% of 13 months at 42
            elif any(abs(math.prod(c) - value) <= tol for size in (2, 3) for c in itertools.combinations(factors[:12], size)):
                chain.append(value)  # the factors written out beside it
            elif any(abs(a * n - value) <= tol for a in factors[:12] for n in counts):
                chain.append(value)  # a grounded rate times a count the answer writes ("USD 79.00 x 5 days")
            elif lines and any(abs(sum(c) + extra - value) <= tol for size in (1, 2, 3)
                               for c in itertools.combinations([*priced[0], *chain[-8:]], size) if lines.intersection(c)
                               for extra in (0.0, *priced[1])):
                chain.append(value)  # the lines counted at the rules' rates
            else:
                left.append((token, value, tolerance))
        if len(left) == len(unmatched):
            break
        unmatched = left
    return unmatched



# A figure stated under a label of its own ("REVENUE: 1,372,968.45 EUR", "total = 88.20"): a slot of an answer form.
_LABELLED = re.compile(r"(?<![\w])([A-Za-z][A-Za-z_ ]{0,30}?)\s*[:=]\s*[$€£¥]?\s*(" + _NUMBER.pattern + ")")


def labelled_figures(answer: str) -> list[tuple[str, float, float]]:
    """(label, value, tolerance) of each figure of `answer` that a label introduces, above the small numbers never
    judged; a label said twice keeps its first figure."""
    found: dict[str, tuple[str, float, float]] = {}
    for match in _LABELLED.finditer(answer):
        label, token = " ".join(match.group(1).lower().split()), match.group(2)
        value = _number(token)
        if value is None or abs(value) <= _SMALL or label in found:
            continue
        decimals = len(token.split(".", 1)[1]) if "." in token else 0
        found[label] = (label, value, 0.5 * 10 ** -decimals)
    return list(found.values())


def holds(payload: Any, value: float, tolerance: float) -> bool:
    """Whether a tool result holds the figure as it is (a number of its data, or of its short text)."""
    return _matches(value, tolerance, sorted(_data_numbers([payload])))


# A figure with its unit: a number and the words that say what it counts ("3 days a week", "49 USD per seat per
# month", "600 EUR a year"), up to the first function word. Ids, dates and versions are no figures: a number
# inside a token (D-101, 2024-03-01, 5.4.1) is skipped.
_FIGURE = re.compile(r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w/-]|[.,]\d)[ \t]*"
                     r"(%|[A-Za-z][\w'’-]*(?:[ \t]+[A-Za-z][\w'’-]*){0,3})")
_FUNCTION_WORDS = frozenset("and or the is are was were be with for from in on to which that if but as of by at it its this "
                            "these so then than when while after before until across about over under between among within "
                            "into onto via against around".split())


def figures(text: str) -> list[tuple[float, tuple[str, ...], int]]:
    """(value, unit words, offset) of each figure of `text` with a unit: up to three words, lower case, singular,
    cut at the first function word ("kept for 90 days (log retention)": days). Years in prose are no figures."""
    out = []
    for match in _FIGURE.finditer(text):
        token, value = match.group(1), _number(match.group(1))
        if value is None or (value.is_integer() and 1900 <= value <= 2100 and "," not in token):
            continue
        words: list[str] = []
        for word in match.group(2).lower().split():
            if word in _FUNCTION_WORDS or len(words) == 3:
                break
            words.append(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
        if words:
            out.append((value, tuple(words), match.start()))
    return out


def same_unit(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two figures count the same thing: their unit words agree as far as both go ("USD" and "USD per
    seat" do; "EUR a month" and "EUR a year" do not)."""
    k = min(len(a), len(b))
    return k > 0 and a[:k] == b[:k]


# ---- figures in a unit of measure ---------------------------------------------------------------------------------
# Units of one dimension a figure may be written in, as texts and field names spell them: a figure carried from one
# into another unchanged ("205 lb" booked as weight_kg 205) or compared with one in another ("6.0 kg <= 11 lb") skipped
# a conversion. Bare "tons" is left out: it is a short ton to some writers and a tonne to others.
_MEASURE_UNITS = {
    "kg": ("mass", r"kgs?|kilos?|kilograms?"), "lb": ("mass", r"lbs?|pounds?"),
    "t": ("mass", r"t|tonnes?|metric\s+tons?"), "short ton": ("mass", r"short\s+tons?"),
    "m": ("length", r"m|metres?|meters?"), "ft": ("length", r"ft|foot|feet"),
    "cm": ("length", r"cm|centimet(?:re|er)s?"), "in": ("length", r"inch(?:es)?"),
    "km": ("distance", r"km|kilomet(?:re|er)s?"), "mi": ("distance", r"mi|miles?"),
    "l": ("volume", r"l|litres?|liters?"), "gal": ("volume", r"gal|gallons?|usg|us\s+gallons?"),
    "c": ("temperature", r"°\s?c|º\s?c|deg(?:rees)?\s+c|celsius"), "f": ("temperature", r"°\s?f|º\s?f|deg(?:rees)?\s+f|fahrenheit"),
}
_UNIT_NAMES = {alias: unit for unit, (_dim, forms) in _MEASURE_UNITS.items() for alias in forms.replace("\\s+", " ").split("|")}
_QUANTITY = re.compile(r"(?<![\w.$£€])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s?(" + "|".join(
    forms for _unit, (_dim, forms) in sorted(_MEASURE_UNITS.items(), key=lambda u: -len(u[1][1]))) + r")(?![\w/])", re.I)
# A field named for its unit: weight_kg, loa_ft, peak_c, tank_capacity_l, net_tonnes ("_in" is no unit: check_in).
_KEY_UNITS = {"kg": "kg", "kgs": "kg", "lb": "lb", "lbs": "lb", "t": "t", "tonnes": "t", "m": "m", "metres": "m",
              "meters": "m", "ft": "ft", "feet": "ft", "cm": "cm", "inches": "in", "km": "km", "mi": "mi",
              "miles": "mi", "l": "l", "litres": "l", "liters": "l", "gal": "gal", "gallons": "gal", "usg": "gal",
              "c": "c", "celsius": "c", "f": "f", "fahrenheit": "f"}


def unit_of(name: str) -> str | None:
    """The unit a written unit ("pounds", "°C") or a field's name (weight_kg, loa_ft) stands for, or None."""
    low = re.sub(r"\s+", " ", name.lower().strip())
    if low in _UNIT_NAMES:
        return _UNIT_NAMES[low]
    for alias, unit in _UNIT_NAMES.items():
        if re.fullmatch(_MEASURE_UNITS[unit][1], low):
            return unit
    tail = re.split(r"[_.\s-]", low)[-1] if re.search(r"[_.\s-]", low) else None
    return _KEY_UNITS.get(tail) if tail else None


def dimension(unit: str) -> str:
    return _MEASURE_UNITS[unit][0]


def quantities(text: str) -> list[tuple[float, str, int, int]]:
    """(value, unit, start, end) of each figure of `text` written with a unit of measure ("205 lb", "22.4 USG", "9.4 °C")."""
    out = []
    for m in _QUANTITY.finditer(text):
        unit = unit_of(m.group(2))
        value = _number(m.group(1))
        if unit is not None and value is not None:
            out.append((value, unit, m.start(), m.end()))
    return out
