"""Task loading's shortcut around the nesting check (`_nesting_bounded`): a text it lets through cannot nest
deeper than the limit, and a file reads to the same tasks and errors with the shortcut as without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks import load as taskload
from tasks.writeset import dump_tasks

# One task as `generate` writes it (tasks.writeset.dump_tasks: block style), the text the shortcut is for.
TASK = dump_tasks(
    [
        {
            "id": "t/one",
            "group": "harmful",
            "category": "fact-change",
            "description": "A fact changes.",
            "sessions": [
                {
                    "at": "0s",
                    "turns": [
                        {
                            "user": "Remember: the drink is lapsang.",
                            "remember": {
                                "content": "The drink is lapsang.",
                                "ttl": "1d",
                                "key": "drink",
                                "tags": ["drinks"],
                            },
                        }
                    ],
                },
                {
                    "at": "1h",
                    "turns": [{"user": "What is the drink?", "probe": {"expect": ["lapsang"], "stale": []}}],
                },
            ],
        }
    ]
)


def _depth(text: str) -> int:
    """How deep the collections of `text` nest, from the parser's events (what `_check_depth` counts)."""
    depth = deepest = 0
    for event in yaml.parse(text, Loader=taskload._Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return deepest


def _nested(kinds: list[bool], leaf: str) -> Any:
    """One collection per entry of `kinds` (True: a mapping, False: a list), each inside the one before."""
    value: Any = leaf
    for mapping in reversed(kinds):
        value = {"k": value, "z": 1} if mapping else [value, "x"]
    return value


@settings(max_examples=300, deadline=None)
@given(
    kinds=st.lists(st.booleans(), max_size=80),
    flow=st.sampled_from([None, True, False]),
    indent=st.integers(min_value=2, max_value=9),
    compact=st.integers(min_value=0, max_value=40),
    brackets=st.integers(min_value=0, max_value=70),
)
def test_a_text_let_through_nests_no_deeper_than_the_limit(kinds, flow, indent, compact, brackets):
    """Nested lists and mappings in block, flow and mixed styles at any indentation, with a nest of flow
    lists innermost, and compact sequences (`- - - x`) under them: whenever the shortcut skips the event
    pass, the parser's own depth is within MAX_DEPTH (the bracket nests take it to the limit and past)."""
    dumped = yaml.safe_dump(_nested(kinds, "leaf"), default_flow_style=flow, indent=indent)
    dumped = dumped.replace("leaf", "[" * brackets + "]" * brackets)
    for text in (dumped, dumped + "- " * compact + "x\n", "- " * compact + "x\n"):
        try:
            depth = _depth(text)
        except yaml.YAMLError:
            continue  # not YAML (a compact list after a mapping): nothing to compare
        if taskload._nesting_bounded(text):
            assert depth <= taskload.MAX_DEPTH


# Characters that change YAML structure, and some that do not.
EDITS = st.text(alphabet="-?:[]{},&*!#|>'\"\n\r\t  ab1.%\u2028", max_size=6)


def _read(path: Path, shortcut: bool) -> taskload.FileTasks:
    if shortcut:
        return taskload.read_task_file(str(path), "t.yaml")
    with mock.patch.object(taskload, "_nesting_bounded", lambda text: False):
        return taskload.read_task_file(str(path), "t.yaml")


@settings(max_examples=300, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 4), EDITS), max_size=4))
def test_a_file_reads_the_same_with_and_without_the_shortcut(tmp_path_factory, edits):
    """A task file damaged anywhere (inserted indicators, brackets, anchors, breaks; deleted spans) gives
    the same tasks and the same errors, in the same order, with or without the shortcut."""
    text = TASK
    for at, cut, insert in edits:
        at %= len(text) + 1
        text = text[:at] + insert + text[at + cut :]
    path = tmp_path_factory.mktemp("t") / "t.yaml"
    path.write_text(text, encoding="utf-8")
    assert _read(path, shortcut=True) == _read(path, shortcut=False)


def test_the_shortcut_takes_the_generated_sets_and_leaves_hostile_ones():
    """It applies to the block style `generate` writes, never to a text with aliases or deep brackets."""
    assert taskload._nesting_bounded(TASK)
    assert not taskload._nesting_bounded("[" * 64 + "]" * 64)
    assert not taskload._nesting_bounded("a: &x [1]\nb: *x\n")
    assert not taskload._nesting_bounded("a: 1\n---\nb: 2\n")
