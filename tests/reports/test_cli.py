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
    result = runner.invoke(app, ["report", str(run_dir), "--resamples", "300", "--figures"])
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
    # Two harmful tasks both flip to correct: +100 pts, but p = 0.5, two tasks are too few for any interval
    # (it used to print the zero-width [+100, +100]) and 2 < MIN_TASKS tasks differ: not significant.
    assert (
        "On the harmful group, `amnesia` vs `full-memory`, success rate: +100.0 pts [n too small: 2 tasks], "
        "p = 0.5, 2 tasks (2 differ): no significant difference (p ≥ 0.05; 2 tasks: too few for any "
        "interval; 2 of 2 tasks differ, fewer than 10)"
    ) in text
    assert "significantly" not in text.split("## Methodology")[0]
    paired = pd.read_csv(report_dir / "paired.csv")
    assert {"p_value", "significant", "tasks_differ"} <= set(paired.columns) and not paired[
        "significant"
    ].any()
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


def test_two_seeds_pool_as_repeated_measures_of_each_task(run_dir, write_run, tmp_path):
    second = write_run(tmp_path / "seed1", seed=1)
    out = tmp_path / "pooled"
    result = runner.invoke(
        app, ["report", str(run_dir), str(second), "--out", str(out), "--resamples", "200"]
    )
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "summary.csv").set_index(["arm", "group"])
    assert summary.loc[("amnesia", "all"), "probes"] == 10
    # `tasks` counts distinct tasks, `task_runs` the (seed, task) runs pooled over them
    assert summary.loc[("amnesia", "all"), "tasks"] == 4
    assert summary.loc[("amnesia", "all"), "task_runs"] == 8
    assert (
        summary.loc[("amnesia", "harmful"), "tasks"] * 2 == summary.loc[("amnesia", "harmful"), "task_runs"]
    )
    paired = pd.read_csv(out / "paired.csv")
    # Clustered by task: two seeds of the same 4 tasks are still 4 paired tasks.
    assert set(paired["tasks"]) <= {1, 2, 3, 4} and paired["tasks"].max() == 4


@pytest.mark.parametrize("how", ["same folder twice", "a copy with the same seed"])
def test_a_duplicated_run_is_refused(run_dir, tmp_path, how):
    second = run_dir if how == "same folder twice" else _copy(run_dir, tmp_path)
    result = runner.invoke(app, ["report", str(run_dir), str(second), "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "duplicate of" in result.output and "seed 0" in result.output
    assert not (tmp_path / "r").exists()


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


def test_a_limit_on_too_few_observations_says_so(run_dir):
    result = runner.invoke(app, ["check", str(run_dir), "--max", "stale_error_rate:amnesia:harmful=0.05"])
    assert result.exit_code == 0, result.output
    assert "NOTE stale_error_rate arm=amnesia group=harmful: too few observations" in result.output
    assert result.output.splitlines()[-1] == "PASS: 1 limit(s) hold; 1 note(s) above"


def test_a_summary_cannot_be_a_baseline(run_dir, report_dir):
    result = runner.invoke(app, ["check", str(run_dir), "--baseline", str(report_dir / "summary.csv")])
    assert result.exit_code == 2 and "no per-task counts to pair on" in result.output


def test_on_a_tiny_run_nothing_is_significant_so_a_copy_passes(run_dir, report_dir):
    for baseline in (run_dir, report_dir, report_dir / "per_task.csv"):
        result = runner.invoke(
            app, ["check", str(run_dir), "--baseline", str(baseline), "--resamples", "200"]
        )
        assert result.exit_code == 0, result.output
        assert result.output.splitlines()[-1].startswith("PASS: ")


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
    assert "Paired on 4 of 4 A tasks (B: 4 tasks)" in result.output
    assert (tmp_path / "compare.csv").exists()


def _drop_group(run, group: str):
    for log in run.glob(f"logs/*/{group}__*.jsonl"):
        log.unlink()
    return run


def test_compare_pairs_only_the_shared_tasks_and_says_how_many(run_dir, tmp_path):
    helpful_only = _drop_group(_copy(run_dir, tmp_path, "helpful-only"), "harmful")
    result = runner.invoke(app, ["compare", str(run_dir), str(helpful_only)])
    assert result.exit_code == 0, result.output
    assert "Paired on 2 of 4 A tasks (B: 2 tasks)" in result.output
    # both sides on the shared (helpful) tasks: amnesia's success there is 2 of 3 probes on either side
    assert "| amnesia | all | 66.7% → 66.7%" in result.output and "| amnesia | harmful" not in result.output


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
    by_age = pd.read_csv(out / "report" / "stale_by_age.csv")
    assert (by_age["probes"] == 0).all() and by_age["rate"].isna().all()  # every bin there, marked empty
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


def test_a_named_reference_arm_pairs_nothing_twice_and_an_unknown_one_is_exit_2(run_dir, tmp_path):
    out = tmp_path / "with-reference"
    result = runner.invoke(
        app, ["report", str(run_dir), "--resamples", "300", "--reference", "amnesia", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    paired = pd.read_csv(out / "paired.csv")
    # every arm was already paired with amnesia (against no-memory and full-memory): no pair twice
    pairs = set(zip(paired["arm"], paired["reference"], strict=True))
    assert ("amnesia", "full-memory") in pairs and ("full-memory", "amnesia") not in pairs

    missing = runner.invoke(
        app, ["report", str(run_dir), "--reference", "claims", "--out", str(tmp_path / "never")]
    )
    assert missing.exit_code == 2
    assert "--reference: arm 'claims' is not in the runs" in missing.output
    assert not (tmp_path / "never").exists()


def test_a_report_of_chosen_arms_in_paper_style(run_dir, tmp_path):
    """`report --arms b,a --figure-style paper`: only those arms, in that order, in every table, and figures
    one paper column wide (3.5 in at 120 dpi, plus the pad) with no title."""
    from PIL import Image

    out = tmp_path / "paper"
    args = ["report", str(run_dir), "--out", str(out), "--resamples", "100", "--no-progress", "--figures"]
    result = runner.invoke(app, [*args, "--arms", "amnesia,no-memory", "--figure-style", "paper"])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "summary.csv")
    assert list(dict.fromkeys(summary["arm"])) == ["amnesia", "no-memory"]
    assert list(dict.fromkeys(pd.read_csv(out / "per_task.csv")["arm"])) == ["amnesia", "no-memory"]
    for name in ("success_vs_tokens", "tradeoff", "context_tokens_over_time"):
        width, _ = Image.open(out / "figures" / f"{name}.png").size
        assert 3.3 * 120 <= width <= (3.5 + 0.3) * 120, (name, width)
        svg = (out / "figures" / f"{name}.svg").read_text(encoding="utf-8")
        assert "full-memory" not in svg and "Trade-off" not in svg and "Success vs" not in svg


@pytest.mark.parametrize(
    ("arms", "fragment"),
    [
        ("amnesia,nope", "--arms: 'nope' is not in the runs"),
        ("amnesia,,no-memory", "--arms: expected distinct"),
    ],
)
def test_unknown_or_malformed_report_arms_are_one_line_errors(run_dir, tmp_path, arms, fragment):
    out = tmp_path / "never"
    result = runner.invoke(app, ["report", str(run_dir), "--out", str(out), "--arms", arms, "--no-progress"])
    assert result.exit_code == 2, result.output
    assert fragment in result.output and len(result.output.strip().splitlines()) == 1
    assert not out.exists()
