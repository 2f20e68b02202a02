"""The hand-written task sets in tasks/: valid, big enough, bilingual, and answerable by construction."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tasks.load import GROUPS, load_tasks, task_set_hash

TASKS = Path(__file__).resolve().parents[2] / "tasks"
CATEGORIES = {
    "helpful": {
        "preference-continuation",
        "project-context",
        "long-task-state",
        "idle-gap-preference",
        "tool-workaround",
        "open-tool-call",
    },
    "harmful": {
        "fact-change",
        "fact-reassert",
        "fact-multi-update",
        "expired-constraint",
        "poisoned-memory",
        "subagent-scratch-leak",
        "tool-workaround-retired",
    },
}


@pytest.fixture(scope="module")
def shipped():
    return load_tasks(TASKS)


def test_every_group_has_enough_tasks_in_both_languages(shipped):
    for group in GROUPS:
        langs = Counter(task.lang for task in shipped if task.group == group)
        assert sum(langs.values()) >= 22, group
        assert langs["zh"] >= 6 and langs["en"] >= 6, (group, langs)


def test_ids_match_their_folder_and_group(shipped):
    for task in shipped:
        folder = Path(task.source_file).parent.name
        assert task.group == folder and task.id.startswith(f"{folder}/"), task.id


def test_helpful_and_harmful_cover_every_category(shipped):
    for group, expected in CATEGORIES.items():
        assert {task.category for task in shipped if task.group == group} == expected
    for task in shipped:
        if task.group == "mixed":
            helpful, harmful = task.category.split("+")
            assert helpful in CATEGORIES["helpful"] and harmful in CATEGORIES["harmful"], task.id


def test_harmful_set_has_the_required_shapes(shipped):
    harmful = [task for task in shipped if task.group == "harmful"]
    writes = [spec for task in harmful for s in task.sessions for turn in s.turns for spec in turn.remember]
    assert any(spec.source == "auto" for spec in writes), "a poisoned memory from an untrusted source"
    assert any(spec.scope == "session" for spec in writes), "a sub-agent scratch memory"
    assert any(s.agent == "sub" for task in harmful for s in task.sessions)
    assert any(probe.abstain for task in harmful for probe in task.probes), "an expired constraint"
    assert any(len(probe.stale) >= 2 for task in harmful for probe in task.probes), "several updates"
    # Fairness: some fact changes carry no key, so only ttl and decay separate old from new.
    assert any(spec.key is None and spec.kind == "fact" and spec.source == "user" for spec in writes)


def test_every_probe_value_was_written_before_the_probe_and_is_not_in_the_question(
    assert_probe_values_written_before_and_not_asked, shipped
):
    for task in shipped:
        assert_probe_values_written_before_and_not_asked(task)


def test_most_fact_writes_have_a_key(shipped):
    facts = [
        spec
        for task in shipped
        for s in task.sessions
        for turn in s.turns
        for spec in turn.remember
        if spec.kind == "fact" and spec.scope != "session"
    ]
    assert sum(spec.key is not None for spec in facts) / len(facts) > 0.75


def test_content_hash_covers_every_file_and_is_stable():
    content_hash, files = task_set_hash(TASKS)
    assert len(files) == len(list(TASKS.rglob("*.yaml")))
    assert all(relpath.split("/")[0] in GROUPS for relpath in files)
    assert task_set_hash(TASKS) == (content_hash, files)


def test_tasks_carry_their_path_relative_to_the_set_not_the_checkout() -> None:
    tasks = load_tasks(TASKS)
    assert all(not Path(task.source_file).is_absolute() for task in tasks)
    assert {task.source_file.split("/")[0] for task in tasks} == {"helpful", "harmful", "mixed"}
