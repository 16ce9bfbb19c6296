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
MAX_WORDS = 3_000  # prompts are compared on their first words: the instructions come first, and this bounds the cost
MIN_CHANGED = 4  # words removed or added: a value that happened to repeat in every earlier run is one or two words


def words(text: str) -> list[str]:
    return text.split()[:MAX_WORDS]


def _matcher(a: list[str], b: list[str]) -> difflib.SequenceMatcher:
    return difflib.SequenceMatcher(None, a, b, autojunk=False)


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
        texts = [words(p) for p in prompts if p.strip()]
        if len(texts) < MIN_PROMPTS:
            return None
        fixed = texts[0]
        for other in texts[1:]:
            fixed = [fixed[i] for block in _matcher(fixed, other).get_matching_blocks() for i in range(block.a, block.a + block.size)]
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
        matched = set()
        for block in _matcher(self.fixed, text).get_matching_blocks():
            matched.update(range(block.a, block.a + block.size))
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
    for tag, i1, _i2, j1, j2 in _matcher(fixed, text).get_opcodes():
        if tag in ("insert", "replace"):
            out.append((i1, text[j1:j2]))
    return out
