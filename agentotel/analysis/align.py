"""Two trajectories aligned step by step, not position by position.

Steps are aligned on their signature — type, tool or model, canonical arguments (for a model call: the
names of the tools it asked for) and status — with a sequence alignment (the identical beginning first,
then difflib's SequenceMatcher, junk heuristics off), so one inserted step leaves every later step
paired with its counterpart. Model calls are aligned without their input messages: those repeat the
whole history, so one changed tool result would make every later model call look different. The
status is part of the signature so that a failed call followed by its retry is one inserted step (the
failure) and the retry pairs with the other run's call, instead of the identical first attempt being
blamed for a status change.

Attempts a run made again are set aside before matching (`recoveries`): a failed call the run then
made again, and a model call that only asked to make failed tool calls again. They are placed back as
steps only their run has, so a timeout and its retry in one run never shift what pairs with what.
Tool calls one model call asked for together (parallel calls) are matched in a canonical order:
their order of execution is not behaviour.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any, Sequence

from agentotel._context import canonical_arguments
from agentotel.analysis._steps import requested_calls

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
    if step.type == "llm":
        # What the model decided (the tools it asked for, or none: an answer), not what it was given.
        return step.type, who(step), ",".join(sorted(c.name for c in requested_calls({"output": step.output}))), step.status
    if step.type == "agent":
        # An agent's status is what happened inside it (a max-turns error at the root of a run that looped): the
        # agent pairs with its counterpart, as the same agent, and the difference shows as its status changed.
        return step.type, who(step), "", ""
    return step.type, who(step), canonical_arguments(arguments(step)), step.status


def recoveries(steps: Sequence[Step], other: Sequence[Step] = ()) -> set[int]:
    """The indexes of steps that only made a failed attempt again, so the run recovered from it.

    A failed model call whose next call (same parent) is to the same model (a 429 and its retry); a failed
    tool call or retrieval made again with the same arguments at once: by the harness before the next
    model call, or by that next model call, when an attempt of it worked in the end (attempts that all
    failed are the difference itself); and a model call that only asked to make such failed calls
    again. A failure the run went back to only after doing something else is not set aside: what it did
    instead is behaviour. Nor is a tool failure the `other` run had too: what each run did about the same
    failure is where they may differ."""
    shared = {_call_key(s) for s in other if s.status == "error" and s.type in ("tool", "retrieval")}
    found: set[int] = set()
    asked_again_by: dict[str, int] = {}  # a failed call's key -> the model call that was given the failure
    for i, step in enumerate(steps):
        if step.status != "error":
            continue
        later = steps[i + 1:]
        if step.type == "llm":
            nxt = next((s for s in later if s.type == "llm" and s.parent_index == step.parent_index), None)
            if nxt is not None and who(nxt) == who(step):
                found.add(step.index)
        elif step.type in ("tool", "retrieval"):
            key = _call_key(step)
            if key in shared:
                continue
            models = [s.index for s in later if s.type == "llm" and s.status == "ok"]
            within = models[1] if len(models) > 1 else None  # before the model call after the one given the failure
            if any(_call_key(s) == key and s.parent_index == step.parent_index and (within is None or s.index < within)
                   for s in later) and any(_call_key(s) == key and s.status == "ok" for s in later):  # fmt: skip
                # made again at once, and in the end it worked (a failure every attempt repeated is no recovery)
                found.add(step.index)
                if models:
                    asked_again_by[key] = models[0]
    for step in steps:
        if step.type != "llm" or step.status != "ok" or step.index in found or step.index not in asked_again_by.values():
            continue
        asked = [f"tool {call.name} {canonical_arguments(call.arguments)}" for call in requested_calls({"output": step.output})]
        if asked and all(asked_again_by.get(key) == step.index for key in asked):
            found.add(step.index)
    return found


def _call_key(step: Step) -> str:
    return f"{step.type} {who(step)} {canonical_arguments(arguments(step))}"


def align(a: Sequence[Step], b: Sequence[Step], aside_a: set[int] | None = None,
          aside_b: set[int] | None = None) -> Aligned:
    """Aligned (a, b) step pairs in order; a step only one side has is paired with None.

    `aside_a`/`aside_b` are the steps set aside as recoveries (default: `recoveries` of each run)."""
    aside_a = recoveries(a, b) if aside_a is None else aside_a
    aside_b = recoveries(b, a) if aside_b is None else aside_b
    core_a = _call_order(a, aside_a)
    core_b = _call_order(b, aside_b)
    sig_a, sig_b = [_signature(s) for s in core_a], [_signature(s) for s in core_b]
    # The identical beginning pairs first: the longest matching block elsewhere must not pull the first
    # steps out of their pairs (a run that repeats its loop would otherwise "lack" its identical start).
    n = 0
    while n < min(len(sig_a), len(sig_b)) and sig_a[n] == sig_b[n]:
        n += 1
    pairs: Aligned = list(zip(core_a[:n], core_b[:n]))
    matcher = SequenceMatcher(None, sig_a[n:], sig_b[n:], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            pairs.extend(zip(core_a[n + i1:n + i2], core_b[n + j1:n + j2]))
        else:
            pairs.extend(_align_block(core_a[n + i1:n + i2], core_b[n + j1:n + j2]))
    return _put_back(_repeats_last(pairs), [s for s in a if s.index in aside_a], [s for s in b if s.index in aside_b])


def _call_order(steps: Sequence[Step], aside: set[int]) -> list[Step]:
    """The steps not set aside, each group of tool calls one model call asked for together sorted by
    signature. A call made again after a failure takes the failed attempt's place in its group."""
    place: dict[int, tuple[int, int | None]] = {}  # step index -> (position, group) when not its own
    for failed in steps:
        if failed.index in aside and failed.type in ("tool", "retrieval") and failed.status == "error":
            key = _call_key(failed)
            retry = next((s for s in steps if s.index > failed.index and s.index not in aside and s.index not in place
                          and _call_key(s) == key), None)
            if retry is not None:
                place[retry.index] = (failed.index, failed.requested_by)
    kept = sorted((s for s in steps if s.index not in aside), key=lambda s: place.get(s.index, (s.index,))[0])
    group = {s.index: place[s.index][1] if s.index in place else _requester(steps, s) for s in kept}
    out: list[Step] = []
    i = 0
    while i < len(kept):
        j = i + 1
        if kept[i].type == "tool" and group[kept[i].index] is not None:
            while j < len(kept) and kept[j].type == "tool" and group[kept[j].index] == group[kept[i].index]:
                j += 1
        out.extend(sorted(kept[i:j], key=_signature) if j - i > 1 else kept[i:j])
        i = j
    return out


