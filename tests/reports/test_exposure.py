"""Exposure, the model-free level: what a probe's prompt held, logged by the runner, worked out again for
logs written before it was logged, and rated in the report the same way both times."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from reports.build import compute_tables
from tasks.exposure import exposed_values, exposure_text, fill_exposure
from tasks.logschema import read_log

PROMPT = [
    {
        "role": "system",
        "content": "sys\n\nAMNESIA MEMORY\n- [m-1] fact · written 1d ago · The drink is oolong.",
    },
    {"role": "user", "content": "Earlier: it is no longer lapsang."},
    {"role": "assistant", "content": "Matcha, I think."},  # the model's own earlier answer
    {"role": "user", "content": "Is it oolong, lapsang or matcha?"},  # the question
    {"role": "assistant", "content": None, "tool_calls": [{"id": "e-0"}]},
    {"role": "tool", "tool_call_id": "e-0", "content": "Search result: Pu'er is served on Fridays."},
]


def test_exposure_reads_what_the_task_and_arm_put_before_the_question_and_nothing_the_model_wrote() -> None:
    assert "Matcha" not in exposure_text(PROMPT) and "Is it oolong" not in exposure_text(PROMPT)
    found = exposed_values(PROMPT, ["oolong"], ["lapsang"], ["matcha", "Pu'er"])
    # oolong from the block, Pu'er from the task's tool output; "no longer lapsang" asserts nothing; matcha is
    # only in the model's answer and in the question
    assert found == {"expect": ["oolong"], "stale": [], "poison": ["Pu'er"]}


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import SMALL_SET_FILE  # the four hand-written tasks of the shared fixtures

    out = tmp_path_factory.mktemp("exposure") / "run"
    args = ["run", "--no-progress", "--no-report", "--tasks", str(SMALL_SET_FILE), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--arms", "no-memory,full-memory,amnesia"])
    assert result.exit_code == 0, result.output
    return out


def _without_exposure(run: Path, target: Path) -> Path:
    """A copy of the run as a log written before `exposed` existed: no `exposed` on probes, version-1
    summaries (which lack its column)."""
    for path in run.rglob("*"):
        copy = target / path.relative_to(run)
        if path.is_dir():
            copy.mkdir(parents=True, exist_ok=True)
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix != ".jsonl":
            copy.write_bytes(path.read_bytes())
            continue
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            record.pop("exposed", None)
            if record["type"] == "task_end":
                record["summary"]["v"] = 1
                del record["summary"]["probes"]["exposed"]
            lines.append(json.dumps(record, ensure_ascii=False))
        copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def test_old_logs_get_the_exposure_the_runner_logged_and_the_same_rates(panel: Path, tmp_path: Path) -> None:
    old = _without_exposure(panel, tmp_path / "old")
    logged = sorted(panel.rglob("*.jsonl"))
    assert logged
    for path in logged:
        new_probes = [r for r in read_log(path) if r["type"] == "probe"]
        old_records = fill_exposure(read_log(old / path.relative_to(panel)))
        old_probes = [r for r in old_records if r["type"] == "probe"]
        assert [r["exposed"] for r in old_probes] == [r["exposed"] for r in new_probes]
        assert all(r["exposed"] is not None for r in new_probes)
    # the report reads the old logs whole (their summaries are of version 1) and gets the same rates
    columns = ["arm", "group", "expected_exposed_rate", "stale_exposed_rate", "poison_exposed_rate"]
    before, after = (compute_tables(run, resamples=50).summary[columns] for run in (panel, old))
    pd.testing.assert_frame_equal(before, after)


def test_the_rates_count_the_probes_that_list_a_value_and_held_it(panel: Path) -> None:
    summary = compute_tables(panel, resamples=50).summary.set_index(["arm", "group"])
    probes = [r for path in sorted(panel.rglob("*.jsonl")) for r in read_log(path) if r["type"] == "probe"]
    for arm in ("no-memory", "full-memory", "amnesia"):
        mine = [r for r in probes if r["arm"] == arm]
        for kind, rate in (("expect", "expected_exposed_rate"), ("stale", "stale_exposed_rate")):
            listing = [r for r in mine if r[kind]]
            held = [r for r in listing if r["exposed"][kind]]
            assert summary.loc[(arm, "all"), rate] == pytest.approx(len(held) / len(listing))
    # full memory still shows a superseded value that amnesia has forgotten
    assert (
        summary.loc[("full-memory", "all"), "stale_exposed_rate"]
        > summary.loc[("amnesia", "all"), "stale_exposed_rate"]
    )


def test_the_viewer_counts_exposure_from_old_and_new_logs_alike(panel: Path, tmp_path: Path) -> None:
    from reports.viewer.build import build_viewer

    def summary(run: Path, out: Path) -> list[dict]:
        build_viewer([run], out)
        script = (out / "data" / "index.js").read_text(encoding="utf-8")
        index = json.loads(script.removeprefix("AmnesiaViewer.index(").removesuffix(");\n"))
        return index["summary"]

    new = summary(panel, tmp_path / "new-site")
    assert new == summary(_without_exposure(panel, tmp_path / "old"), tmp_path / "old-site")
    probes = [r for path in sorted(panel.rglob("*.jsonl")) for r in read_log(path) if r["type"] == "probe"]
    for row in (r for r in new if r["group"] == "all"):
        mine = [p for p in probes if p["arm"] == row["column"]]
        assert row["stale_exposed"] == sum(bool(p["exposed"]["stale"]) for p in mine)
        assert row["expected_exposed"] == sum(bool(p["exposed"]["expect"]) for p in mine)


def test_a_probe_of_unknown_exposure_counts_in_no_rate_of_the_report_or_the_viewer(
    panel: Path, tmp_path: Path
) -> None:
    """An old log whose model calls carry no `messages`: what reached its probes' prompts is unknown, not
    "nothing", so the report and the viewer rate exposure on the other probes only."""
    from reports.viewer.build import build_viewer

    old = _without_exposure(panel, tmp_path / "old")
    unlogged = sorted((old / "logs" / "full-memory").glob("*.jsonl"))[0]
    records = [json.loads(line) for line in unlogged.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record.pop("messages", None)
    unlogged.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    exposures = [p["exposed"] for p in fill_exposure(read_log(unlogged)) if p["type"] == "probe"]
    assert exposures and all(found is None for found in exposures)

    probes = [r for path in sorted(panel.rglob("*.jsonl")) for r in read_log(path) if r["type"] == "probe"]
    mine = [r for r in probes if r["arm"] == "full-memory"]
    known = [r for r in mine if r["task_id"] != records[0]["task_id"]]
    assert any(r["expect"] and r["exposed"]["expect"] for r in mine if r not in known)  # a held value unseen
    report = compute_tables(old, resamples=50).summary.set_index(["arm", "group"]).loc[("full-memory", "all")]
    build_viewer([old], tmp_path / "site")
    script = (tmp_path / "site" / "data" / "index.js").read_text(encoding="utf-8")
    index = json.loads(script.removeprefix("AmnesiaViewer.index(").removesuffix(");\n"))
    viewer = next(r for r in index["summary"] if (r["column"], r["group"]) == ("full-memory", "all"))
    for kind, rate, held, listing in (
        ("expect", "expected_exposed_rate", "expected_exposed", "expect_probes"),
        ("stale", "stale_exposed_rate", "stale_exposed", "stale_exposure_probes"),
    ):
        lists = [r for r in known if r[kind]]
        expected = len([r for r in lists if r["exposed"][kind]]) / len(lists)
        assert report[rate] == pytest.approx(expected)
        assert viewer[held] / viewer[listing] == pytest.approx(expected)
