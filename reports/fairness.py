"""The oracle shares a run recorded (manifest `fairness`, written by the runner from `tasks.fairness`): how
each arm's own time rule splits the task set's probe values, printed at the head of every report so that a
reader sees whether forgetting could win by construction before reading any result."""

from __future__ import annotations

import json
from typing import Any

from tasks.fairness import share_row


def oracle_lines(manifests: list[dict[str, Any]]) -> list[str]:
    """The report's oracle-shares paragraph: one per distinct record among the runs' manifests."""
    records = {json.dumps(m.get("fairness"), sort_keys=True): m.get("fairness") for m in manifests}
    lines = []
    for record in records.values():
        lines += [_paragraph(record), ""]
    return lines


def _paragraph(record: dict[str, Any] | None) -> str:
    head = (
        "**Oracle shares** (probe values each arm's own time rule puts on its wrong side before any model "
        "answers: an expected value hidden before its probe, a stale or poison value still shown; "
        "`amnesia-bench validate --fairness`, rule in tasks/README.md): "
    )
    if record is None:
        return head + "not recorded (the run predates them)."
    timed = {arm: summary for arm, summary in record.items() if summary is not None}
    untimed = sorted(arm for arm, summary in record.items() if summary is None)
    parts = [f"`{arm}` {share_row(summary['wrong_side'])}" for arm, summary in timed.items()]
    if untimed:
        parts.append(f"{', '.join(f'`{arm}`' for arm in untimed)}: no forgetting by the writer's ttl")
    text = head + "; ".join(parts) + "."
    oracles = [f"`{arm}` ({summary['oracle']})" for arm, summary in timed.items() if summary.get("oracle")]
    if oracles:
        text += f" **The task set acts as an oracle for {', '.join(oracles)}**: its results restate the ttls."
    separated = sorted(
        {line.split(":")[0] for s in timed.values() for line in s.get("separated_mechanisms", [])}
    )
    if separated:
        text += f" Time alone separates the values of {', '.join(separated)} for at least one arm."
    gaps = sum(len(summary.get("exact_gaps", [])) for summary in timed.values())
    if gaps:
        text += f" {gaps} value(s) are probed on an arm's cut-off (exact gaps)."
    return text
