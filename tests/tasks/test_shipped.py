"""The hand-written task sets in tasks/: valid, big enough, bilingual, and answerable by construction."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from amnesia.config import Config
from tasks.fairness import TimeRule, exact_gaps, oracle_problem, value_fates
from tasks.load import GROUPS, load_tasks, task_set_hash
from tasks.spec import MECHANISMS

TASKS = Path(__file__).resolve().parents[2] / "tasks"
CATEGORIES = {
    "helpful": {
        "preference-continuation",
        "project-context",
        "long-task-state",
        "idle-gap-preference",
        "tool-workaround",
        "open-tool-call",
        # tasks that can go against forgetting (issue 11): the writer's ttl is wrong or missing
        "short-ttl-lasting-fact",
        "missing-ttl-lasting-fact",
        "old-memory-only-source",
        # the new mechanisms where memory is needed at all (issue 31): no memory cannot answer
        "implicit-change-recall",
        "false-premise-recall",
        "cascade-recall",
        # a context compaction cut the turn that said the value (issue 32)
        "compaction-loss",
    },
    "harmful": {
        "fact-change",
        "fact-reassert",
        "fact-multi-update",
        "expired-constraint",
        "poisoned-memory",
        "subagent-scratch-leak",
        "tool-workaround-retired",
        # the old value is still inside its ttl at the probe: forgetting by ttl cannot help
        "cancelled-plan-long-ttl",
        "early-change-unkeyed",
        "early-change-keyed",
        # issue 31: a later turn invalidates a memory without saying so; a question presupposes the stale
        # value; a change invalidates a dependent fact stored separately; a deletion must reach copies
        "implicit-change",
        "false-premise",
        "cascade",
        "deletion-derived",
        # a context compaction's summary or memory keeps a value a later turn replaced (issue 32)
        "compaction-stale",
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


# Halves that occur only inside mixed tasks: the team agents of seed §6.10, where a teammate's note is needed
# by its team (helpful) and must not reach anyone past it (harmful) in one history.
MIXED_ONLY = {"helpful": {"team-handoff"}, "harmful": {"team-scope-leak"}}


def test_helpful_and_harmful_cover_every_category(shipped):
    for group, expected in CATEGORIES.items():
        assert {task.category for task in shipped if task.group == group} == expected
    mixed_halves = set()
    for task in shipped:
        if task.group == "mixed":
            helpful, harmful = task.category.split("+")
            assert helpful in CATEGORIES["helpful"] | MIXED_ONLY["helpful"], task.id
            assert harmful in CATEGORIES["harmful"] | MIXED_ONLY["harmful"], task.id
            mixed_halves |= {helpful, harmful}
    assert MIXED_ONLY["helpful"] | MIXED_ONLY["harmful"] <= mixed_halves


def test_harmful_set_has_the_required_shapes(shipped):
    harmful = [task for task in shipped if task.group == "harmful"]
    writes = [spec for task in harmful for s in task.sessions for turn in s.turns for spec in turn.remember]
    assert any(spec.source == "auto" for spec in writes), "a poisoned memory from an untrusted source"
    # A sub-agent's notes saved to the shared workspace: every arm keeps them until their ttl, so the probes
    # measure something (a session-scoped scratch is disposed by every arm alike; the mixed set keeps a few
    # of those as controls).
    sub_writes = [
        spec
        for task in harmful
        for s in task.sessions
        if s.agent == "sub"
        for turn in s.turns
        for spec in turn.remember
    ]
    assert sub_writes and all(spec.scope == "workspace" for spec in sub_writes)
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
    # implicit-change tasks are unkeyed by definition (nothing says the later note replaces the earlier one)
    facts = [
        spec
        for task in shipped
        if "implicit-change" not in task.category
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


def test_every_probe_names_a_mechanism_and_every_mechanism_is_tested(shipped):
    used = {probe.mechanism for task in shipped for probe in task.probes}
    assert "" not in used
    assert used == set(MECHANISMS)


@pytest.mark.parametrize(
    "config",
    [Config(), Config(default_curve="flat", renew_on_inject="none"), Config(default_curve="flat")],
    ids=["amnesia", "amnesia-hard-ttl", "amnesia-sliding-ttl"],
)
def test_ttls_are_not_an_oracle(shipped, config):
    """Under each shipped forgetting arm's own cut-off, some expected values are hidden before their probe
    (forgetting loses something still true) and many stale values are still shown (forgetting by time cannot
    drop them); still-valid and changed-fact probes sit on both sides; no probe sits on a cut-off."""
    fates = value_fates(shipped, TimeRule(config))
    assert oracle_problem(fates) is None
    assert exact_gaps(fates) == []
    expected = [f for f in fates if f.kind == "expect"]
    stale = [f for f in fates if f.kind == "stale"]
    assert sum(f.wrong_side for f in expected) >= 0.05 * len(expected)
    assert sum(f.wrong_side for f in stale) >= 0.5 * len(stale)
    for mechanism in ("still-valid", "changed-fact"):
        on_both_sides = {f.kept for f in fates if f.mechanism == mechanism and f.kind != "poison"}
        assert on_both_sides == {True, False}, mechanism


def test_reassertion_texts_do_not_name_the_old_value(shipped):
    """The current fact's own text must not mention the value it replaced ("Falcon (Heron vetoed)"): an arm
    that shows only the current line would otherwise be scored stale."""
    for task in shipped:
        if "fact-reassert" not in task.category:
            continue
        (probe,) = [p for p in task.probes if p.stale]
        current = [
            spec.content
            for s in task.sessions
            for turn in s.turns
            for spec in turn.remember
            if any(value.casefold() in spec.content.casefold() for value in probe.expect)
        ][-1]
        assert not any(value.casefold() in current.casefold() for value in probe.stale), task.id
