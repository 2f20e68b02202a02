"""`amnesia-bench rescore RUN`: re-classify every probe from its logged answer with the current
`tasks.scoring.classify`, without re-running anything.

The original run is never modified. The result is a complete run folder (default `RUN/rescored/`): the
manifest plus `rescored_from`, and every log copied line for line, except that a probe whose
classification changed gets the new `classification` and `matched` and keeps the old one as
`original_classification`. `amnesia-bench report RUN/rescored` then reports on the new scores. The folder
is staged and renamed into place (never half-written). A probe's question (its user text, which the scorer's
yes/no rule needs) is read from the last user message of the turn's model call. `--judge MODEL` also asks
a model judge for each probe's verdict (tasks.judge), written beside the rules' as in a judged run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reports.logread import load_runs
from reports.staging import staged_folder
from tasks.errors import ReportInputError
from tasks.failures import failure_code
from tasks.scoring import classify
from tasks.spec import ProbeSpec


@dataclass(frozen=True)
class RescoreResult:
    probes: int
    changed: int
    out: Path


# A judge (`rescore --judge`): (question, probe, answer) -> the probe record's judge fields (runners.judging).
Judge = Callable[[str, ProbeSpec, str], dict[str, str]]


def _rescore_line(
    line: str, questions: dict[tuple[int, int], str], judge: Judge | None = None
) -> tuple[str, bool, bool]:
    """(new line, is a probe, changed); `questions` collects each turn's user text from its model calls, which
    come before the turn's probe record. With a `judge`, every probe also gets the judge's verdict."""
    record = json.loads(line)
    if record.get("type") == "model_call" and record.get("session_index") is not None:
        users = [m.get("content") for m in record.get("messages", []) if m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            questions[(record["session_index"], record["turn_index"])] = users[-1]
    if record.get("type") != "probe":
        return line, False, False
    probe = ProbeSpec(
        tuple(record["expect"]),
        tuple(record["stale"]),
        tuple(record["poison"]),
        record["abstain"],
        mechanism=record.get("mechanism", ""),
        not_asserting=tuple(record.get("not_asserting") or ()),
    )
    question = questions.get((record["session_index"], record["turn_index"]))
    classification, matched = classify(record["answer"], probe, question)
    if judge is not None:
        record.update(judge(question or "", probe, record["answer"]))
    elif classification == record["classification"] and matched == record.get("matched"):
        return line, True, False
    record.setdefault("original_classification", record["classification"])
    record["classification"], record["matched"] = classification, matched
    record.pop("failure", None)  # worked out again from the new classification (absent when correct)
    failure = failure_code(record.get("mechanism"), classification)
    if failure is not None:
        record["failure"] = failure
    return json.dumps(record, ensure_ascii=False), True, classification != record["original_classification"]


def rescore_run(
    run: Path,
    out: Path | None = None,
    force: bool = False,
    judge: Judge | None = None,
    judge_manifest: dict[str, Any] | None = None,
) -> RescoreResult:
    """Write `out` (default RUN/rescored): a copy of the run with every probe classified again. An existing
    `out` (an earlier rescore) is replaced only with `force`. With a `judge`, every probe also gets the
    judge's verdict beside the rules' and the manifest says which judge (`judge_manifest`)."""
    run = Path(run)
    data = load_runs([run])  # strict validation first: never rescore a truncated or corrupt run
    target = Path(out) if out is not None else run / "rescored"
    if target.resolve() == run.resolve():
        raise ReportInputError(f"{target}: --out must differ from the run folder (originals are kept)")
    if target.exists() and not force:
        raise ReportInputError(
            f"{target}: already exists (an earlier rescore?); pass --force to replace it, or --out NEW"
        )
    probes = changed = 0
    with staged_folder(target, ".rescore-") as staging:
        manifest = {**data.runs[0].manifest, "rescored_from": str(run)}
        if judge is not None:
            manifest["judge"] = judge_manifest
        (staging / "manifest.json").write_text(
            json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8"
        )
        for path in sorted(data.tasks["file"]):
            relative = Path(path).relative_to(run)
            lines: list[str] = []
            questions: dict[tuple[int, int], str] = {}
            # split on "\n" only: str.splitlines() would also split inside content at U+0085 or U+2028
            for line in Path(path).read_text(encoding="utf-8").removesuffix("\n").split("\n"):
                new, is_probe, did_change = _rescore_line(line, questions, judge)
                probes += is_probe
                changed += did_change
                lines.append(new)
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            (staging / relative).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return RescoreResult(probes, changed, target)
