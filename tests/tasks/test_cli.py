"""`amnesia-bench validate` and `amnesia-bench generate` end to end through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from amnesia_bench import cli
from tasks.load import load_tasks

TASKS = Path(__file__).resolve().parents[2] / "tasks"


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    return cli.app


def test_validate_shipped_sets_prints_a_one_line_summary(app):
    result = CliRunner().invoke(app, ["validate", str(TASKS)])
    assert result.exit_code == 0, result.output
    line = result.output.strip()
    assert "\n" not in line and line.endswith(")") and " tasks OK (helpful: " in line
    assert "harmful: " in line and "mixed: " in line


def test_validate_prints_every_error_and_exits_2(app, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "id: x\ngroup: nope\ncategory: c\ndescription: d\nsessions: []\nextra: 1\n", encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {bad}:2: group: expected one of helpful|harmful|mixed, got 'nope'",
        f"error: {bad}:5: sessions: expected a non-empty list of sessions",
        f"error: {bad}:6: extra: unknown field "
        "(allowed: auto_compaction, category, description, group, id, lang, origin, sessions, start)",
    ]
    assert "Traceback" not in result.output


def test_validate_missing_path_exits_2(app, tmp_path):
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no such file or folder" in result.output


def test_generate_all_then_validate(app, tmp_path):
    out = tmp_path / "gen"
    runner = CliRunner()
    result = runner.invoke(app, ["generate", "--group", "all", "--n", "8", "--seed", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["count"] == 24 and manifest["seed"] == 3 and len(manifest["content_hash"]) == 64
    check = runner.invoke(app, ["validate", str(out)])
    assert check.output.strip() == "24 tasks OK (helpful: 8, harmful: 8, mixed: 8)"


def test_generate_is_byte_identical_for_a_seed(app, tmp_path):
    runner = CliRunner()
    for name in ("a", "b"):
        args = ["generate", "--group", "harmful", "--n", "12", "--seed", "4", "--out", str(tmp_path / name)]
        assert runner.invoke(app, args).exit_code == 0
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files_a)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--group", "useful", "--n", "3"],
            "error: --group: expected one of helpful|harmful|mixed|all, got 'useful'",
        ),
        (["--group", "mixed", "--n", "0"], "error: --n: expected a positive number of tasks, got 0"),
        (
            ["--group", "mixed", "--n", "2", "--ttl-noise", "-1"],
            "error: --ttl-noise: expected a sigma between 0 and 5.0, got -1.0",
        ),
    ],
)
def test_generate_bad_arguments_exit_2_with_one_line(app, tmp_path, args, message):
    result = CliRunner().invoke(app, ["generate", *args, "--out", str(tmp_path / "gen")])
    assert result.exit_code == 2
    assert result.output.strip() == message
    assert not (tmp_path / "gen").exists()


def test_generate_refuses_a_non_empty_out_folder(app, tmp_path):
    (tmp_path / "x.txt").write_text("keep", encoding="utf-8")
    result = CliRunner().invoke(app, ["generate", "--group", "mixed", "--n", "2", "--out", str(tmp_path)])
    assert result.exit_code == 2 and result.output.startswith("error: --out: ")
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_generate_ttl_noise_changes_only_the_ttls_and_is_deterministic(app, tmp_path):
    runner = CliRunner()
    for name, noise in (("plain", "0"), ("noisy", "0.7"), ("again", "0.7")):
        args = ["generate", "--group", "all", "--n", "9", "--seed", "5", "--out", str(tmp_path / name)]
        assert runner.invoke(app, [*args, "--ttl-noise", noise]).exit_code == 0

    def ttls(name):
        tasks = load_tasks(tmp_path / name)
        specs = [spec for task in tasks for s in task.sessions for turn in s.turns for spec in turn.remember]
        return tasks, [spec.ttl for spec in specs]

    plain, plain_ttls = ttls("plain")
    noisy, noisy_ttls = ttls("noisy")
    assert ttls("again")[1] == noisy_ttls
    assert (tmp_path / "noisy/MANIFEST.json").read_bytes() == (tmp_path / "again/MANIFEST.json").read_bytes()
    changed = [a != b for a, b in zip(plain_ttls, noisy_ttls, strict=True) if a is not None]
    assert sum(changed) >= 0.9 * len(changed)
    assert [(t.id, t.probes, [u.user for s in t.sessions for u in s.turns]) for t in plain] == [
        (t.id, t.probes, [u.user for s in t.sessions for u in s.turns]) for t in noisy
    ]
