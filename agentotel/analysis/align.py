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
