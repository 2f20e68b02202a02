"""Which pairs a `run` replays and what it says about them: `--shard` (no report of a part), `--limit`
(refused at 0, said when larger than the set), `--task-id` (repeatable; an unknown id is one line)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from amnesia_bench.cli import app

SMALL_SET_FILE = Path(__file__).resolve().parents[1] / "data" / "small_set.yaml"
SMALL_SET_IDS = [
    "harmful/verification-drink",
    "helpful/answer-language",
    "harmful/sub-scratch",
    "mixed/zh-drink",
]


def _run(out: Path, *extra: str) -> tuple[int, str]:
    args = ["run", "--no-progress", "--tasks", str(SMALL_SET_FILE), "--arms", "no-memory", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, *extra])
    return result.exit_code, result.output


def _logged_tasks(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "logs" / "no-memory").glob("*.jsonl"))


def test_a_shard_builds_no_report_and_says_to_report_after_all_shards(tmp_path: Path) -> None:
    out = tmp_path / "run"
    for index in range(2):
        code, output = _run(out, "--arms", "no-memory,amnesia", "--shard", f"{index}/2", "--resume")
        assert code == 0, output
        assert "partial shard: run `amnesia-bench report` on the run folder after all shards" in output
        assert not (out / "report").exists()
    report = CliRunner().invoke(app, ["report", str(out), "--resamples", "50", "--no-progress"])
    assert report.exit_code == 0, report.output
    assert (out / "report" / "summary.csv").is_file()


def test_limit_zero_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, output = _run(out, "--limit", "0")
    assert code == 2
    assert output.strip().splitlines() == ["error: --limit: expected at least 1 task, got 0"]
    assert not out.exists()


def test_a_limit_larger_than_the_set_says_it_runs_every_task(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, output = _run(out, "--limit", "500", "--no-report")
    assert code == 0, output
    assert "warning: --limit 500: only 4 tasks to choose from; running all 4" in output.splitlines()
    assert len(_logged_tasks(out)) == 4


def test_task_id_selects_tasks_and_is_kept_for_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    chosen = ["--task-id", SMALL_SET_IDS[3], "--task-id", SMALL_SET_IDS[0]]
    code, output = _run(out, *chosen, "--no-report")
    assert code == 0, output
    assert _logged_tasks(out) == ["harmful__verification-drink.jsonl", "mixed__zh-drink.jsonl"]
    assert json.loads((out / "manifest.json").read_text())["task_ids"] == sorted(
        SMALL_SET_IDS[i] for i in (0, 3)
    )
    code, output = _run(out, *chosen, "--no-report", "--resume")
    assert code == 0 and "0 pairs run, 2 skipped" in output
    code, output = _run(out, "--task-id", SMALL_SET_IDS[0], "--no-report", "--resume")
    assert code == 2 and "cannot resume: task_ids differs" in output


def test_an_unknown_task_id_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, output = _run(out, "--task-id", SMALL_SET_IDS[0], "--task-id", "helpful/no-such-task")
    assert code == 2
    assert output.strip().splitlines() == [
        "error: --task-id: no task 'helpful/no-such-task' in the selected tasks (amnesia-bench list tasks)"
    ]
    assert not out.exists()
