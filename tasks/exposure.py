"""Exposure: which of a probe's values reached its prompt — the model-free level of measurement.

A probe's prompt *exposes* a value when the text the task and the arm put before the question asserts it:
every message of the probe turn's first model call except the question itself (the last user message) and
the model's own earlier answers (assistant messages), so the same arm on the same task exposes the same
values whichever model answers. A value is asserted as the scorer finds values (`tasks.scoring`: whole-word
Latin, substring CJK, negated or lapsed mentions do not count), all of the probe's values looked for
together (the longest wins an overlap), as the scripted models look for them.

The runner logs the result on each `probe` record (`exposed`: {expect, stale, poison} -> the values found,
in the probe's order); for a log written before that field existed, the pair's summary (`PairSummary`) and
the viewer (`fill_exposure`) work it out from the probe turn's logged `model_call` messages, by the same
function; a probe whose turn has no logged call, or whose first call's messages were not logged, has unknown
exposure (None), which counts in no exposure rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from tasks.scoring import asserted_values

KINDS = ("expect", "stale", "poison")


def exposure_text(messages: Sequence[dict[str, Any]]) -> str:
    """What the task and the arm put into the prompt before the question: every message's content except
    the last user message's and the assistant's, joined in prompt order."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return "\n".join(
        str(m.get("content") or "")
        for i, m in enumerate(messages)
        if i != last_user and m.get("role") != "assistant"
    )


@lru_cache(maxsize=4096)  # the arms of a task often build the same prompt (nothing forgotten yet)
def _asserted(text: str, values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(asserted_values(text, values))


def exposed_values(
    messages: Sequence[dict[str, Any]], expect: Sequence[str], stale: Sequence[str], poison: Sequence[str]
) -> dict[str, list[str]]:
    """{expect, stale, poison} -> the probe's values of that kind the prompt `messages` exposes."""
    lists = dict(zip(KINDS, (expect, stale, poison), strict=True))
    found = _asserted(exposure_text(messages), tuple(dict.fromkeys(v for kind in KINDS for v in lists[kind])))
    return {kind: [v for v in lists[kind] if v in found] for kind in KINDS}


class TurnPrompts:
    """The first prompt of each turn of a pair, seen record by record, and with it the exposure of a probe
    record that does not carry its own (`PairSummary`, `fill_exposure`)."""

    def __init__(self) -> None:
        self._first: dict[tuple[Any, Any], list[dict[str, Any]]] = {}

    def see_call(self, fields: dict[str, Any]) -> None:
        """Take a `model_call` record's fields (arm-internal calls, with null indices, are no turn's)."""
        if fields.get("session_index") is not None:
            self._first.setdefault(
                (fields["session_index"], fields["turn_index"]), fields.get("messages") or []
            )

    def exposure(self, fields: dict[str, Any]) -> dict[str, list[str]] | None:
        """A `probe` record's `exposed`, else the values its turn's first prompt exposed; None (unknown) when
        that turn has no logged call or its first call has no logged messages: a model call always sends at
        least the question, so an empty `messages` (a format-1 line without the field) says nothing of what
        reached the prompt, not that nothing did."""
        found = fields.get("exposed")
        if found is not None:
            return found
        messages = self._first.get((fields["session_index"], fields["turn_index"]))
        if not messages:
            return None
        return exposed_values(messages, fields["expect"], fields["stale"], fields["poison"])


def fill_exposure(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`records` (a pair's, in log order) with `exposed` set on every probe record (`TurnPrompts.exposure`:
    for a log written before it was logged); the records are changed in place."""
    prompts = TurnPrompts()
    for record in records:
        if record.get("type") == "model_call":
            prompts.see_call(record)
        elif record.get("type") == "probe":
            record["exposed"] = prompts.exposure(record)
    return records
