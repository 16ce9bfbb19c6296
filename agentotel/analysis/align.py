"""Two trajectories aligned step by step, not position by position.

Steps are aligned on their signature — type, tool or model, canonical arguments and status — with a
sequence alignment (difflib's SequenceMatcher, junk heuristics off), so one inserted step leaves every
later step paired with its counterpart. Model calls are aligned without their input messages: those
repeat the whole history, so one changed tool result would make every later model call look
different. The status is part of the signature so that a failed call followed by its retry is one
inserted step (the failure) and the retry pairs with the other run's call, instead of the identical
first attempt being blamed for a status change.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, Sequence

from agentotel._context import canonical_arguments

if TYPE_CHECKING:  # the query layer imports this package: only its types here
    from agentotel.query.trajectory import Step

Aligned = list[tuple["Step | None", "Step | None"]]


def who(step: Step) -> str:
    """The tool, model or span name a step is about (a model call's model, a tool call's tool)."""
    if step.type == "llm" or step.type == "embedding":
        return step.model or step.name
    return step.tool_name or step.name


def arguments(step: Step) -> Any:
    """What a step was asked to do, for alignment: tool arguments, a retrieval query; nothing for models."""
    if step.type in ("llm", "embedding", "agent"):
        return None
    return step.input


def _signature(step: Step) -> tuple[str, str, str, str]:
    return step.type, who(step), canonical_arguments(arguments(step)), step.status


def align(a: Sequence[Step], b: Sequence[Step]) -> Aligned:
    """Aligned (a, b) step pairs in order; a step only one side has is paired with None."""
    pairs: Aligned = []
    matcher = SequenceMatcher(None, [_signature(s) for s in a], [_signature(s) for s in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            pairs.extend(zip(a[i1:i2], b[j1:j2]))
        else:
            pairs.extend(_align_block(a[i1:i2], b[j1:j2]))
    return _repeats_last(pairs)


def _repeats_last(pairs: Aligned) -> Aligned:
    """Steps one run has in addition, moved after the identical steps they repeat.

    The sequence matcher takes the longest matching block, so when B repeats a stretch of A ([x, y, x, y, z]
    against [x, y, z]) it pairs A with the *later* copy and calls B's first, identical steps the extra ones.
    The repetition is the second copy: an inserted block followed by pairs whose steps on that side have the
    same signatures is shifted past them, as far as it goes.
    """
    pairs = list(pairs)
    i = 0
    while i < len(pairs):
        side = 1 if pairs[i][0] is None else 0 if pairs[i][1] is None else None
        if side is None:
            i += 1
            continue
        end = i
        while end < len(pairs) and pairs[end][1 - side] is None and pairs[end][side] is not None:
            end += 1
        k = end - i
        while end + k <= len(pairs) and all(
            pairs[end + n][0] is not None and pairs[end + n][1] is not None
            and _signature(pairs[end + n][side]) == _signature(pairs[i + n][side]) for n in range(k)
        ):
            # The inserted steps take the partners of the identical steps after them, which become the extra ones.
            block = [pairs[i + n][side] for n in range(k)]
            following = pairs[end:end + k]
            for n in range(k):
                other = following[n][1 - side]
                pairs[i + n] = (block[n], other) if side == 0 else (other, block[n])
                alone = following[n][side]
                pairs[end + n] = (alone, None) if side == 0 else (None, alone)
            i, end = end, end + k
        i = max(end, i + 1)
    return pairs


def _align_block(a: Sequence[Step], b: Sequence[Step]) -> Aligned:
    """Inside a differing block, pair steps of the same tool or model (changed arguments or status), then
    by position; a failed step whose retry (the same tool or model, next) is in the block stays alone."""
    pairs: Aligned = []
    matcher = SequenceMatcher(None, _kinds(a), _kinds(b), autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = list(a[i1:i2]), list(b[j1:j2])
        if op == "equal" or op == "replace":
            n = min(len(left), len(right))
            pairs.extend(zip(left[:n], right[:n]))
            left, right = left[n:], right[n:]
        pairs.extend((s, None) for s in left)
        pairs.extend((None, s) for s in right)
    return pairs


def _kinds(steps: Sequence[Step]) -> list[tuple[str, str, bool]]:
    # A failed step followed by another attempt at the same tool or model is marked apart, so it does
    # not take the place of the attempt that pairs with the other run's step.
    out = []
    for i, step in enumerate(steps):
        retried = step.status == "error" and i + 1 < len(steps) and (steps[i + 1].type, who(steps[i + 1])) == (step.type, who(step))
        out.append((step.type, who(step), retried))
    return out
