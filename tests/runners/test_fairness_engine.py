"""tasks.fairness's static cut-off agrees with the engine: for every probe value it decides by time, on the
shipped sets and each shipped forgetting arm, the value is in the block injected at its probe exactly when
`value_fates` says it is kept (renewals, curves, the untrusted cap and the ttl policy included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arms.registry import create_arm
from tasks.fairness import fairness_summary, value_fates
from tasks.load import load_tasks
from tasks.logschema import log_filename
from tasks.scoring import find_mentions

SHIPPED = Path(__file__).resolve().parents[2] / "tasks"
ARMS = ("amnesia", "amnesia-hard-ttl", "amnesia-sliding-ttl")


def _blocks_at_probes(log: Path) -> dict[tuple[float, tuple[str, ...]], str]:
    """(probe time, the probe's candidate values) -> the block injected for that probe's model call."""
    found, block = {}, ""
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["type"] == "injection":
            block = record["block"]
        elif record["type"] == "probe":
            found[(record["sim_time"], tuple(record["expect"] + record["stale"] + record["poison"]))] = block
    return found


@pytest.mark.parametrize("policy", ["task", "fixed:3d"])
def test_kept_values_are_exactly_the_ones_the_engine_injects_at_the_probe(policy, tmp_path: Path) -> None:
    from amnesia_bench.cli import app

    sets = [f"{arm}.ttl_policy={policy}" for arm in ARMS]
    args = ["run", "--no-progress", "--no-report", "--tasks", str(SHIPPED), "--arms", ",".join(ARMS)]
    result = CliRunner().invoke(
        app, [*args, "--out", str(tmp_path), *(x for s in sets for x in ("--set", s))]
    )
    assert result.exit_code == 0, result.output
    tasks = load_tasks(SHIPPED)
    recorded = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))["fairness"]
    for arm in ARMS:
        fates = value_fates(tasks, create_arm(arm, {"ttl_policy": policy}).time_rule())
        assert recorded[arm] == fairness_summary(fates)  # what every report's header prints
        assert len(fates) > 150 and {f.kept for f in fates} == {True, False}
        logs: dict[str, dict] = {}
        for fate in fates:
            if fate.task_id not in logs:
                logs[fate.task_id] = _blocks_at_probes(tmp_path / "logs" / arm / log_filename(fate.task_id))
            (block,) = [
                b
                for (at, values), b in logs[fate.task_id].items()
                if at == fate.probe_at and fate.value in values
            ]
            assert bool(find_mentions(block, (fate.value,))) == fate.kept, (arm, fate)
