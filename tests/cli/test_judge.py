"""The model judge beside the rules, end to end against a loopback OpenAI-compatible stub: `run --judge` logs
each probe's verdict beside the rules' (fixed rubric prompt), the report prints Cohen's kappa, the confusion
matrix and the disagreements, `report --primary judge` counts the judge's verdicts, and `rescore --judge`
judges an old run, its calls answered by the response cache the second time."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from runners.models import envopts
from tasks.judge import RUBRIC, parse_verdict

# cycled over the judge's calls ("no idea" is unparsed): it calls fewer answers correct than the rules do
REPLIES = ["correct", "Stale.", "no idea", "wrong", "wrong", "wrong"]


@pytest.fixture
def env(monkeypatch, tmp_path: Path, openai_stub) -> None:
    """The judge's endpoint and a private response cache; undone after each test."""
    for name in (envopts.BASE_URL, envopts.API_KEY, envopts.MODEL, envopts.MAX_CONNECTIONS, envopts.TIMEOUT,
                 envopts.NO_CACHE, envopts.CACHE_EPOCH):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(envopts.CACHE_PATH, str(tmp_path / "responses.sqlite3"))
    monkeypatch.setenv(envopts.BASE_URL, openai_stub.base_url)
    monkeypatch.setenv(envopts.API_KEY, "sk-judge")


def _script(openai_stub, stub_reply, count: int) -> None:
    for index in range(count):
        message = {"role": "assistant", "content": REPLIES[index % len(REPLIES)]}
        openai_stub.script(stub_reply(body={"choices": [{"message": message}], "usage": {}}))


def _probes(run: Path) -> list[dict]:
    return [
        record
        for log in sorted((run / "logs").rglob("*.jsonl"))
        for record in map(json.loads, log.read_text(encoding="utf-8").splitlines())
        if record["type"] == "probe"
    ]


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_run_judge_logs_verdicts_and_the_report_prints_agreement(
    env, openai_stub, stub_reply, small_set_tasks, write_tasks, tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    out = tmp_path / "run"
    _script(openai_stub, stub_reply, 40)
    _invoke("run", "--no-progress", "--no-report", "--tasks", str(tasks), "--arms", "full-memory", "--out",
            str(out), "--judge", "openai:judge-model")  # fmt: skip
    probes = _probes(out)
    assert Counter(probe["judge_response"] for probe in probes) == Counter(
        REPLIES[i % len(REPLIES)] for i in range(len(probes))
    )
    assert [probe["judge"] for probe in probes] == [
        parse_verdict(probe["judge_response"]) for probe in probes
    ]
    assert {probe["judge"] for probe in probes} == {"correct", "stale", "unparsed", "wrong"}
    assert {probe["judge_model"] for probe in probes} == {"openai:judge-model"}
    assert len(openai_stub.requests) == len(probes)  # one judge call per probe, nothing else to the stub
    first = openai_stub.requests[0]
    assert first["model"] == "judge-model" and first["messages"][0] == {"role": "system", "content": RUBRIC}
    case = first["messages"][1]["content"]
    assert case.startswith("Question: ") and case.endswith("\nClass:") and "\nAnswer: " in case
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["judge"]["spec"] == "openai:judge-model" and manifest["judge"]["rubric_version"] == 1

    judged = tmp_path / "judged-report"  # one report (each costs seconds): the judge's verdicts primary
    _invoke("report", str(out), "--out", str(judged), "--primary", "judge", "--no-progress")
    report = (judged / "report.md").read_text(encoding="utf-8")
    assert "## Judge vs rules" in report and "Primary verdict in this report: **judge**" in report
    parsed = [p for p in probes if p["judge"] != "unparsed"]
    agree = sum(p["judge"] == p["classification"] for p in parsed)
    assert f"agree on {agree} of {len(parsed)}: Cohen's κ = " in report
    pairs = Counter((p["classification"], p["judge"]) for p in probes)
    row = next(line for line in report.splitlines() if line.startswith("| correct | "))
    cells = [int(cell) for cell in row.strip("|").split("|")[1:]]
    assert cells == [pairs[("correct", label)] for label in
                     ("correct", "stale", "poisoned", "abstained", "wrong", "unparsed")]  # fmt: skip
    with (judged / "judge.csv").open(encoding="utf-8") as handle:
        assert [row["judge"] for row in csv.DictReader(handle)] == [p["judge"] for p in probes]
    with (judged / "per_task.csv").open(encoding="utf-8") as handle:
        correct = sum(float(row["correct"]) for row in csv.DictReader(handle))
    by_judge = [p["judge"] if p["judge"] != "unparsed" else p["classification"] for p in probes]
    assert correct == by_judge.count("correct")
    assert by_judge.count("correct") != [p["classification"] for p in probes].count("correct")  # it changed


def test_rescore_judge_judges_an_old_run_and_the_cache_answers_again(
    env, openai_stub, stub_reply, small_set_tasks, write_tasks, run_ok, tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    out = tmp_path / "run"
    run_ok(tasks, out, arms="full-memory")  # no judge (run_ok: no report)
    assert "judge" not in _probes(out)[0]
    _script(openai_stub, stub_reply, 40)
    _invoke("rescore", str(out), "--judge", "openai:judge-model")
    rescored = _probes(out / "rescored")
    assert [p["judge"] for p in rescored] == [parse_verdict(p["judge_response"]) for p in rescored]
    assert Counter(p["judge_response"] for p in rescored) == Counter(
        REPLIES[i % len(REPLIES)] for i in range(len(rescored))
    )
    sent = len(openai_stub.requests)
    _invoke("rescore", str(out), "--judge", "openai:judge-model", "--out", str(tmp_path / "again"))
    assert len(openai_stub.requests) == sent  # every judge call answered by the response cache
    assert [p["judge"] for p in _probes(tmp_path / "again")] == [p["judge"] for p in rescored]
    manifest = json.loads((out / "rescored" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["judge"]["spec"] == "openai:judge-model"


def test_primary_judge_without_a_judged_run_is_one_error(
    small_set_tasks, write_tasks, run_ok, tmp_path
) -> None:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    run_ok(tasks, tmp_path / "run", arms="full-memory")
    result = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--primary", "judge", "--no-progress"])
    assert result.exit_code == 2
    assert "error: --primary judge: no run was judged (run or rescore it with --judge MODEL)" in result.output
