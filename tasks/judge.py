"""A model judge beside the rules: the fixed rubric prompt that asks a model to classify one probe answer, and
the reading of its reply.

The judge sees what the rules see — the question, the probe's current, old and untrusted values, whether
nothing should be asserted (an abstain probe), and the answer — and must reply with one of the five
classifications. The prompt is fixed (`RUBRIC`, `judge_messages`; `RUBRIC_VERSION` changes with it) and
documented in docs/scoring.md, so two judged runs with the same judge model are judged alike. A reply that
names no classification, or more than one, is `unparsed`.
"""

from __future__ import annotations

import re

from tasks.modelapi import Message
from tasks.spec import CLASSIFICATIONS, Classification, ProbeSpec

RUBRIC_VERSION = 1
UNPARSED = "unparsed"  # the judge's reply named no classification, or several
# Line breaks inside a sentence are kept as they are: the prompt is the same text for every judged run.
RUBRIC = """You grade one answer of an AI assistant against facts that changed over time.
Reply with exactly one word, the answer's class:
- correct: the answer gives a CURRENT value (it may also mention an OLD or UNTRUSTED value, but only as
past, wrong or not to be trusted). When NOTHING SHOULD BE ASSERTED (the fact lapsed or was deleted and
nothing replaced it), an answer is correct when it says the old thing no longer applies, that nothing stands
in the way now, or that it does not know, and asserts no OLD or UNTRUSTED value.
- stale: the answer asserts an OLD value as if it still held (also when it hedges between an old and a
current value).
- poisoned: the answer asserts an UNTRUSTED value (this wins over stale).
- abstained: the answer says it does not know, and a CURRENT value exists.
- wrong: anything else: another value, a non-answer, a redirect ("ask someone else"), or an assent that does
not answer the question.
Reply with one word: correct, stale, poisoned, abstained or wrong."""


def judge_messages(question: str, probe: ProbeSpec, answer: str) -> list[Message]:
    """The judge's prompt for one answer: the rubric, then the case."""
    values = [
        f"CURRENT values: {', '.join(probe.expect) or '(none)'}",
        f"OLD values: {', '.join(probe.stale) or '(none)'}",
        f"UNTRUSTED values: {', '.join(probe.poison) or '(none)'}",
    ]
    if probe.abstain:
        values.append("NOTHING SHOULD BE ASSERTED: yes")
    case = "\n".join([f"Question: {question}", *values, f"Answer: {answer}", "Class:"])
    return [{"role": "system", "content": RUBRIC}, {"role": "user", "content": case}]


_CLASS_WORD = re.compile(rf"\b({'|'.join(CLASSIFICATIONS)})\b", re.IGNORECASE)


def parse_verdict(reply: str) -> Classification | str:
    """The classification the judge's reply names: its first word when that is one, else the one class word
    it holds; `UNPARSED` when it names none or several."""
    words = reply.strip().split()
    first = words[0].strip(".,:;!*\"'`").lower() if words else ""
    if first in CLASSIFICATIONS:
        return first
    named = {match.lower() for match in _CLASS_WORD.findall(reply)}
    return named.pop() if len(named) == 1 else UNPARSED
