"""A prompt's template learned from the prompts earlier runs sent: what stays, and where values go.

Prompts are often templated (a repository, a traveller's name, retrieved documents filled in), so no
two runs send the same text. The words every earlier prompt has, in order, are the template's fixed
text; a place where earlier prompts had words between fixed ones is a slot (any value fits there). A
prompt then differs from the template when fixed words are gone or words appear where earlier prompts
never had any (an instruction appended, a sentence rewritten) — not when a slot holds another value.

    template = Template.learn([earlier_a, earlier_b, earlier_c])   # None: fewer than 3, or nothing shared
    change = template.compare(prompt)                                # None, or what was removed and added
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

MIN_PROMPTS = 3  # with fewer, a value every prompt happened to share would pass for fixed text
MAX_WORDS = 2_000  # prompts are compared on their first words: the instructions come first, and this bounds the cost
MAX_DISTINCT = 6  # distinct prompts a template is learned from (the latest): enough to find the slots
MIN_CHANGED = 4  # words removed or added: a value that happened to repeat in every earlier run is one or two words


def words(text: str) -> list[str]:
    return text.split()[:MAX_WORDS]


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes turning `a` into `b`, the common head and tail taken off first: prompts of one
    agent share most of their words, and the matcher's cost is in what differs."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle = difflib.SequenceMatcher(None, a[head:len(a) - tail], b[head:len(b) - tail], autojunk=False).get_opcodes()
    out = [("equal", 0, head, 0, head)] if head else []
    out += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle if i1 != i2 or j1 != j2]
    if tail:
        out.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return out


def _matched(a: list[str], b: list[str]) -> set[int]:
    """The positions of `a` whose words `b` has, in order."""
    return {i for tag, i1, i2, _j1, _j2 in _opcodes(a, b) if tag == "equal" for i in range(i1, i2)}


@dataclass(frozen=True)
class Change:
    """How a prompt departs from its template: fixed words it lacks, words where no earlier prompt had any."""

    removed: list[str]
    added: list[str]

    def summary(self) -> str:
        said = []
        if self.removed:
            said.append(f"without {' '.join(self.removed[:20])!r}")
        if self.added:
            said.append(f"with {' '.join(self.added[:20])!r} added")
        return " and ".join(said)


@dataclass(frozen=True)
class Template:
    fixed: list[str]  # the words every earlier prompt had, in order
    slots: frozenset[int]  # positions (before fixed word i; len(fixed) is the end) where earlier prompts had words

    @classmethod
    def of(cls, prompt: str) -> "Template":
        """One prompt every earlier run sent alike, as a template without slots."""
        return cls(words(prompt), frozenset())

    @classmethod
    def learn(cls, prompts: list[str]) -> "Template | None":
        if len([p for p in prompts if p.strip()]) < MIN_PROMPTS:
            return None
        texts = [words(p) for p in list(dict.fromkeys(p for p in prompts if p.strip()))[:MAX_DISTINCT]]  # each once
        fixed = texts[0]
        for other in texts[1:]:
            kept = _matched(fixed, other)
            fixed = [w for i, w in enumerate(fixed) if i in kept]
        if not fixed:
            return None
        slots: set[int] = set()
        for text in texts:
            slots |= {position for position, _ in _inserted(fixed, text)}
        return cls(fixed, frozenset(slots))

    def compare(self, prompt: str, *, head_only: bool = False) -> Change | None:
        """What the prompt removed of the fixed text and added outside the slots; None when it fits.

        `head_only`: the prompt is compared only as far as it goes (what was fetched for this run starts
        where it was cut, and fetched text earlier runs had is no instruction): fixed words after its last
        matched one are not missed."""
        text = words(prompt)
        matched = _matched(self.fixed, text)
        end = max(matched, default=-1) + 1 if head_only else len(self.fixed)
        removed = [w for i, w in enumerate(self.fixed[:end]) if i not in matched]
        added = [w for position, inserted in _inserted(self.fixed, text) if position not in self.slots and position <= end
                 for w in inserted]
        if len(removed) + len(added) < MIN_CHANGED:
            return None
        return Change(removed, added)


def _inserted(fixed: list[str], text: list[str]) -> list[tuple[int, list[str]]]:
    """The words of `text` between fixed words, as (position: before fixed word i, words)."""
    out = []
    for tag, i1, _i2, j1, j2 in _opcodes(fixed, text):
        if tag in ("insert", "replace"):
            out.append((i1, text[j1:j2]))
    return out
