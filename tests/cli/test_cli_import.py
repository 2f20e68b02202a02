"""`amnesia-bench import locomo|longmemeval` end to end, then `run` and `report` on the imported set: the
report shows evidence retention per arm and mechanism with CIs, and token F1 beside value matching."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from amnesia_bench.cli import app
from reports.build import build_report
from tasks.load import task_set_hash


def test_import_locomo_then_validate_run_and_report(tmp_path, write_locomo, run_ok):
    out = tmp_path / "locomo"
    result = CliRunner().invoke(
        app, ["import", "locomo", str(write_locomo(tmp_path / "in")), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("2 tasks (6 memories, 10 probes) written to")
    assert json.loads((out / "MANIFEST.json").read_text())["content_hash"] == task_set_hash(out)[0]
    result = CliRunner().invoke(app, ["validate", str(out)])
    assert result.exit_code == 0 and "2 tasks OK (helpful: 2" in result.output
    run_ok(out, tmp_path / "run")
    report = build_report(tmp_path / "run", resamples=200)
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "## Evidence retention" in text and "## Free-text answers" in text
    rows = [
        line for line in text.splitlines() if line.startswith("| `full-memory`") and "| single-hop |" in line
    ]
    assert rows and "100.0% [100.0, 100.0]" in rows[0]
    assert (report / "evidence.csv").is_file() and (report / "free_text.csv").is_file()
    # per dialog id, beside the per-memory table ("What did Ben ask for?" cites a turn with no observation)
    per_id = text.split("### Evidence retention per dialog id", 1)[1].split("\n## ", 1)[0]
    (full,) = [
        line for line in per_id.splitlines() if line.startswith("| `full-memory`") and "| all |" in line
    ]
    cells = [cell.strip() for cell in full.strip("|").split("|")]
    assert cells[10] != "0.0% [0.0, 0.0]" and cells[10].endswith("]")  # ids in no memory
    # line overhead: the block's tokens that are not the injected memories' text, read back off the blocks
    overhead = _overhead_from_blocks(tmp_path / "run" / "logs" / "full-memory")
    assert cells[11].startswith(f"{overhead * 100:.1f}%")


def _overhead_from_blocks(logs) -> float:
    """1 - (tokens of the memories' own text) / (block tokens), over the blocks injected at evidence probes,
    by cutting each line's header (`- [id] kind · written ... ago · `) and the title off the block text."""
    from amnesia.tokens import count_tokens

    block_tokens = content_tokens = 0
    for log in sorted(logs.glob("*.jsonl")):
        block = ""
        for line in log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["type"] == "injection":
                block, tokens = record["block"], record["tokens"]
            elif record["type"] == "probe" and record.get("evidence"):
                block_tokens += tokens
                content_tokens += sum(count_tokens(row.split(" · ")[-1]) for row in block.splitlines()[1:])
    return 1 - content_tokens / block_tokens


def test_import_errors_are_one_line_exit_2(tmp_path, write_locomo, longmemeval_items):
    source = write_locomo(tmp_path / "in")
    bad_policy = ["import", "locomo", str(source), "--out", str(tmp_path / "o"), "--ttl-policy", "forever"]
    result = CliRunner().invoke(app, bad_policy)
    assert result.exit_code == 2 and result.output.startswith("error: --ttl-policy: ")
    result = CliRunner().invoke(
        app, ["import", "locomo", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "no such file or folder" in result.output
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", "locomo", str(source), "--out", str(tmp_path / "full")])
    assert result.exit_code == 2 and "--out" in result.output
    assert (tmp_path / "full" / "keep.txt").read_text(encoding="utf-8") == "mine"  # nothing overwritten
    lme = tmp_path / "lme.json"
    lme.write_text(json.dumps(longmemeval_items()), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["import", "longmemeval", str(lme), "--out", str(tmp_path / "lme"), "--ttl-policy", "fixed:30d"]
    )
    assert result.exit_code == 0, result.output
    assert "1 of 1 knowledge-update probes with stale values" in result.output
