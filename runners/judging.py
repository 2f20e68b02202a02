"""The model judge's calls (`run --judge`, `rescore --judge`): the judge model, resolved once per process and
cached like any model (`resolve_model`), asked with the fixed rubric of `tasks.judge`."""

from __future__ import annotations

from typing import Any

from runners.models import resolve_model
from tasks.judge import RUBRIC_VERSION, judge_messages, parse_verdict
from tasks.modelapi import Model, ModelRequest
from tasks.spec import ProbeSpec

_JUDGES: dict[str, Model] = {}  # judge spec -> its model, resolved once per process (workers too)
JUDGE_MAX_TOKENS = 8  # one word is asked for


def judge_model(spec: str) -> Model:
    """The judge model of a spec (any `--model` spec), resolved once per process."""
    model = _JUDGES.get(spec)
    if model is None:
        model = _JUDGES[spec] = resolve_model(spec)
    return model


def judge_fields(model: Model, question: str, probe: ProbeSpec, answer: str) -> dict[str, str]:
    """The judge's verdict on one answer, as probe-record fields: `judge` (a classification or "unparsed"),
    `judge_model`, `judge_response` (its reply as given)."""
    request = ModelRequest(messages=judge_messages(question, probe, answer), max_tokens=JUDGE_MAX_TOKENS)
    reply = model.complete(request).text
    return {"judge": parse_verdict(reply), "judge_model": model.name, "judge_response": reply}


def judge_description(spec: str) -> dict[str, Any]:
    """The manifest's note of the judge: its spec, the model's description, the rubric version."""
    return {"spec": spec, "model": judge_model(spec).describe(), "rubric_version": RUBRIC_VERSION}
