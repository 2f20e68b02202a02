"""False forgetting of `expiry_from_text` on LoCoMo: how many of the session observations the text-deadline
reader (`amnesia.deadlines`) gives an end to, which ones, and how much of the questions' evidence those ends
would take away.

LoCoMo's observations describe what the speakers did and plan ("Caroline is going to a support group
meeting next week"); none of them is a rule that stops holding, so every end read here is a candidate for
forgetting something the questions may still need. Each observation is read twice:

- on the replay's clock — what the benchmark engine sees: the imported task starts its clock at 0
  (1970-01-01 00:00 UTC, a Thursday) and each session sits at its real offset from the first one;
- on the real calendar — the session's own date and time ("1:56 pm on 8 May, 2023", read as UTC), what an
  engine on a real clock would see.

An observation "ends before the questions" when its end comes before the time the imported questions are
asked (the last session's time): with a ttl that outlives the conversation it would be forgotten by then.
"Evidence lost" counts the (question, evidence memory) pairs — the denominator of evidence retention — whose
memory ends before the questions: the most that retention can lose to the reader with no ttl (only with
`auto_expire` on: `relevance_frontier.py`'s no-ttl cells run with `auto_expire: false`, where no deadline
applies).

    python benchmarks/locomo_text_deadlines.py --data ../shared/data/locomo10

Reads the data where it is (never copied); prints a markdown summary and up to 10 examples; exits 0.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from amnesia.deadlines import read_deadline
from amnesia.durations import parse_duration
from tasks.importers.common import parse_ttl_policy
from tasks.importers.locomo import load_samples, parse_date, sample_to_task

EXAMPLES = 10
# Words near the reader's grammar (a marker, or a period ahead) — to show what it leaves alone ("through"
# is left out here: in LoCoMo it is nearly always "through painting", "helped her through").
_NEAR = re.compile(r"\b(?:until|till|for the next|for the rest of|next (?:week|month|year))\b", re.IGNORECASE)


@dataclass(frozen=True)
class Observation:
    """One imported observation: its conversation, text, refs and the two times it is written at."""

    conversation: str
    text: str
    refs: tuple[str, ...]
    at: float  # replay clock seconds
    real: float  # the session's real date, Unix seconds (UTC)
    asked_at: float  # replay clock seconds of the conversation's questions
    real_asked_at: float


def observations(data: Path) -> tuple[list[Observation], list[tuple[str, tuple[str, ...]]]]:
    """Every observation as the importer writes it, and every question's (conversation, evidence ids)."""
    found: list[Observation] = []
    questions: list[tuple[str, tuple[str, ...]]] = []
    samples, _ = load_samples(data)
    for sample_id, sample in samples:
        task, _ = sample_to_task(sample_id, sample, parse_ttl_policy("none"), 0.0)
        dates = sorted(
            parse_date(value, sample_id).replace(tzinfo=timezone.utc).timestamp()
            for key, value in sample.items()
            if key.endswith("_date_time") and isinstance(sample.get(key.removesuffix("_date_time")), list)
        )
        start = dates[0]
        writes, asked = [], 0.0
        for session in task["sessions"]:
            at = parse_duration(session["at"])
            for turn in session["turns"]:
                for spec in turn.get("remember", []):
                    writes.append((spec["content"], tuple(spec.get("refs", ())), at))
                if "probe" in turn:
                    asked = at
                    questions.append((sample_id, tuple(turn["probe"].get("evidence", ()))))
        found += [
            Observation(sample_id, text, refs, at, start + at, asked, start + asked)
            for text, refs, at in writes
        ]
    return found, questions


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, tz=timezone.utc).strftime("%Y-%m-%d %a")


def _lost_pairs(
    ended: set[int], found: list[Observation], questions: list[tuple[str, tuple[str, ...]]]
) -> tuple[int, int]:
    """(pairs whose memory ended, all pairs): a pair is a question and one memory holding its evidence."""
    holders: dict[tuple[str, str], list[int]] = {}
    for index, item in enumerate(found):
        for ref in item.refs:
            holders.setdefault((item.conversation, ref), []).append(index)
    lost = total = 0
    for conversation, evidence in questions:
        memories = {i for ref in evidence for i in holders.get((conversation, ref), ())}
        total += len(memories)
        lost += len(memories & ended)
    return lost, total


def _rows(found: list[Observation], real: bool) -> Iterator[tuple[int, str, float, float]]:
    for index, item in enumerate(found):
        written, asked = (item.real, item.real_asked_at) if real else (item.at, item.asked_at)
        deadline = read_deadline(item.text, written)
        if deadline is not None:
            yield index, deadline.phrase, deadline.end, asked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo10"), help="LoCoMo folder")
    args = parser.parse_args(argv)
    found, questions = observations(args.data)
    print(f"LoCoMo: {len(found):,} observations, {len(questions):,} questions.")
    print()
    print(
        "| clock | observations given an end | of them, ending before the questions | evidence pairs lost |"
    )
    print("|---|---:|---:|---:|")
    for label, real in (("replay (0 = 1970-01-01)", False), ("real session dates", True)):
        rows = list(_rows(found, real))
        ended = {index for index, _, end, asked in rows if end <= asked}
        lost, total = _lost_pairs(ended, found, questions)
        print(f"| {label} | {len(rows)} | {len(ended)} | {lost} of {total:,} ({lost / total:.2%}) |")
    print()
    print("Examples (real session dates; the phrase read, the written day, the end):")
    print()
    examples = list(_rows(found, True))[:EXAMPLES]
    for index, phrase, end, _ in examples:
        item = found[index]
        print(
            f'- {item.conversation}: "{item.text}" — "{phrase}", written {_iso(item.real)}, ends {_iso(end)}'
        )
    if not examples:
        print("(none)")
    ended = {index for index, *_ in _rows(found, True)}
    near = [item for index, item in enumerate(found) if index not in ended and _NEAR.search(item.text)]
    print()
    print(f"Observations with a marker or a future period that were given no end: {len(near)}; the first:")
    print()
    for item in near[:EXAMPLES]:
        print(f'- {item.conversation}: "{item.text}"')
    return 0


if __name__ == "__main__":
    sys.exit(main())
