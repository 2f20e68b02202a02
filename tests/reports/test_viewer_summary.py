"""The viewer's summary gives each share with the 95% CI the report gives the same cell, and `view` takes a
folder of run folders (`run --seeds`) as `report` does. The page's rendering of both is checked in a browser
by test_reports_viewer.py."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from tasks.failures import FAILURE_CODES

ARMS = "no-memory,full-memory,amnesia"
SHARES = {
    "success": "success_rate",
    "stale_error": "stale_error_rate",
    "poison_error": "poison_error_rate",
    "expected_exposed": "expected_exposed_rate",
    "stale_exposed": "stale_exposed_rate",
    "poison_exposed": "poison_exposed_rate",
}


def _index(site: Path) -> dict:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    return json.loads(text.removeprefix("AmnesiaViewer.index(").removesuffix(");\n"))


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_the_summary_cis_are_the_reports(write_generated, tmp_path: Path) -> None:
    tasks = write_generated(tmp_path / "tasks", per_group=8, seed=3)
    run = tmp_path / "run"
    _invoke("run", "--no-progress", "--tasks", str(tasks), "--arms", ARMS, "--out", str(run))
    _invoke("view", str(run), "--out", str(tmp_path / "site"))
    summary = pd.read_csv(run / "report" / "summary.csv").set_index(["arm", "group"])
    rows = _index(tmp_path / "site")["summary"]
    assert len(rows) == len(summary)
    widths = []
    for row in rows:
        cell = summary.loc[(row["column"], row["group"])]
        for share, metric in SHARES.items():
            lo, hi = row["ci"][share]
            if pd.isna(cell[f"{metric}_lo"]):
                assert (lo, hi) == (None, None)
            else:
                assert (lo, hi) == pytest.approx((cell[f"{metric}_lo"], cell[f"{metric}_hi"]))
                widths.append(hi - lo)
    assert max(widths) > 0.1  # intervals with some width: the comparison is not one of 0s and 1s
    failures = _index(tmp_path / "site")["failure_codes"]
    assert failures == list(FAILURE_CODES)
    seen = 0
    for row in rows:  # the failure table: the report's failure-code rates, with the same CIs
        cell = summary.loc[(row["column"], row["group"])]
        for code in failures:
            rate = code.replace("-", "_") + "_failure_rate"
            assert row[f"failure:{code}"] / row["probes"] == pytest.approx(cell[rate])
            lo, hi = row["ci"][f"failure:{code}"]
            assert (lo, hi) == pytest.approx((cell[f"{rate}_lo"], cell[f"{rate}_hi"]))
            seen += row[f"failure:{code}"]
    assert seen > 0


def test_view_takes_a_folder_of_runs_like_report(small_set_tasks, write_tasks, tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    runs = tmp_path / "runs"
    _invoke(
        "run", "--no-progress", "--no-report", "--tasks", str(tasks), "--arms", "no-memory,amnesia",
        "--seeds", "0,1", "--out", str(runs),
    )  # fmt: skip
    output = _invoke("view", str(runs))
    assert output.strip() == f"viewer written to {runs / 'view' / 'index.html'}"
    index = _index(runs / "view")
    assert [run["path"] for run in index["runs"]] == [str(runs / "seed-0"), str(runs / "seed-1")]
    assert [column["label"] for column in index["columns"]] == [
        f"seed-{seed}:{arm}" for seed in (0, 1) for arm in ("no-memory", "amnesia")
    ]
