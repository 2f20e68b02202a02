"""`report`, `check`, `compare`, `rescore` end to end through typer's CliRunner on the fixture run."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def run_dir(write_run, tmp_path_factory):
    return write_run(tmp_path_factory.mktemp("fixture") / "run")


@pytest.fixture(scope="module")
def report_dir(run_dir):
    result = runner.invoke(app, ["report", str(run_dir), "--resamples", "300"])
    assert result.exit_code == 0, result.output
    return run_dir / "report"


def _copy(run_dir, tmp_path, name="copy"):
    target = tmp_path / name
    shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("report", "rescored"))
    return target


def test_report_writes_tables_markdown_and_figures(report_dir):
    summary = pd.read_csv(report_dir / "summary.csv")
    for column in ("arm", "group", "probes", "success_rate", "stale_error_rate", "poison_error_rate"):
        assert column in summary.columns
    for column in ("success_rate", "stale_error_rate", "context_tokens"):
        assert {f"{column}_lo", f"{column}_hi"} <= set(summary.columns)
    assert (report_dir / "per_task.csv").stat().st_size > 0
    text = (report_dir / "report.md").read_text(encoding="utf-8")
    assert "On the harmful group, `amnesia` beats `full-memory` at the 95% level" in text
    assert "content hash" in text and "## Limits" in text and "Power:" in text
    names = [
        "stale_error_by_arm_group",
        "context_tokens_over_time",
        "success_vs_tokens",
        "stale_error_vs_age",
    ]
    for name in [*names, "strength_timeline"]:
        assert (report_dir / "figures" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (report_dir / "figures" / f"{name}.svg").stat().st_size > 1000


def test_report_on_a_copied_run_gives_the_same_numbers(run_dir, report_dir, tmp_path):
    copy = _copy(run_dir, tmp_path)
    assert runner.invoke(app, ["report", str(copy), "--resamples", "300"]).exit_code == 0
    assert (copy / "report" / "summary.csv").read_text() == (report_dir / "summary.csv").read_text()


def test_two_seeds_pool_as_separate_clusters(run_dir, tmp_path):
    second = _copy(run_dir, tmp_path, "seed1")
    out = tmp_path / "pooled"
    result = runner.invoke(
        app, ["report", str(run_dir), str(second), "--out", str(out), "--resamples", "200"]
    )
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "summary.csv").set_index(["arm", "group"])
    assert summary.loc[("amnesia", "all"), "probes"] == 10
    assert summary.loc[("amnesia", "all"), "tasks"] == 8


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda lines: [*lines[:-1], lines[-1][:20]], ":{n}: truncated record"),
        (lambda lines: [*lines[:2], "{not json", *lines[3:]], ":3: corrupt record"),
        (lambda lines: lines[:-1], ":{n}: unfinished pair"),
    ],
)
def test_damaged_log_fails_naming_file_and_line(run_dir, tmp_path, damage, expected):
    copy = _copy(run_dir, tmp_path)
    log = copy / "logs" / "amnesia" / "harmful__drink.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    broken = damage(lines)
    text = "\n".join(broken) + ("" if expected.startswith(":{n}: trunc") else "\n")
    log.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["report", str(copy)])
    assert result.exit_code == 2
    assert f"{log}{expected.format(n=len(broken))}" in result.output
    assert not (copy / "report").exists()


def test_check_exit_codes(run_dir, tmp_path):
    ok = runner.invoke(app, ["check", str(run_dir), "--max", "stale_error_rate:amnesia:harmful=0.05"])
    assert ok.exit_code == 0, ok.output
    fail = runner.invoke(
        app,
        ["check", str(run_dir), "--max", "stale_error_rate:full-memory:harmful=0.05", "--min",
         "success_rate:amnesia:all=0.9"],
    )  # fmt: skip
    assert fail.exit_code == 1
    lines = [line for line in fail.output.splitlines() if line.startswith("FAIL")]
    assert lines == [
        "FAIL stale_error_rate arm=full-memory group=harmful value=1 max=0.05",
        "FAIL success_rate arm=amnesia group=all value=0.8 min=0.9",
    ]
    for bad in (
        "stale_error_rate:amnesia=0.1",
        "nope:amnesia:harmful=0.1",
        "stale_error_rate:ghost:harmful=1",
    ):
        assert runner.invoke(app, ["check", str(run_dir), "--max", bad]).exit_code == 2
    assert runner.invoke(app, ["check", str(tmp_path / "missing"), "--max", bad]).exit_code == 2


def test_check_against_a_baseline_is_noise_aware(run_dir, report_dir, tmp_path):
    same = runner.invoke(app, ["check", str(run_dir), "--baseline", str(report_dir / "summary.csv")])
    assert same.exit_code == 0, same.output
    baseline = pd.read_csv(report_dir / "summary.csv")
    better = baseline.copy()
    better["stale_error_rate"] = (
        better["stale_error_rate"] - 0.5
    )  # full-memory harmful: 1.0 -> 0.5, CI width 0
    better.to_csv(tmp_path / "better.csv", index=False)
    worse = runner.invoke(app, ["check", str(run_dir), "--baseline", str(tmp_path / "better.csv")])
    assert worse.exit_code == 1
    assert "FAIL stale_error_rate arm=full-memory group=harmful" in worse.output
    noisy = better.copy()
    noisy["stale_error_rate_lo"], noisy["stale_error_rate_hi"] = 0.0, 1.0
    noisy.to_csv(tmp_path / "noisy.csv", index=False)
    within = runner.invoke(app, ["check", str(run_dir), "--baseline", str(tmp_path / "noisy.csv")])
    assert within.exit_code == 0 and "within noise" in within.output


def test_rescore_reclassifies_without_touching_the_original(run_dir, tmp_path):
    copy = _copy(run_dir, tmp_path)
    log = copy / "logs" / "amnesia" / "harmful__drink.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    probe = next(r for r in records if r["type"] == "probe")
    probe["classification"] = "wrong"  # as if an old scorer had misjudged "It is oolong."
    original = "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
    log.write_text(original, encoding="utf-8")
    result = runner.invoke(app, ["rescore", str(copy)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("1 of 15 ")
    assert log.read_text(encoding="utf-8") == original
    rescored = copy / "rescored" / "logs" / "amnesia" / "harmful__drink.jsonl"
    fixed = next(json.loads(x) for x in rescored.read_text().splitlines() if '"type": "probe"' in x)
    assert (fixed["classification"], fixed["original_classification"]) == ("correct", "wrong")
    assert runner.invoke(app, ["report", str(copy / "rescored"), "--resamples", "100"]).exit_code == 0


def test_compare_prints_side_by_side_and_paired_differences(run_dir, tmp_path):
    result = runner.invoke(
        app, ["compare", str(run_dir), str(_copy(run_dir, tmp_path)), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "Paired differences B − A" in result.output and "80.0% → 80.0%" in result.output
    assert (tmp_path / "compare.csv").exists()


def test_a_run_with_no_stale_probes_still_gets_a_whole_report(
    run_args, write_tasks, preference_task, tmp_path
):
    """One helpful task on one arm: no probe has stale values, so the stale-by-age table is empty."""
    from amnesia_bench.cli import app as bench_app

    tasks = write_tasks(tmp_path / "tasks", [preference_task])
    out = tmp_path / "run"
    args = [arg for arg in run_args(tasks, out, arms="no-memory") if arg != "--no-report"]
    result = CliRunner().invoke(bench_app, args)
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out / "report" / "stale_by_age.csv").empty
    assert (out / "report" / "report.md").stat().st_size > 0


def test_rescore_keeps_lines_whose_content_holds_unicode_line_separators(
    tmp_path, write_tasks, run_ok, drink_task, run_logs
):
    """U+0085 and U+2028 are line breaks to str.splitlines() but plain characters inside a JSON line."""
    task = json.loads(json.dumps(drink_task).replace("is lapsang.", "is lapsang.\u2028(and\u0085tea)"))
    tasks = write_tasks(tmp_path / "tasks", [task])
    run_ok(tasks, tmp_path / "run", arms="full-memory")
    result = runner.invoke(app, ["rescore", str(tmp_path / "run"), "--out", str(tmp_path / "rescored")])
    assert result.exit_code == 0, result.output
    assert run_logs(tmp_path / "rescored") == run_logs(tmp_path / "run")
