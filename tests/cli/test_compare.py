"""`compare A B`: the configuration fields that differ come first, `--arm`/`--metric` narrow the tables, and
two runs without a shared task are refused (one line, exit 2)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from amnesia_bench.cli import app


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_compare_says_what_differs_first_and_filters_arms_and_metrics(small_run, tmp_path: Path) -> None:
    a = small_run(tmp_path / "a")
    b = small_run(tmp_path / "b", "--set", "amnesia.default_curve=flat", "--budget", "1500")
    code, output = _invoke(
        "compare", str(a), str(b), "--resamples", "100", "--arm", "amnesia", "--metric", "stale_error_rate"
    )
    assert code == 0, output
    lines = output.splitlines()
    start = lines.index("Configuration A → B:")
    # A's fields in its manifest's order, then the fields only B has
    assert lines[start : start + 6] == [
        "Configuration A → B:",
        "",
        '- arms.amnesia.config.default_curve: "ebbinghaus" → "flat"',
        "- budget_tokens: 2000 → 1500",
        '- arms.amnesia.options.default_curve: – → "flat"',
        "",
    ]
    assert lines.index("Configuration A → B:") < next(
        i for i, line in enumerate(lines) if line.startswith("|")
    )
    table_rows = [line for line in lines if line.startswith("| ") and not line.startswith("| arm")]
    assert table_rows and all(row.split(" | ")[0] == "| amnesia" for row in table_rows)
    assert "| arm | group | stale_error_rate A → B |" in lines
    paired = [row for row in table_rows if row.count("|") == 8]
    assert paired and all(" | stale_error_rate | " in row for row in paired)


def test_compare_of_one_configuration_says_so(small_run, tmp_path: Path) -> None:
    a, b = small_run(tmp_path / "a"), small_run(tmp_path / "b", "--seed", "0")
    code, output = _invoke("compare", str(a), str(b), "--resamples", "50")
    assert code == 0, output
    assert "Configuration A → B:\n\n- none (the same configuration)\n" in output


def test_compare_refuses_an_unknown_arm_or_metric(small_run, tmp_path: Path) -> None:
    a = small_run(tmp_path / "a")
    code, output = _invoke("compare", str(a), str(a), "--resamples", "50", "--arm", "claims")
    assert code == 2
    assert output.splitlines() == [
        "error: --arm: 'claims' is not in the runs (choose from no-memory, amnesia)"
    ]
    code, output = _invoke("compare", str(a), str(a), "--resamples", "50", "--metric", "speed")
    assert code == 2 and output.startswith("error: --metric: 'speed' is not in the runs")


def test_compare_without_a_shared_task_is_an_error(small_run, tmp_path: Path) -> None:
    a = small_run(tmp_path / "a", "--group", "helpful")
    b = small_run(tmp_path / "b", "--group", "harmful")
    code, output = _invoke("compare", str(a), str(b), "--resamples", "50", "--out", str(tmp_path / "cmp"))
    assert code == 2
    assert output.splitlines() == [f"error: {b}: no task in common with {a}; compare runs of the same tasks"]
    assert not (tmp_path / "cmp").exists()
