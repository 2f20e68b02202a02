"""skill/SKILL.md: valid frontmatter, the stance it teaches, and every command it shows runs, in order."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from amnesia.cli import run

SKILL = Path(__file__).resolve().parents[2] / "skill" / "SKILL.md"
PROGRAM = "dsh-memory-forget"
ID_PATTERN = re.compile(r"\bm-[0-9a-z]{4,}\b")


def frontmatter_and_body() -> tuple[dict, str]:
    text = SKILL.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.DOTALL)
    assert match, "SKILL.md must start with YAML frontmatter between --- lines"
    return yaml.safe_load(match.group(1)), match.group(2)


def shown_commands(body: str) -> list[str]:
    """Command lines in fenced blocks and inline code spans, in document order."""
    commands = []
    for block, inline in re.findall(r"```(?:bash|sh)?\n(.*?)```|`([^`\n]+)`", body, re.DOTALL):
        lines = block.splitlines() if block else [inline]
        commands += [line.strip() for line in lines if line.strip().startswith(PROGRAM + " ")]
    return commands


def test_frontmatter_names_and_describes_the_skill() -> None:
    meta, _ = frontmatter_and_body()
    assert meta["name"] == PROGRAM
    assert 40 <= len(meta["description"]) <= 1024


def test_the_stance_is_taught() -> None:
    _, body = frontmatter_and_body()
    for phrase in ("Remember only when asked", "Always give a TTL", "Check status at the end of a task"):
        assert phrase in body
    assert "Forget the old fact before remembering the new one" in body
    assert "--scope session" in body
    remembers = [c for c in shown_commands(body) if shlex.split(c)[1] == "remember"]
    assert remembers and all("--ttl" in c for c in remembers)  # always with a ttl


def test_every_command_shown_runs_against_a_temp_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process (the CLI's `run`, the same code path as the console script) to keep the suite fast;
    tests/engine/test_cli.py covers the real subprocess."""
    _, body = frontmatter_and_body()
    commands = shown_commands(body)
    assert len(commands) >= 15
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("AMNESIA_DB", raising=False)
    monkeypatch.delenv("AMNESIA_CONFIG", raising=False)
    last_id = None
    for command in commands:
        words = shlex.split(command)[1:]
        if "<id>" in words:
            assert last_id, f"{command!r} needs an id but nothing was remembered before it"
            words = [last_id if word == "<id>" else word for word in words]
        code = run(["--db", str(tmp_path / "skill.db"), *words])
        out, err = capsys.readouterr()
        assert code == 0, f"{command!r} failed: {err}"
        if words[0] == "remember":
            last_id = ID_PATTERN.search(out).group()
        if "--verify" in words:
            assert out.startswith("1 forgotten item(s)"), out
