"""A tool's output schema learned from earlier runs, and how a new output departs from it.

Every earlier output of the tool adds to one schema: the types seen at each JSON path, and how often
each field was there (not null) when the object holding it was. A field that was sometimes null or
absent is optional. A new output drifts only when a field that was always there is gone or a path has a
type never seen before (with the new objects or arrays that appeared as evidence): a field that comes and
goes, is null this time, or is seen for the first time, or the first items of a list that was always
empty, never raise an alarm.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from agentotel.analysis._steps import outermost, parent_path, type_name


_SCALARS = frozenset({type(None), bool, int, float, str})  # what json.loads returns besides dict and list


def _is_object(node: Any) -> bool:
    # Exact types first: isinstance against typing.Mapping walks the ABC machinery, ~1 us a node.
    kind = type(node)
    return kind is dict or (kind not in _SCALARS and kind is not list and isinstance(node, Mapping))


def _is_array(node: Any) -> bool:
    kind = type(node)
    return kind is list or kind is tuple or (kind not in _SCALARS and kind is not dict and isinstance(node, (list, tuple)))


_FIELD_NAME = re.compile(r"[A-Za-z_$@][\w.$@-]*")


def _keyed_by_data(keys: list[Any]) -> bool:
    """Whether an object's keys are data (names with spaces: a rubric's "embedded C", "HIL testing"), not fields."""
    return any(not _FIELD_NAME.fullmatch(str(k)) for k in keys)


def _path_form(text: str) -> str | None:
    """How a string names a file, if it is a path: "absolute path" (/repo/src/a.py), "relative path" (src/a.py)."""
    if "/" not in text or " " in text or "\n" in text or "://" in text or len(text) > 300:
        return None
    if text.startswith("/"):
        return "absolute path"
    return "relative path" if "." in text.rsplit("/", 1)[-1] or text.count("/") >= 2 else None


@dataclass
class Drift:
    """How an output departs from the learned schema (paths like `$.orders[].id`)."""

    gone: list[str]  # fields that were always there, missing now
    new_types: dict[str, tuple[list[str], str]]  # path -> (types seen before, type now)
    new_structures: list[str]  # objects or arrays never seen before

    def summary(self) -> str:
        bits = []
        if self.gone:
            bits.append("missing " + ", ".join(self.gone))
        if self.new_types:
            bits.append(", ".join(f"{p} is {now} (was {'|'.join(before)})" for p, (before, now) in sorted(self.new_types.items())))
        if self.new_structures:
            bits.append("new " + ", ".join(self.new_structures))
        return "; ".join(bits)

    def to_dict(self) -> dict[str, Any]:
        return {"missing": self.gone, "new_types": {p: {"before": b, "now": n} for p, (b, n) in self.new_types.items()},
                "new_structures": self.new_structures}


@dataclass
class OutputSchema:
    """What earlier outputs of one tool looked like: types per path, and how often each field was present."""

    outputs: int = 0
    types: dict[str, set[str]] = field(default_factory=dict)
    objects: dict[str, int] = field(default_factory=dict)  # path -> objects seen there
    present: dict[str, int] = field(default_factory=dict)  # field path -> times it held a non-null value
    # field path of an array's items -> outputs it held a value in: one output's items are one sample of the shape
    sampled: dict[str, int] = field(default_factory=dict)
    # field path -> the forms its file paths took (absolute, relative); paths_not: strings there that were no path
    path_forms: dict[str, set[str]] = field(default_factory=dict)
    paths_not: dict[str, int] = field(default_factory=dict)
    # `drift`'s required fields by the path of the object holding them, found once per schema learned (a run
    # calls a tool tens of times; this walks every path ever seen).
    _required: dict[str, list[str]] | None = field(default=None, init=False, repr=False, compare=False)

    def learn(self, value: Any) -> None:
        self.outputs += 1
        self._required = None

        types, objects, present = self.types, self.objects, self.present
        in_items: set[str] = set()

        def walk(node: Any, path: str) -> None:
            seen = types.get(path)
            if seen is None:
                seen = types[path] = set()
            seen.add(type_name(node))
            if type(node) is str:
                form = _path_form(node)
                if form is None:
                    self.paths_not[path] = self.paths_not.get(path, 0) + 1
                else:
                    self.path_forms.setdefault(path, set()).add(form)
            elif _is_object(node):
                objects[path] = objects.get(path, 0) + 1
                for key, child in node.items():
                    child_path = f"{path}.{key}"
                    if child is not None:
                        present[child_path] = present.get(child_path, 0) + 1
                        if path.endswith("[]"):
                            in_items.add(child_path)
                    walk(child, child_path)
            elif _is_array(node):
                for child in node:
                    walk(child, f"{path}[]")

        walk(value, "$")
        for path in in_items:
            self.sampled[path] = self.sampled.get(path, 0) + 1

    def required(self, path: str) -> bool:
        """A field that held a value every time the object holding it was seen - for the items of an array, in the
        items of three outputs at least: one day's calendar events, each with a note, say little of the next day's,
        and lists often hold items of several kinds (an invoice line priced per unit, another as a lump sum)."""
        seen, holder = self.present.get(path, 0), parent_path(path)
        if holder.endswith("[]"):
            return self.sampled.get(path, 0) > 2 and seen == self.objects.get(holder, 0)
        return seen > 0 and seen == self.objects.get(holder, 0)

    def drift(self, value: Any) -> Drift | None:
        """How `value` departs from what was learned, or None when it fits (always None before any output)."""
        if not self.outputs:
            return None
        gone: set[str] = set()
        new_types: dict[str, tuple[list[str], str]] = {}
        new_structures: set[str] = set()
        required_by_parent = self._required
        if required_by_parent is None:
            required_by_parent = self._required = {}
            for path in self.present:
                if self.required(path):
                    required_by_parent.setdefault(parent_path(path), []).append(path)

        def walk(node: Any, path: str) -> None:
            kind = type_name(node)
            seen = self.types.get(path)
            if seen is None:
                # Items of an array only ever seen empty are no new structure: nothing was known of them.
                if kind in ("object", "array") and path != "$" and parent_path(path) in self.types and not path.endswith("[]"):
                    new_structures.add(path)
                return  # below a new path nothing can be compared
            if kind != "null" and kind not in seen and seen - {"null"}:  # a field only ever null may hold anything
                new_types[path] = (sorted(seen), kind)
                return
            if type(node) is str:
                # file paths always given one way (absolute) given the other now: readers joining them break
                forms = self.path_forms.get(path)
                form = _path_form(node) if forms and not self.paths_not.get(path) else None
                if form is not None and form not in forms:
                    new_types[path] = (sorted(forms), form)
            elif _is_object(node):
                expected = required_by_parent.get(path, ())
                # (an array's items are judged together, below; an object keyed by data - a rubric's criteria,
                # "embedded C": 5 - holds other keys for other records, none of them a field)
                # (nor one a flag switched off empties - isolation {"required": false} holds no organism, a record's
                # variant and no changed API)
                if not path.endswith("[]") and not _keyed_by_data(list(node) + [r.rsplit(".", 1)[1] for r in expected]) \
                        and not (len(node) <= 2 and any(v is False for v in node.values())):
                    for required in expected:
                        if required.rsplit(".", 1)[1] not in node:
                            gone.add(required)
                for key, child in node.items():
                    walk(child, f"{path}.{key}")
            elif _is_array(node):
                # A list may hold items of several kinds (an invoice and its credit note): a field is gone when no
                # item has it any more, not when one item lacks it.
                items = [child for child in node if _is_object(child)]
                for required in required_by_parent.get(f"{path}[]", ()) if items else ():
                    key = required.rsplit(".", 1)[1]
                    if not any(key in item for item in items):
                        gone.add(required)
                for child in node:
                    walk(child, f"{path}[]")

        walk(value, "$")
        # A new object or array next to every field that was always there is an addition old readers ignore
        # (an optional field seen for the first time): drift is a field gone or a type changed, new structures
        # are its evidence (the nested shape that replaced the fields gone).
        if not (gone or new_types):
            return None
        return Drift(outermost(gone), new_types, outermost(new_structures))
