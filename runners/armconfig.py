"""Arm options from a YAML file and `--set arm.option=value` overrides, so a parameter sweep needs no code.

The file maps a run-local arm name to its base arm (a registered arm or variant; default: the name itself) and
options:

    amnesia-7d:
      base: amnesia
      options: {default_ttl: 7d, curve: linear}
    amnesia:
      options: {k: 4}

`--set amnesia-7d.budget=500` overrides one option (the value is read as YAML: `0.3`, `false`, `7d`).
Problems raise ArmConfigError with one line naming the file, line, field and value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from arms.base import Arm
from arms.registry import (
    available,
    create_arm,
    installed_plugins,
    is_reference,
    reference_file,
    reference_name,
    resolve,
)
from tasks.errors import ArmConfigError, UnknownArmError
from tasks.spec import Task

_ENTRY_FIELDS = {"base", "options"}
# Options that apply only to writes that name no ttl of their own (the amnesia arms; `ttl` is an alias).
_DEFAULT_TTL_OPTIONS = ("default_ttl", "ttl")


@dataclass(frozen=True)
class ArmSpec:
    """A run-local arm: its name in logs, the registered arm it builds on, and explicit options."""

    name: str
    base: str
    options: dict[str, Any] = field(default_factory=dict)

    def build(self) -> Arm:
        arm = create_arm(self.base, self.options)
        arm.name = self.name
        return arm


def _where(path: Path, node: yaml.Node) -> str:
    return f"{path}:{node.start_mark.line + 1}"


def load_arm_config(path: str | Path) -> dict[str, ArmSpec]:
    """The arm specs a config file defines, validated against the registry."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError) as exc:
        raise ArmConfigError(f"{file}: cannot read arm config: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise ArmConfigError(f"{file}{line}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise ArmConfigError(f"{_where(file, root)}: arm config: expected a mapping of arm name -> entry")
    specs: dict[str, ArmSpec] = {}
    for key_node, value_node in root.value:
        name = key_node.value
        if not isinstance(key_node, yaml.ScalarNode) or not name:
            raise ArmConfigError(f"{_where(file, key_node)}: arm name: expected a non-empty string")
        if name in specs:
            raise ArmConfigError(f"{_where(file, key_node)}: {name}: defined twice")
        entry = yaml.safe_load(yaml.serialize(value_node)) if value_node is not None else None
        entry = {} if entry is None else entry
        if not isinstance(entry, dict):
            raise ArmConfigError(f"{_where(file, value_node)}: {name}: expected a mapping with base/options")
        unknown = sorted(set(map(str, entry)) - _ENTRY_FIELDS)
        if unknown:
            raise ArmConfigError(
                f"{_where(file, value_node)}: {name}.{unknown[0]}: unknown field (use base, options)"
            )
        base = entry.get("base", name)
        options = entry.get("options") or {}
        if not isinstance(base, str):
            raise ArmConfigError(
                f"{_where(file, value_node)}: {name}.base: expected an arm name, got {base!r}"
            )
        if not isinstance(options, dict):
            raise ArmConfigError(
                f"{_where(file, value_node)}: {name}.options: expected a mapping, got {options!r}"
            )
        try:
            resolve(base)
        except UnknownArmError as exc:
            raise ArmConfigError(f"{_where(file, value_node)}: {name}.base: {exc}") from None
        specs[name] = ArmSpec(name, base, {str(k): v for k, v in options.items()})
    return specs


def parse_overrides(assignments: list[str]) -> dict[str, dict[str, Any]]:
    """`["amnesia.k=4", "amnesia.curve=linear"]` -> {"amnesia": {"k": 4, "curve": "linear"}}."""
    overrides: dict[str, dict[str, Any]] = {}
    for assignment in assignments:
        target, sep, raw = assignment.partition("=")
        arm, dot, option = target.strip().rpartition(".")
        if not sep or not dot or not arm or not option:
            raise ArmConfigError(f"--set: expected arm.option=value, got {assignment!r}")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        overrides.setdefault(arm, {})[option] = value
    return overrides


def comparable_arms() -> list[str]:
    """`--arms all`: every arm of this repository that runs with any model, on any machine (arms whose model
    does the writing through tools need a model with function calling, and arms that drive a program of their
    own (`EXTERNAL`) need that program, so both are left out; so are installed plugins: `all` is the same
    panel on every machine)."""
    return [
        name
        for name in available()
        if name not in installed_plugins()
        and not getattr(arm := create_arm(name), "MODEL_MANAGED", False)
        and not getattr(arm, "EXTERNAL", False)
    ]


def ineffective_options(specs: list[ArmSpec], tasks: list[Task]) -> list[str]:
    """One line per option given explicitly (`--set`, `--arm-config`) that cannot change any outcome on these
    tasks: a default ttl when every write in them carries its own ttl or a pin. Arms whose model writes
    through tools (agent-managed) are left out: the model may write without a ttl."""
    writes = [spec for task in tasks for s in task.sessions for turn in s.turns for spec in turn.remember]
    if any(write.ttl is None and not write.pin for write in writes):
        return []
    lines = []
    for spec in specs:
        given = [name for name in _DEFAULT_TTL_OPTIONS if name in spec.options]
        if given and not getattr(spec.build(), "MODEL_MANAGED", False):
            lines += [
                f"{spec.name}.{name}={spec.options[name]} changes no outcome here: every one of the "
                f"{len(writes)} writes in the selected tasks has its own ttl or a pin, and {name} applies "
                "only to writes without one"
                for name in given
            ]
    return lines


def absolute_reference(reference: str) -> str:
    """A `file.py:Class` reference with its file's absolute path (worker processes and resumed runs may start
    elsewhere); a `package.module:Class` one as it is."""
    file = reference_file(reference)
    return reference if file is None else f"{file.resolve()}:{reference.rpartition(':')[2]}"


def resolve_arm_specs(
    names: list[str], config_path: str | Path | None = None, assignments: list[str] | None = None
) -> list[ArmSpec]:
    """The specs for the requested arms, with config-file entries and overrides applied; each arm is built
    once so that bad options fail here, before anything runs."""
    if not names:
        raise ArmConfigError("--arms: expected at least one arm name")
    if names == ["all"]:
        names = comparable_arms()
    if len(set(names)) != len(names):
        raise ArmConfigError(f"--arms: an arm is listed twice in {','.join(names)!r}")
    configured = load_arm_config(config_path) if config_path else {}
    overrides = parse_overrides(assignments or [])
    # an arm given by reference (file.py:Class, package.module:Class) runs under its class's name
    run_names = {}
    for name in names:
        try:
            run_names[name] = reference_name(name) if is_reference(name) else name
        except UnknownArmError as exc:
            raise ArmConfigError(f"--arms: {exc}") from None
    if len(set(run_names.values())) != len(names):
        raise ArmConfigError(f"--arms: two arms would run under one name in {','.join(names)!r}")
    stray = sorted(set(overrides) - set(names) - set(run_names.values()))
    if stray:
        raise ArmConfigError(f"--set: arm {stray[0]!r} is not in --arms ({','.join(names)})")
    specs = []
    for name in names:
        spec = configured.get(name)
        if spec is None:
            if not is_reference(name) and name not in available():
                known = ", ".join([*available(), *sorted(configured)])
                raise ArmConfigError(f"--arms: unknown arm {name!r}; known: {known}")
            spec = ArmSpec(run_names[name], absolute_reference(name) if is_reference(name) else name, {})
        given = {**overrides.get(name, {}), **overrides.get(run_names[name], {})}
        spec = ArmSpec(spec.name, spec.base, {**spec.options, **given})
        try:
            spec.build()
        except (TypeError, ValueError) as exc:
            problem = str(exc).splitlines()[0]
            # the arms' own errors start with the arm's name already: never "arm x: x: ..."
            where = "" if problem.startswith(f"{name}: ") else f"arm {name}: "
            raise ArmConfigError(f"{where}{problem}") from None
        specs.append(spec)
    return specs
