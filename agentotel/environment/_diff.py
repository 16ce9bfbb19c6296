"""What differs between two environment snapshots, key by key."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from agentotel.environment._capture import digest, hashed_part

_MAX_DETAIL = 20  # detail lines kept per change (a lockfile rewrite can move hundreds of packages)
_HEX = re.compile(r"^[0-9a-f]{13,64}$")
_KEYED = ("packages", "lockfiles", "config_files", "tools", "model_tools")  # one change per key
_ORDER = ("repo", "lockfiles", "packages", "config_files", "tools", "model_tools", "instructions", "models", "agent",
          "credentials", "os", "python", "container")  # fmt: skip
_NOUN = {"packages": "package", "lockfiles": "lockfile", "config_files": "config file", "tools": "tool",
         "model_tools": "tool definition", "credentials": "credential", "models": "model",
         "instructions": "system prompt"}  # fmt: skip


def _short(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str) and _HEX.match(value):
        return value[:12]
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Change:
    """One difference: `section` (packages, lockfiles, config_files, tools, repo, ...), `key`, `kind`."""

    section: str
    key: str
    kind: str  # added | removed | changed
    a: Any = None
    b: Any = None
    detail: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"section": self.section, "key": self.key, "kind": self.kind, "a": self.a, "b": self.b, "detail": list(self.detail)}

    def line(self) -> str:
        noun = _NOUN.get(self.section, self.section)
        if self.section == "packages":
            if self.kind == "changed":
                text = f"package {self.key}: {self.a} → {self.b}"
            else:
                text = f"package {self.key} {self.kind} ({self.b if self.kind == 'added' else self.a})"
        elif self.section in _KEYED or self.section in {"credentials", "models"}:
            text = f"{noun} {self.key} {self.kind}"
        else:
            text = f"{noun} {self.key}: {_short(self.a)} → {_short(self.b)}"
        if self.detail:
            text += ": " + "; ".join(self.detail)
        return text


@dataclass
class EnvDiff:
    """The differences between two snapshots; empty `changes` means the same environment."""

    hash_a: str | None
    hash_b: str | None
    changes: list[Change] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not self.changes

    def to_dict(self) -> dict[str, Any]:
        return {"same": self.same, "hash_a": self.hash_a, "hash_b": self.hash_b, "changes": [c.to_dict() for c in self.changes]}

    def lines(self) -> list[str]:
        """Human-readable lines, one per change."""
        if not self.changes:
            return [f"same environment (hash {self.hash_a})"]
        return [c.line() for c in self.changes]


# --- comparing ------------------------------------------------------------------------------------------


def _paths(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Where two JSON values differ, as `path: a → b` / `path added` / `path removed` lines."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in a:
                out.append(f"{path} added")
            elif key not in b:
                out.append(f"{path} removed")
            elif a[key] != b[key]:
                out.extend(_paths(a[key], b[key], path))
        return out
    if a == b:
        return []
    return [f"{prefix or '(value)'}: {_short(_compact(a))} → {_short(_compact(b))}"]


def _compact(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return value


def _package_lines(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for name in sorted(set(a) | set(b)):
        if name not in a:
            out.append(f"+{name} {b[name]}")
        elif name not in b:
            out.append(f"-{name} {a[name]}")
        elif a[name] != b[name]:
            out.append(f"{name} {a[name]} → {b[name]}")
    return out


def _cut(lines: list[str]) -> tuple[str, ...]:
    if len(lines) > _MAX_DETAIL:
        return tuple(lines[:_MAX_DETAIL]) + (f"... {len(lines) - _MAX_DETAIL} more",)
    return tuple(lines)


def _keyed_detail(section: str, a: Any, b: Any) -> tuple[str, ...]:
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return ()
    if section == "lockfiles":
        lines = _package_lines(a.get("packages") or {}, b.get("packages") or {})
        if a.get("packages_error") != b.get("packages_error"):
            lines.append(f"parse error: {_short(a.get('packages_error'))} → {_short(b.get('packages_error'))}")
        if not lines:
            lines = _paths({k: v for k, v in a.items() if k != "packages"}, {k: v for k, v in b.items() if k != "packages"})
        return _cut(lines)
    if section in {"tools", "model_tools"}:
        lines = _paths(a.get("schema"), b.get("schema"), "schema")
        if a.get("description") != b.get("description"):
            lines.append("description changed")
        return _cut(lines)
    return _cut(_paths(a, b))


def _keyed(section: str, a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    out = []
    for key in sorted(set(a) | set(b)):
        if key not in a:
            out.append(Change(section, key, "added", None, b[key]))
        elif key not in b:
            out.append(Change(section, key, "removed", a[key], None))
        elif a[key] != b[key]:
            out.append(Change(section, key, "changed", a[key], b[key], _keyed_detail(section, a[key], b[key])))
    return out


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _fields(section: str, a: Any, b: Any, missing_b: dict[str, str]) -> list[Change]:
    fa, fb = _flatten(a or {}), _flatten(b or {})
    out = []
    for key in sorted(set(fa) | set(fb)):
        va, vb = fa.get(key), fb.get(key)
        if va != vb:
            kind = "added" if key not in fa else "removed" if key not in fb else "changed"
            reason = missing_b.get(f"{section}.{key}")
            out.append(Change(section, key, kind, va, vb, (f"unknown in b: {reason}",) if reason and key not in fb else ()))
    return out


def _repo(a: Any, b: Any, missing_b: dict[str, str]) -> list[Change]:
    if a is None or b is None:
        if a is None and b is None:
            return []
        return [Change("repo", "repository", "added" if a is None else "removed", a and a.get("commit"), b and b.get("commit"))]
    tree = ("dirty", "diff_hash", "changed", "changed_count")
    out = _fields("repo", {k: v for k, v in a.items() if k not in tree}, {k: v for k, v in b.items() if k not in tree}, missing_b)
    ta, tb = {k: a.get(k) for k in tree}, {k: b.get(k) for k in tree}
    if ta != tb:
        detail = []
        if ta["dirty"] != tb["dirty"]:
            detail.append(f"dirty {_short(ta['dirty'])} → {_short(tb['dirty'])}")
        changed = sorted(set(ta["changed"] or []) | set(tb["changed"] or []))
        if changed:
            detail.append("uncommitted: " + ", ".join(changed[:_MAX_DETAIL]))
        out.append(Change("repo", "working tree", "changed", ta, tb, tuple(detail)))
    return out


def _names(section: str, a: Iterable[str], b: Iterable[str]) -> list[Change]:
    sa, sb = set(a or ()), set(b or ())
    return [Change(section, n, "added") for n in sorted(sb - sa)] + [Change(section, n, "removed") for n in sorted(sa - sb)]


def _models(a: Any, b: Any) -> list[Change]:
    def flat(value: Any) -> set[str]:
        if isinstance(value, dict):
            return {m for v in value.values() for m in (v or [])}
        return set(value or [])

    return _names("models", flat(a), flat(b))


def _instructions(a: Any, b: Any) -> Change:
    """One change for a changed system prompt: its hash (the snapshot never holds the text) and length."""
    a, b = a or {}, b or {}
    kind = "added" if not a else "removed" if not b else "changed"
    detail = (f"{a.get('chars')} → {b.get('chars')} characters",) if a and b and a.get("chars") != b.get("chars") else ()
    return Change("instructions", "sha256", kind, a.get("sha256"), b.get("sha256"), detail)


def _fold_working_tree(changes: list[Change]) -> list[Change]:
    """Drop the working-tree change when every uncommitted path is a file already reported changed."""
    tree = next((c for c in changes if c.section == "repo" and c.key == "working tree"), None)
    if tree is None:
        return changes
    paths = set((tree.a or {}).get("changed") or []) | set((tree.b or {}).get("changed") or [])
    counts = [(tree.a or {}).get("changed_count"), (tree.b or {}).get("changed_count")]
    if any(c is not None and c > len(paths) for c in counts):
        return changes  # the list was cut: cannot tell
    reported = {c.key for c in changes if c.section in {"lockfiles", "config_files"}}
    if not paths or not paths <= reported:
        return changes
    return [c if c.key not in paths or c.section not in {"lockfiles", "config_files"}
            else Change(c.section, c.key, c.kind, c.a, c.b, c.detail + ("uncommitted",))
            for c in changes if c is not tree]  # fmt: skip


def diff(snapshot_a: dict[str, Any] | None, snapshot_b: dict[str, Any] | None) -> EnvDiff:
    """Compare two snapshots; volatile facts (host, who, timings, local paths) are not differences."""
    a, b = hashed_part(snapshot_a or {}), hashed_part(snapshot_b or {})
    missing_b = (snapshot_b or {}).get("missing") or {}
    changes: list[Change] = []
    sections = [s for s in _ORDER if s in a or s in b] + sorted((set(a) | set(b)) - set(_ORDER) - {"schema"})
    for section in sections:
        va, vb = a.get(section), b.get(section)
        if va == vb:
            continue
        if section == "repo":
            changes += _repo(va, vb, missing_b)
        elif section in _KEYED:
            changes += _keyed(section, va or {}, vb or {})
        elif section == "credentials":
            changes += _names("credentials", (va or {}).get("env", []) + (va or {}).get("declared", []),
                              (vb or {}).get("env", []) + (vb or {}).get("declared", []))  # fmt: skip
        elif section == "models":
            changes += _models(va, vb)
        elif section == "instructions":
            changes.append(_instructions(va, vb))
        else:
            changes += _fields(section, va, vb, missing_b)
    return EnvDiff(
        digest(a) if snapshot_a else None,
        digest(b) if snapshot_b else None,
        _fold_working_tree(changes),
    )
