"""`amnesia-bench score CASES.jsonl`: the scorer on answers a researcher brings, checked against labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def score_command(
    cases_file: Annotated[
        Path,
        typer.Argument(
            metavar="CASES.jsonl",
            help="One case per line: question, expect, stale, poison (lists), abstain (bool), mechanism, "
            "answer, and optionally label and note.",
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per line: the case with a `classification` field.")
    ] = False,
) -> None:
    """Classify each answer as the benchmark's scorer does. With labels, also print the agreement (correct vs
    not-correct and all five classifications), the confusion matrix and every disagreeing line."""
    from tasks.scorecases import agreement, classify_case, format_agreement, read_cases

    cases = read_cases(cases_file)
    scored = [(case, classify_case(case)) for case in cases]
    for case, classification in scored:
        if as_json:
            record = {"line": case.line, "classification": classification, "answer": case.answer}
            if case.label is not None:
                record["label"] = case.label
            typer.echo(json.dumps(record, ensure_ascii=False))
        else:
            typer.echo(f"{case.line}\t{classification}\t{case.answer}")
    labelled = [(case, classification) for case, classification in scored if case.label is not None]
    if not labelled:
        return
    summary = agreement(labelled)
    # With --json, stdout stays one JSON object per line; the agreement goes to stderr.
    echo = (lambda line: typer.echo(line, err=True)) if as_json else typer.echo
    echo("")
    for line in format_agreement(summary):
        echo(line)
    disagreeing = [
        (case, classification) for case, classification in labelled if classification != case.label
    ]
    if disagreeing:
        echo(f"disagreeing lines ({len(disagreeing)}):")
    for case, classification in disagreeing:
        echo(f"  {cases_file}:{case.line}: label {case.label}, scored {classification}: {case.answer}")


def register(app: typer.Typer) -> None:
    app.command("score")(score_command)
