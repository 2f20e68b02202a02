"""Task validation: every error found, with the exact line and field; hostile YAML refused in one line."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks import load as taskload
from tasks.errors import TaskSetError
from tasks.load import load_tasks, validate_path

VALID = """\
id: t/one
group: harmful
category: fact-change
description: A fact changes.
sessions:
  - at: 0s
    turns:
      - user: "Remember: the drink is lapsang."
        remember: {content: "The drink is lapsang.", ttl: 1d, key: drink}
  - at: 1h
    turns:
      - user: "What is the drink?"
        probe: {expect: [lapsang]}
"""


def _write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _errors(path: Path) -> list[tuple[int, str, str]]:
    return [(error.line, error.field, error.problem) for error in validate_path(path)]


def test_a_valid_task_loads_with_seconds_and_defaults(tmp_path):
    (task,) = load_tasks(_write(tmp_path, VALID))
    assert task.id == "t/one" and task.lang == "en" and task.source_line == 1
    assert [session.at for session in task.sessions] == [0.0, 3600.0]
    spec = task.sessions[0].turns[0].remember[0]
    assert (spec.ttl, spec.kind, spec.source, spec.scope, spec.key) == (
        86400.0,
        "fact",
        "user",
        None,
        "drink",
    )
    assert task.probes[0].expect == ("lapsang",)
    assert (task.probes[0].mechanism, task.probes[0].not_asserting) == ("", ())  # optional, unlabelled


def test_a_team_agent_session_loads_with_its_team(tmp_path):
    text = VALID.replace("at: 1h\n", "at: 1h\n    agent: team\n    team: red\n    ends_team: true\n")
    (task,) = load_tasks(_write(tmp_path, text))
    first, second = task.sessions
    assert (first.agent, first.team, first.ends_team) == ("main", None, False)
    assert (second.agent, second.team, second.ends_team) == ("team", "red", True)


def test_probe_mechanism_and_not_asserting_load(tmp_path):
    text = VALID.replace(
        "{expect: [lapsang]}", '{expect: [lapsang], mechanism: changed-fact, not_asserting: ["oolong was"]}'
    )
    (task,) = load_tasks(_write(tmp_path, text))
    assert (task.probes[0].mechanism, task.probes[0].not_asserting) == ("changed-fact", ("oolong was",))


BROKEN = {
    "bad group and unknown field": (
        VALID.replace("group: harmful", "group: harmfull").replace("category:", "colour: red\ncategory:"),
        [
            (2, "group", "expected one of helpful|harmful|mixed, got 'harmfull'"),
            (3, "colour", "unknown field"),
        ],
    ),
    "bad ttl": (VALID.replace("ttl: 1d", "ttl: 1 day"), [(9, "sessions[0].turns[0].remember.ttl", "1 day")]),
    "decreasing at": (VALID.replace("at: 1h", "at: -1h"), [(10, "sessions[1].at", "")]),
    "earlier session": (
        VALID.replace("at: 0s", "at: 2h"),
        [(10, "sessions[1].at", "earlier than the previous")],
    ),
    "bad agent": (
        VALID.replace("at: 1h\n", "at: 1h\n    agent: boss\n"),
        [(11, "sessions[1].agent", "main|sub|team")],
    ),
    "team agent without a team": (
        VALID.replace("at: 1h\n", "at: 1h\n    agent: team\n"),
        [(11, "sessions[1].team", "required with agent: team")],
    ),
    "team on a main session": (
        VALID.replace("at: 1h\n", "at: 1h\n    team: red\n    ends_team: true\n"),
        [
            (11, "sessions[1].team", "only on a session with agent: team (agent is main)"),
            (12, "sessions[1].ends_team", "only on a session with agent: team"),
        ],
    ),
    "team agent with a bad team and ends_team": (
        VALID.replace("at: 1h\n", "at: 1h\n    agent: team\n    team: ''\n    ends_team: soon\n"),
        [(12, "sessions[1].team", "must not be empty"), (13, "sessions[1].ends_team", "true or false")],
    ),
    "bad source and kind": (
        VALID.replace("key: drink}", "key: drink, source: web, kind: rumour}"),
        [
            (9, "sessions[0].turns[0].remember.kind", "fact|preference|episode|task-context"),
            (9, "sessions[0].turns[0].remember.source", "user|tool|auto"),
        ],
    ),
    "pinned with a ttl": (
        VALID.replace("ttl: 1d, key: drink}", "ttl: 1d, key: drink, pin: true}"),
        [(9, "sessions[0].turns[0].remember.ttl", "a pinned memory takes no ttl")],
    ),
    "missing content in a list": (
        VALID.replace(
            'remember: {content: "The drink is lapsang.", ttl: 1d, key: drink}', "remember: [{ttl: 1d}]"
        ),
        [(9, "sessions[0].turns[0].remember[0].content", "missing required field")],
    ),
    "probe without expect": (
        VALID.replace("{expect: [lapsang]}", "{stale: [lapsang]}"),
        [(13, "", "needs expect")],
    ),
    "probe contradiction": (
        VALID.replace("{expect: [lapsang]}", "{expect: [lapsang], abstain: true}"),
        [(13, "sessions[1].turns[0].probe", "contradicts")],
    ),
    "value in two lists": (
        VALID.replace("{expect: [lapsang]}", "{expect: [lapsang], stale: [Lapsang]}"),
        [(13, "sessions[1].turns[0].probe.stale", "also listed in expect")],
    ),
    "expect not a list": (
        VALID.replace("{expect: [lapsang]}", "{expect: lapsang}"),
        [(13, "", "list of strings")],
    ),
    "abstain not bool": (
        VALID.replace("{expect: [lapsang]}", "{abstain: maybe}"),
        [(13, "", "true or false")],
    ),
    "unknown mechanism": (
        VALID.replace("{expect: [lapsang]}", "{expect: [lapsang], mechanism: vibes}"),
        [(13, "sessions[1].turns[0].probe.mechanism", "still-valid|changed-fact|lapsed-constraint")],
    ),
    "not_asserting not a list": (
        VALID.replace("{expect: [lapsang]}", "{expect: [lapsang], not_asserting: lapsang was}"),
        [(13, "sessions[1].turns[0].probe.not_asserting", "list of strings")],
    ),
    "empty forget": (
        VALID.replace("        probe:", "        forget: {}\n        probe:"),
        [(13, "", "forget")],
    ),
    "unquoted number": (
        VALID.replace("category: fact-change", "category: 42"),
        [(3, "category", "got int 42")],
    ),
    "missing sessions": (VALID.split("sessions:")[0], [(1, "sessions", "missing required field")]),
    "no probe": (VALID.replace("        probe: {expect: [lapsang]}\n", ""), [(1, "sessions", "no probe")]),
    "bad id": (VALID.replace("id: t/one", "id: ../escape"), [(1, "id", "no '..'")]),
    "bad lang": (VALID.replace("group:", "lang: fr\ngroup:"), [(2, "lang", "en|zh")]),
    "duplicate field": (
        VALID.replace("group: harmful", "group: harmful\ngroup: mixed"),
        [(3, "group", "duplicate")],
    ),
    "yaml syntax": ("id: [unclosed\ngroup: x\n", [(2, "yaml", "did not find expected ',' or ']'")]),
    "python tag": (
        VALID.replace("category: fact-change", "category: !!python/name:os.system"),
        [(3, "", "")],
    ),
    "empty file": ("", [(1, "file", "empty file")]),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_snippets_report_every_error_with_its_line(tmp_path, name):
    text, expected = BROKEN[name]
    found = _errors(_write(tmp_path, text))
    assert len(found) == len(expected), found
    for (line, field, problem), (want_line, want_field, want_problem) in zip(found, expected, strict=True):
        assert line == want_line, found
        assert field.endswith(want_field) and want_problem in problem, found


def test_all_errors_of_a_list_file_are_reported_with_their_task_index(tmp_path):
    one = textwrap.indent(VALID, "  ").replace("  id:", "- id:", 1)
    two = one.replace("t/one", "t/two").replace("ttl: 1d", "ttl: soon").replace("group: harmful", "group: x")
    path = _write(tmp_path, one + two)
    found = _errors(path)
    assert [(line, field) for line, field, _ in found] == [
        (15, "[1].group"),
        (22, "[1].sessions[0].turns[0].remember.ttl"),
    ]
    with pytest.raises(TaskSetError) as raised:
        load_tasks(path)
    assert len(raised.value.errors) == 2 and "(and 1 more)" in str(raised.value)


def test_duplicate_ids_across_files_name_the_first_definition(tmp_path):
    _write(tmp_path, VALID, "a.yaml")
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub", VALID, "b.yml")
    (error,) = validate_path(tmp_path)
    assert error.file.endswith("b.yml") and error.field == "id" and "a.yaml:1" in error.problem
    assert str(error) == f"{error.file}:1: id: {error.problem}"


def test_lang_is_detected_from_cjk_text(tmp_path):
    text = VALID.replace("What is the drink?", "验证饮品是什么？")
    assert load_tasks(_write(tmp_path, text))[0].lang == "zh"


def test_missing_path_and_empty_folder_are_errors(tmp_path):
    assert _errors(tmp_path / "nope") == [(0, "path", "no such file or folder")]
    assert _errors(tmp_path)[0][2].startswith("no *.yaml")


def test_invalid_utf8_is_one_error_with_its_line(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_bytes(VALID.encode() + b"# caf\xe9\n")
    assert _errors(path) == [(14, "file", f"invalid UTF-8 at byte {len(VALID.encode()) + 5}")]


def test_oversize_file_is_refused_without_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(taskload, "MAX_FILE_BYTES", 100)
    (error,) = _errors(_write(tmp_path, VALID))
    assert error[1] == "file" and "exceeds the 100-byte limit" in error[2]


def test_billion_laughs_is_refused(tmp_path):
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    bomb = "\n".join(lines) + "\nid: *a9\n"
    (error,) = _errors(_write(tmp_path, bomb))
    assert error[1] == "yaml" and "alias bomb" in error[2]


def test_recursive_alias_and_deep_nesting_are_refused(tmp_path):
    assert _errors(_write(tmp_path, "id: &a [*a]\n", "r.yaml"))[0][1:] == ("yaml", "recursive alias")
    deep = "[" * 100_000 + "]" * 100_000
    (error,) = _errors(_write(tmp_path, deep, "d.yaml"))
    assert error == (1, "yaml", "nesting deeper than 64 levels")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=6),
    st.sampled_from(["s", "m", "h", "d"]),
)
def test_session_offsets_are_accepted_iff_non_decreasing(tmp_path_factory, offsets, unit):
    sessions = "".join(
        f"  - at: {offset}{unit}\n    turns:\n      - user: hi\n        probe: {{abstain: true}}\n"
        for offset in offsets
    )
    text = "id: t\ngroup: mixed\ncategory: c\ndescription: d\nsessions:\n" + sessions
    errors = validate_path(_write(tmp_path_factory.mktemp("h"), text))
    assert (not errors) == (offsets == sorted(offsets))
    assert all(error.field.endswith(".at") for error in errors)


def test_a_field_name_with_line_breaks_prints_as_one_escaped_line(tmp_path):
    path = _write(tmp_path, VALID + '"colour\\nof the\\u2028sky\\r": blue\n')
    (error,) = validate_path(path)
    assert error.field == "colour\nof the\u2028sky\r"  # the data keeps the real name...
    assert str(error) == f"{path}:14: colour\\nof the\\u2028sky\\r: " + error.problem  # ...escaped here
    assert str(error).splitlines() == [str(error)]


def test_files_read_by_worker_processes_give_the_same_tasks_and_errors(tmp_path):
    """read_task_set's `map_files` may be a process pool's map (a run's workers read the files): the tasks,
    and every error in the same order, duplicate ids within and across files included."""
    as_list = VALID.replace("id: t/one", "- id: t/one").replace("\n  ", "\n    ").replace("\ng", "\n  g")
    as_list = as_list.replace("\nc", "\n  c").replace("\nd", "\n  d").replace("\ns", "\n  s")
    bad = as_list.replace("group: harmful", "group: nope")
    _write(tmp_path, as_list + as_list + bad + as_list.replace("t/one", "t/two"), "a.yaml")
    _write(tmp_path, as_list.replace("ttl: 1d", "ttl: soon") + as_list, "b.yaml")
    serial = taskload.read_task_set(tmp_path)
    assert [task.id for task in serial[0]] == ["t/one", "t/two"]
    assert [(error.file[-6:], error.line, error.field) for error in serial[1]] == [
        ("a.yaml", 14, "id"),
        ("a.yaml", 28, "[2].group"),
        ("b.yaml", 9, "[0].sessions[0].turns[0].remember.ttl"),
        ("b.yaml", 14, "id"),
    ]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        assert taskload.read_task_set(tmp_path, pool.map) == serial
