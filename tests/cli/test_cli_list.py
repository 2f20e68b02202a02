"""`amnesia-bench list arms|tasks|models`: complete (every registered name), and what it prints can be used
as is (each listed default is accepted by `--set`, each listed scripted spec resolves)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from amnesia_bench.cli_list import _shown
from arms.registry import ARMS, DESCRIPTIONS, VARIANTS, available
from runners.armconfig import resolve_arm_specs
from runners.models import PROVIDERS, resolve_model


def _list(*args: str) -> list[str]:
    result = CliRunner().invoke(app, ["list", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def _entries(lines: list[str]) -> dict[str, list[str]]:
    """name -> its lines: the unindented one (name and description), then its indented ones."""
    entries: dict[str, list[str]] = {}
    for line in lines:
        if not line.startswith(" "):
            entries[line.split()[0]] = [line]
        else:
            entries[list(entries)[-1]].append(line.strip())
    return entries


def test_every_arm_and_variant_is_listed_with_a_description_and_its_design_or_base() -> None:
    lines = _list("arms")
    entries = _entries(lines)
    assert set(entries) == set(available())
    for name, (first, *_) in entries.items():  # one line each: the description fits beside the name
        assert first.split(maxsplit=1)[1] == DESCRIPTIONS[name]
    # the design documents are "design doc NNN", never "seed NNN" beside run's RNG --seed
    assert entries["amnesia"][1] == "design doc 000; options (defaults):"
    assert entries["claims"][1] == "design doc 004; options (defaults):"
    assert entries["memorybank"][1] == "MemoryBank (Zhong et al. 2023); options (defaults):"
    assert not any("seed 0" in line for line in lines)
    assert entries["no-memory"][1:] == ["baseline; no options"]
    assert entries["full-memory"][1:] == ["variant of amnesia: auto_expire=false"]
    assert "default_ttl=2592000.0" in " ".join(lines) and "janitor_idle=90d" in " ".join(lines)
    assert max(len(line) for line in lines) <= 108


@pytest.mark.parametrize("arm", sorted(ARMS.names()))
def test_each_listed_default_is_accepted_by_set_and_changes_nothing(arm: str) -> None:
    defaults = ARMS.load(arm).option_defaults()
    assignments = [f"{arm}.{name}={_shown(value)}" for name, value in defaults.items()]
    (spec,) = resolve_arm_specs([arm], None, assignments)
    assert _resolved(spec.build().describe()) == _resolved(resolve_arm_specs([arm])[0].build().describe())


def _resolved(described: dict) -> dict:
    """The resolved configuration (the amnesia arms also echo the options they were given explicitly)."""
    return {
        key: value for key, value in described.items() if not (key == "options" and "config" in described)
    }


def test_variants_are_listed_with_exactly_the_options_they_set() -> None:
    entries = _entries(_list("arms"))
    for name, (base, options) in VARIANTS.items():
        shown = " ".join(entries[name][1:])
        assert shown.startswith(f"variant of {base}: ")
        for option, value in options.items():
            assert f"{option}={_shown(value)}" in shown


def test_models_lists_every_provider_and_each_scripted_spec_resolves() -> None:
    lines = _list("models")
    assert {line.split("/")[0] for line in lines} == set(PROVIDERS.names())
    scripted = [line.split()[0] for line in lines if line.startswith("scripted/")]
    plain = ["scripted/uniform", "scripted/first", "scripted/last", "scripted/newest", "scripted/temporal"]
    with_tools = ["scripted/tools", "scripted/tools-first", "scripted/tools-last", "scripted/tools-newest",
                  "scripted/tools-temporal"]  # fmt: skip
    assert scripted == plain + with_tools
    for spec in scripted:
        described = resolve_model(spec).describe()
        strategy = spec.split("/")[1].removeprefix("tools").removeprefix("-") or "uniform"
        assert described["strategy"] == strategy
        assert described.get("calls_tools", False) is (spec in with_tools)


def test_tasks_counts_files_groups_categories_and_probes(
    drink_task, preference_task, subagent_task, write_tasks, tmp_path: Path
) -> None:
    write_tasks(tmp_path / "set" / "a", [drink_task, subagent_task])
    write_tasks(tmp_path / "set" / "b", [preference_task])
    lines = _list("tasks", "--tasks", str(tmp_path / "set"))
    assert lines[0] == f"{tmp_path / 'set'}: 3 tasks in 2 files (helpful 1, harmful 2)"
    assert lines[1].split() == ["a/", "1", "files", "2", "tasks", "(harmful", "2)"]
    rows = [line.split() for line in lines[4:]]
    assert rows == [
        ["helpful", "preference-continuation", "1", "1"],
        ["harmful", "fact-change", "1", "1"],
        ["harmful", "subagent-leak", "1", "2"],
    ]


def test_an_invalid_task_set_is_refused_in_one_line_per_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["list", "tasks", "--tasks", str(bad)])
    assert result.exit_code == 2 and result.output.startswith(f"error: {bad}:1: group: missing")


@pytest.mark.parametrize(
    "command", ["run", "report", "check", "view", "list", "cache", "validate", "generate"]
)
def test_every_command_help_renders(command):
    """Help texts go through rich markup: a `[/x]` in one of them crashed `run --help`."""
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