def _requester(steps: Sequence[Step], step: Step) -> int | None:
    """The model step that asked for a tool step: by call id, else (a span that carries no call id, as a failed
    tool span of some instrumentations does) the latest model step before it that asked for that tool. Without
    this, a call-id-less failure is in no group, and two parallel calls run in the other order look like a step
    added and one removed."""
    if step.requested_by is not None or step.type != "tool":
        return step.requested_by
    for earlier in reversed([s for s in steps if s.index < step.index]):
        if earlier.type == "llm":
            names = {c.name for c in requested_calls({"output": earlier.output})}
            return earlier.index if who(step) in names else None
    return None


def _put_back(pairs: Aligned, aside_a: list[Step], aside_b: list[Step]) -> Aligned:
    """The set-aside steps as one-sided pairs, each before the first pair holding a later step of its run."""
    if not aside_a and not aside_b:
        return pairs
    out: Aligned = []
    pending_a, pending_b = list(aside_a), list(aside_b)
    for left, right in pairs:
        while pending_a and left is not None and pending_a[0].index < left.index:
            out.append((pending_a.pop(0), None))
        while pending_b and right is not None and pending_b[0].index < right.index:
            out.append((None, pending_b.pop(0)))
        out.append((left, right))
    out.extend((s, None) for s in pending_a)
    out.extend((None, s) for s in pending_b)
    return out


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
    # not take the place of the attempt that pairs with the other run's step. A tool call followed by a call of
    # the same tool with other arguments that one model call asked for with it is a parallel call, no attempt.
    out = []
    for i, step in enumerate(steps):
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        retried = step.status == "error" and nxt is not None and (nxt.type, who(nxt)) == (step.type, who(step)) and not (
            step.type == "tool" and step.requested_by is not None and nxt.requested_by == step.requested_by
            and _call_key(nxt) != _call_key(step))
        out.append((step.type, who(step), retried))
    return out
