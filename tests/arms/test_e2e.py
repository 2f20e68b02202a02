"""Every new arm runs on every task group through `amnesia-bench run`: deterministic, within budget."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from amnesia_bench.cli import app

NEW_ARMS = (
    "retrieval,clue-folding,claims,claims-oracle-key,memorybank,memorybank-as-written,"
    "amnesia-hard-ttl,amnesia-sliding-ttl,amnesia-rank-decay,amnesia-keep-all-oracle-key"
)
MEMORY_LINE = re.compile(r"^- \[[^\]]+\] ")


def records(run_dir: Path) -> dict[str, list[dict]]:
    logs = {}
    for path in sorted((run_dir / "logs").glob("*/*.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        logs[f"{path.parent.name}/{path.name}"] = [
            {k: v for k, v in record.items() if not k.startswith("wall")} for record in lines
        ]
    return logs


def test_new_arms_run_every_group_deterministically_within_budget(tmp_path):
    for group in ("helpful", "harmful", "mixed"):
        run_a, run_b = tmp_path / f"{group}-a", tmp_path / f"{group}-b"
        for out in (run_a, run_b):
            args = ["run", "--arms", NEW_ARMS, "--group", group, "--limit", "2", "--out", str(out)]
            result = CliRunner().invoke(app, [*args, "--budget", "300", "--no-report", "--no-progress"])
            assert result.exit_code == 0, result.output
        first = records(run_a)
        assert first == records(run_b)
        assert len({name.split("/")[0] for name in first}) == len(NEW_ARMS.split(","))
        for log in first.values():
            assert log[-1]["type"] == "task_end"
            for record in log:
                if record["type"] == "injection":
                    assert record["tokens"] <= record["budget_tokens"]
                    for line in record["block"].splitlines():
                        if MEMORY_LINE.match(line):
                            assert re.search(r"written \w+ ago", line), line


def test_bad_option_is_a_one_line_error(tmp_path):
    args = ["run", "--arms", "claims", "--set", "claims.supersession=magic", "--out", str(tmp_path / "x")]
    result = CliRunner().invoke(app, [*args, "--no-report", "--no-progress"])
    assert result.exit_code == 2
    assert "supersession" in result.output and not (tmp_path / "x" / "logs").exists()
