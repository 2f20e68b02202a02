"""Profiles of the `mcp-memory` arm: which tool of an MCP memory server takes a write, a recall and a forget,
with which arguments, and where the memories are in the recall's answer.

A profile is a mapping (the built-in `server-memory` one below, or a user's YAML file):

    command: mcp-server-memory         # the server command when the arm's `command` option is empty
    env: {MEMORY_FILE_PATH: "{workdir}/memory.jsonl"}   # the server's environment ({workdir}: pair folder)
    write:  {tool: create_entities, arguments: {...}}   # one call per memory
    recall: {tool: read_graph, arguments: {}, items: entities, id: name, content: observations}
    forget: {tool: delete_entities, arguments: {entityNames: ["{id}"]}}

In `arguments`, the placeholders `{id}` (the arm's id of the memory), `{content}`, `{kind}` and `{query}`
(the user's current text) are replaced inside every string. `recall.items` is the dotted path of the list of
memories in the tool's JSON answer; `id` and `content` name the fields of one memory (a list of strings is
joined with spaces). A bad profile is a one-line ArmConfigError naming the file and the field."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tasks.errors import ArmConfigError

_PLACEHOLDER = re.compile(r"\{(id|content|kind|query)\}")

# The official reference server (npm `@modelcontextprotocol/server-memory`): a knowledge graph in a JSON-lines
# file. One entity per memory, named by the arm's id; its single observation is the content.
SERVER_MEMORY: dict[str, Any] = {
    "command": "mcp-server-memory",
    "env": {"MEMORY_FILE_PATH": "{workdir}/memory.jsonl"},
    "write": {
        "tool": "create_entities",
        "arguments": {"entities": [{"name": "{id}", "entityType": "{kind}", "observations": ["{content}"]}]},
    },
    "recall": {
        "tool": "read_graph",
        "arguments": {},
        "items": "entities",
        "id": "name",
        "content": "observations",
    },
    "forget": {"tool": "delete_entities", "arguments": {"entityNames": ["{id}"]}},
}


@dataclass(frozen=True)
class ToolTemplate:
    """A tool and its argument template."""

    tool: str
    arguments: dict[str, Any]

    def render(self, values: Mapping[str, str]) -> dict[str, Any]:
        """The arguments with every placeholder replaced by its value."""
        return _fill(self.arguments, values)


@dataclass(frozen=True)
class RecallTemplate(ToolTemplate):
    """The recall tool, and where its answer holds the memories."""

    items: str = ""  # dotted path of the list of memories in the JSON answer ("" = the answer itself)
    id: str = "id"  # the field of a memory holding the arm's id
    content: str = "content"  # the field holding its text

    def memories(self, answer: Any) -> list[tuple[str, str]]:
        """(id, content) of each memory in the answer; ValueError (one line) when it is not shaped so."""
        found: Any = answer
        for part in self.items.split(".") if self.items else ():
            if not isinstance(found, dict) or part not in found:
                raise ValueError(f"{self.tool}: the answer has no {self.items!r} (got {str(answer)[:80]!r})")
            found = found[part]
        if not isinstance(found, list):
            raise ValueError(f"{self.tool}: {self.items or 'the answer'} is not a list")
        pairs = []
        for memory in found:
            if isinstance(memory, dict) and self.id in memory:
                text = memory.get(self.content, "")
                pairs.append(
                    (str(memory[self.id]), " ".join(map(str, text)) if isinstance(text, list) else str(text))
                )
        return pairs


@dataclass(frozen=True)
class Profile:
    """How the arm drives one kind of server."""

    name: str
    command: str  # the default command line ("" = the user must give one)
    env: dict[str, str]
    write: ToolTemplate
    recall: RecallTemplate
    forget: ToolTemplate

    def tools(self) -> tuple[str, ...]:
        """The tools the server must list."""
        return (self.write.tool, self.recall.tool, self.forget.tool)


def load_profile(where: str) -> Profile:
    """The built-in `server-memory` profile, or the YAML profile in the file `where`."""
    if where == "server-memory":
        return parse_profile(SERVER_MEMORY, "server-memory")
    path = Path(where)
    if not path.is_file():
        raise ArmConfigError(
            f"mcp-memory: option profile must be server-memory, amnesia or a YAML file, got {where!r}"
        )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ArmConfigError(f"{path}: not a readable YAML profile ({type(error).__name__})") from None
    return parse_profile(data, str(path))


def parse_profile(data: Any, origin: str) -> Profile:
    """A checked Profile; ArmConfigError naming `origin` and the field otherwise."""
    if not isinstance(data, dict):
        raise ArmConfigError(f"{origin}: a profile is a mapping with write, recall and forget")
    unknown = sorted(set(data) - {"command", "env", "write", "recall", "forget"})
    if unknown:
        raise ArmConfigError(
            f"{origin}: unknown field {unknown[0]!r}; known: command, env, write, recall, forget"
        )
    command = data.get("command", "")
    if not isinstance(command, str):
        raise ArmConfigError(f"{origin}: command must be a string, got {command!r}")
    env = data.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ArmConfigError(f"{origin}: env must map names to strings, got {env!r}")
    write = ToolTemplate(**_tool_fields(data, "write", origin, ()))
    recall = RecallTemplate(**_tool_fields(data, "recall", origin, ("items", "id", "content")))
    forget = ToolTemplate(**_tool_fields(data, "forget", origin, ()))
    name = "server-memory" if origin == "server-memory" else Path(origin).stem
    return Profile(name, command, env, write, recall, forget)


def _tool_fields(data: dict[str, Any], part: str, origin: str, extra: tuple[str, ...]) -> dict[str, Any]:
    section = data.get(part)
    if not isinstance(section, dict):
        raise ArmConfigError(f"{origin}: {part} must be a mapping with tool and arguments, got {section!r}")
    unknown = sorted(set(section) - {"tool", "arguments", *extra})
    if unknown:
        known = ", ".join(("tool", "arguments", *extra))
        raise ArmConfigError(f"{origin}: {part}: unknown field {unknown[0]!r}; known: {known}")
    tool = section.get("tool")
    if not isinstance(tool, str) or not tool:
        raise ArmConfigError(f"{origin}: {part}.tool must be a tool name, got {tool!r}")
    arguments = section.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ArmConfigError(f"{origin}: {part}.arguments must be a mapping, got {arguments!r}")
    fields: dict[str, Any] = {"tool": tool, "arguments": arguments}
    for name in extra:
        if name in section:
            if not isinstance(section[name], str):
                raise ArmConfigError(f"{origin}: {part}.{name} must be a string, got {section[name]!r}")
            fields[name] = section[name]
    return fields


def _fill(template: Any, values: Mapping[str, str]) -> Any:
    if isinstance(template, str):  # one pass: a value holding a placeholder's text is not replaced again
        return _PLACEHOLDER.sub(lambda match: values.get(match.group(1), ""), template)
    if isinstance(template, list):
        return [_fill(item, values) for item in template]
    if isinstance(template, dict):
        return {key: _fill(item, values) for key, item in template.items()}
    return template
