"""Issue 31 end to end: a few shipped tasks of the new mechanisms run through `amnesia-bench run` and
`report`; every probe that is not correct carries the failure code its mechanism and classification give, and
the report prints the failure-code table and forgetting-aware success, and the viewer shows the codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from reports.build import build_report
from reports.viewer.build import build_viewer
from tasks.failures import failure_code

TASKS = Path(__file__).resolve().parents[2] / "tasks"
SUBSET = (
    "harmful/premise-expense-approver.yaml",
    "harmful/cascade-manager-approver.yaml",
    "harmful/deleted-address-in-profile.yaml",
    "mixed/zh-implicit-landlord-and-format.yaml",
)


def test_new_mechanisms_run_with_failure_codes_and_report(tmp_path, run_ok) -> None:
    subset = tmp_path / "tasks"
    for name in SUBSET:
        (subset / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TASKS / name, subset / name)
    run_ok(subset, tmp_path / "run", "--model", "scripted:last", arms="no-memory,full-memory")
    probes = [
        json.loads(line)
        for log in sorted((tmp_path / "run" / "logs").rglob("*.jsonl"))
        for line in log.read_text(encoding="utf-8").splitlines()
        if '"type":"probe"' in line.replace(" ", "")
    ]
    assert len(probes) == 2 * 5
    for probe in probes:
        expected = failure_code(probe.get("mechanism"), probe["classification"])
        assert probe.get("failure") == expected, probe
    codes = {probe.get("failure") for probe in probes}
    # full memory keeps the old notes and this scripted model answers with the old value: each stale answer
    # gets its mechanism's own name; no memory abstains (false-forget on the still-valid probe)
    assert codes == {None, "stale-memory", "premise-accepted", "cascade-missed", "deletion-leak", "abstained",
                     "false-forget"}  # fmt: skip
    report = build_report(tmp_path / "run", resamples=50)
    text = (report / "report.md").read_text(encoding="utf-8")
    failures = text.split("## Failure codes by arm", 1)[1].split("\n## ", 1)[0]
    assert "| arm | probes | stale-memory | premise-accepted | cascade-missed | deletion-leak |" in failures
    # no memory: 4 of its 5 probes abstained (3 `abstained`, 1 `false-forget`), one deletion answered right
    assert "| no-memory | 5 | 0.0% " in failures
    assert "forgetting-aware success" in text
    # the viewer's task files carry each probe's code (its timeline shows it beside the classification)
    site = build_viewer([tmp_path / "run"], tmp_path / "site")
    shown = "".join(path.read_text(encoding="utf-8") for path in (site / "data" / "tasks").glob("*.js"))
    assert '"failure":"premise-accepted"' in shown and '"failure":"deletion-leak"' in shown
    assert "r.failure" in (site / "viewer.js").read_text(encoding="utf-8")
