"""`amnesia-bench list arms | tasks | models`: what a run can be made of, without reading the source.

Arms come from the registry (`arms.registry`: ARMS + VARIANTS) and each arm class's `SEED` and
`option_defaults()`; models from each provider module's `catalogue()` (`runners.models.PROVIDERS`); tasks from
a task folder, validated as `run` would."""

from __future__ import annotations

import importlib
import textwrap
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tasks.errors import TaskSetError

if TYPE_CHECKING:  # the registries and the task loader are imported by the functions that list them, so
    # that the other commands (`report` above all) start without them
    from tasks.spec import Task

_WIDTH = 108


def _shown(value: Any) -> str:
    """A value as `--set` would take it (YAML scalars)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _settings(options: dict[str, Any]) -> str:
    return ", ".join(f"{name}={_shown(value)}" for name, value in options.items())


def _wrapped(text: str, indent: int) -> str:
    return textwrap.fill(text, _WIDTH, initial_indent=" " * indent, subsequent_indent=" " * indent)


def arm_lines() -> list[str]:
    """Each arm with a one-line description, the design it reproduces and every option's default; each
    variant with a one-line description, its base arm and what it sets."""
    from arms.registry import DESCRIPTIONS, VARIANTS, arm_class, available, installed_plugins

    width = max(len(name) for name in available()) + 2
    lines = []
    plugins = installed_plugins()
    for name in available():
        if name in plugins:
            target, distribution = plugins[name]
            summary = (arm_class(name).__doc__ or "").strip().splitlines() or ["(no description)"]
            lines.append(f"{name:<{width}}{summary[0]}")
            lines.append(_wrapped(f"plugin: {target}, from the package {distribution}", width))
        else:
            lines.append(f"{name:<{width}}{DESCRIPTIONS[name]}")
        if name in VARIANTS:
            base, options = VARIANTS[name]
            lines.append(_wrapped(f"variant of {base}: {_settings(options)}", width))
            continue
        arm = arm_class(name)
        # "design doc 000" (the project's design documents), not "seed": `run --seed` is the RNG seed
        design = f"design doc {arm.SEED}" if arm.SEED.isdigit() else arm.SEED or "baseline"
        defaults = arm.option_defaults()
        lines.append(_wrapped(f"{design}; " + ("options (defaults):" if defaults else "no options"), width))
        if defaults:
            lines.append(_wrapped(_settings(defaults), width))
    return lines


def task_lines(path: Path) -> list[str]:
    """The folders of a task set with their files and tasks per group, then tasks and probes per group and
    category (and per probe mechanism, for probes that name one)."""
    from tasks.load import GROUPS, read_task_set

    tasks, errors = read_task_set(path)
    if errors:
        raise TaskSetError(errors)
    folders: dict[str, list[Task]] = {}
    for task in tasks:
        folders.setdefault(str(Path(task.source_file).parent), []).append(task)
    total = len({task.source_file for task in tasks})
    lines = [f"{path}: {len(tasks)} tasks in {total} files ({_per_group(tasks)})"]
    width = max(len(name) for name in folders) + 3
    for name, members in sorted(folders.items()):
        files = len({task.source_file for task in members})
        lines.append(
            f"  {name + '/':<{width}}{files:>6} files {len(members):>6} tasks ({_per_group(members)})"
        )
    categories = Counter((task.group, task.category) for task in tasks)
    probes: Counter[tuple[str, str]] = Counter()
    for task in tasks:
        probes[(task.group, task.category)] += len(task.probes)
    width = max(len(category) for _, category in categories) + 2
    lines.append(f"  {'group':<9}{'category':<{width}}{'tasks':>6}{'probes':>7}")
    for group, category in sorted(categories, key=lambda key: (GROUPS.index(key[0]), key[1])):
        key = (group, category)
        lines.append(f"  {group:<9}{category:<{width}}{categories[key]:>6}{probes[key]:>7}")
    # Probes may name the mechanism they test (optional, "" when absent); counted only where one is given.
    mechanisms = Counter(
        mechanism for task in tasks for probe in task.probes if (mechanism := probe.mechanism)
    )
    if mechanisms:
        lines.append(f"  {'probe mechanism':<{width + 9}}{'':>6}{'probes':>7}")
        lines += [f"  {name:<{width + 9}}{'':>6}{count:>7}" for name, count in sorted(mechanisms.items())]
    return lines


def _per_group(tasks: list[Task]) -> str:
    from tasks.load import GROUPS

    counts = Counter(task.group for task in tasks)
    return ", ".join(f"{group} {counts[group]}" for group in GROUPS if counts[group])


def model_lines() -> list[str]:
    """Every provider (`provider/model` or `provider:model`) and the models or strategies it offers."""
    from runners.models import PROVIDERS

    rows = []
    for provider in PROVIDERS.names():
        module = importlib.import_module(PROVIDERS.target(provider).partition(":")[0])
        rows += module.catalogue()
    width = max(len(spec) for spec, _ in rows) + 2
    return [f"{spec:<{width}}{about}" for spec, about in rows]


def register(app: typer.Typer) -> None:
    list_app = typer.Typer(help="What a run can be made of: arms, tasks, models.", no_args_is_help=True)
    app.add_typer(list_app, name="list")

    @list_app.command("arms")
    def arms_command() -> None:
        """Every arm and variant in one line, then its design doc (or paper) and options' defaults."""
        for line in arm_lines():
            typer.echo(line)

    @list_app.command("tasks")
    def tasks_command(
        tasks: Annotated[Path, typer.Option(help="Task file or folder.")] = Path("tasks"),
    ) -> None:
        """The task files with their groups, and tasks and probes per group and category."""
        for line in task_lines(tasks):
            typer.echo(line)

    @list_app.command("models")
    def models_command() -> None:
        """Every model provider and the models or strategies it offers."""
        for line in model_lines():
            typer.echo(line)
