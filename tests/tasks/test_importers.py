"""The LoCoMo and LongMemEval importers, on invented fixtures in each dataset's schema (tests/conftest.py):
all input forms, real dated offsets, evidence kept on probes, written-ttl policies, determinism, the
manifest, validation, and one-line errors."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.errors import BadInput
from tasks.importers.common import ImportInputError, parse_ttl_policy
from tasks.importers.locomo import evidence_ids, import_locomo
from tasks.importers.longmemeval import import_longmemeval
from tasks.load import load_tasks, task_set_hash
from tasks.spec import NEVER

NONE = parse_ttl_policy("none")
DAY = 86_400.0


def _probes(task):
    return [turn.probe for session in task.sessions for turn in session.turns if turn.probe is not None]


def test_locomo_folder_becomes_one_valid_task_per_conversation(tmp_path, write_locomo):
    manifest, totals = import_locomo(write_locomo(tmp_path / "in"), tmp_path / "out", NONE)
    tasks = load_tasks(tmp_path / "out")
    assert [task.id for task in tasks] == ["locomo/conv-7", "locomo/conv-8"]
    task = tasks[0]
    assert task.group == "helpful" and task.origin == {
        "dataset": "locomo",
        "item": "conv-7",
        "ttl_policy": "none",
    }
    # Sessions at their real dated offsets; the dated session without turns is skipped; the questions are
    # asked right after the last session, each in a session of its own.
    assert [session.at for session in task.sessions] == [0.0, *[18 * DAY + 21 * 3600] * 6]
    assert [len(session.turns) for session in task.sessions] == [1] * 7
    writes = [spec for session in task.sessions for turn in session.turns for spec in turn.remember]
    assert [spec.refs for spec in writes] == [("D1:1",), ("D1:2", "D1:3"), ("D2:1",)]
    assert all(spec.ttl == NEVER and spec.kind == "fact" for spec in writes)  # none: never forgotten by time
    probes = _probes(task)
    assert [p.mechanism for p in probes] == [
        "single-hop",
        "temporal",
        "multi-hop",
        "open-domain",
        "adversarial",
    ]
    assert [p.evidence for p in probes] == [("D1:1",), ("D2:1",), ("D1:2", "D1:3"), ("D2:2",), ("D1:1",)]
    assert probes[0].expect == ("Quillon",) and probes[0].answer == "Quillon"
    assert probes[4].abstain and not probes[4].expect and probes[4].answer is None
    assert totals == {"tasks": 2, "sessions": 4, "memories": 6, "probes": 10, "evidence_dropped": 2}
    written = json.loads(manifest.read_text())
    assert written["source"]["dataset"] == "LoCoMo" and "Maharana" in written["source"]["citation"]
    assert written["source"]["license"] and written["options"]["ttl_policy"] == "none"
    assert written["content_hash"] == task_set_hash(tmp_path / "out")[0]


def test_locomo_release_file_and_folder_give_the_same_tasks(tmp_path, write_locomo):
    import_locomo(write_locomo(tmp_path / "a"), tmp_path / "from-folder", NONE)
    import_locomo(write_locomo(tmp_path / "b", form="release"), tmp_path / "from-release", NONE)
    assert task_set_hash(tmp_path / "from-folder")[0] == task_set_hash(tmp_path / "from-release")[0]
    single = tmp_path / "a" / "7.json"
    import_locomo(single, tmp_path / "one", NONE)
    assert [task.id for task in load_tasks(tmp_path / "one")] == ["locomo/conv-7"]


def test_locomo_import_is_deterministic_and_refuses_a_non_empty_out(tmp_path, write_locomo):
    source = write_locomo(tmp_path / "in")
    first, _ = import_locomo(source, tmp_path / "x", NONE)
    second, _ = import_locomo(source, tmp_path / "y", NONE)
    assert first.read_bytes() == second.read_bytes()
    with pytest.raises(BadInput, match="not an empty folder"):
        import_locomo(source, tmp_path / "x", NONE)


@pytest.mark.parametrize(
    ("policy", "ttls"),
    [
        ("fixed:30d", {30 * DAY}),
        ("by-kind:fact=9d,episode=1d", {9 * DAY}),
        ("by-kind:episode=1d", {None}),
        ("none", {NEVER}),
        ("default", {None}),
    ],
)
def test_written_ttl_policies(tmp_path, write_locomo, policy, ttls):
    import_locomo(write_locomo(tmp_path / "in"), tmp_path / "out", parse_ttl_policy(policy))
    task = load_tasks(tmp_path / "out")[0]
    assert {spec.ttl for s in task.sessions for t in s.turns for spec in t.remember} == ttls
    assert task.origin["ttl_policy"] == policy


@pytest.mark.parametrize(
    "bad", ["forever", "fixed:", "fixed:-3d", "fixed:0s", "by-kind:mood=3d", "by-kind:fact"]
)
def test_bad_ttl_policy_is_one_line_bad_input(bad):
    with pytest.raises(ImportInputError, match="--ttl-policy") as error:
        parse_ttl_policy(bad)
    assert "\n" not in str(error.value)


def test_locomo_errors_name_the_file_and_field(tmp_path, locomo_sample):
    sample = locomo_sample()
    del sample["speaker_a"]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "3.json").write_text(json.dumps(sample), encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"3\.json: speaker_a: missing"):
        import_locomo(tmp_path / "in", tmp_path / "out", NONE)
    sample = locomo_sample()
    sample["session_2_date_time"] = "sometime in spring"
    (tmp_path / "in" / "3.json").write_text(json.dumps(sample), encoding="utf-8")
    with pytest.raises(ImportInputError, match="session_2_date_time"):
        import_locomo(tmp_path / "in", tmp_path / "out", NONE)
    (tmp_path / "in" / "3.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"3\.json:1: invalid JSON"):
        import_locomo(tmp_path / "in", tmp_path / "out", NONE)
    assert not (tmp_path / "out").exists()  # nothing half-written


@settings(max_examples=50, deadline=None)
@given(
    ids=st.lists(st.tuples(st.integers(1, 40), st.integers(1, 300)), min_size=1, max_size=6),
    separator=st.sampled_from(["; ", ",", " ", ";"]),
)
def test_evidence_ids_are_recovered_from_any_joined_form(ids, separator):
    wanted = [f"D{a}:{b}" for a, b in ids]
    joined = [separator.join(wanted)]
    assert evidence_ids(joined) == (list(dict.fromkeys(wanted)), 0)
    assert evidence_ids([f"D:{a}:{b}" for a, b in ids])[0] == list(dict.fromkeys(wanted))


def test_longmemeval_knowledge_update_becomes_a_stale_probe(tmp_path, longmemeval_items):
    source = tmp_path / "longmemeval_s.json"
    source.write_text(json.dumps(longmemeval_items()), encoding="utf-8")
    manifest, totals = import_longmemeval(source, tmp_path / "out", parse_ttl_policy("by-kind:fact=30d"))
    tasks = {task.id: task for task in load_tasks(tmp_path / "out")}
    assert sorted(tasks) == ["longmemeval/ku-1", "longmemeval/ss-2_abs", "longmemeval/ss-3"]
    update = tasks["longmemeval/ku-1"]
    assert update.group == "harmful" and update.category == "longmemeval-knowledge-update"
    assert [session.at for session in update.sessions] == [
        0.0,
        27 * DAY + 3 * 3600,
        56 * DAY + 9.5 * 3600,
        63 * DAY + 23 * 3600,
    ]
    probe = _probes(update)[0]
    assert probe.expect == ("25:10",) and probe.stale == (
        "27:40",
    )  # not "2" (a session outside the evidence)
    assert probe.evidence == ("s-a:0", "s-c:0") and probe.mechanism == "knowledge-update"
    writes = [spec for s in update.sessions for t in s.turns for spec in t.remember]
    assert [(spec.kind, spec.ttl) for spec in writes[:2]] == [("fact", 30 * DAY), ("episode", None)]
    assert writes[0].refs == ("s-a", "s-a:0")
    abstain = _probes(tasks["longmemeval/ss-2_abs"])[0]
    assert abstain.abstain and abstain.mechanism == "single-session-user+abstention"
    assert abstain.evidence == ("s-d",)  # no turn marked has_answer: the whole answer session
    assert totals["knowledge_update"] == 1 and totals["stale_probes"] == 1
    written = json.loads(manifest.read_text())
    assert written["source"]["dataset"] == "LongMemEval" and written["source"]["license"].startswith("MIT")


def test_longmemeval_type_filter_limit_and_errors(tmp_path, longmemeval_items):
    source = tmp_path / "lme.json"
    source.write_text(json.dumps(longmemeval_items()), encoding="utf-8")
    import_longmemeval(source, tmp_path / "ku", NONE, question_types=("knowledge-update",))
    assert [task.id for task in load_tasks(tmp_path / "ku")] == ["longmemeval/ku-1"]
    import_longmemeval(source, tmp_path / "one", NONE, limit=1)
    assert len(load_tasks(tmp_path / "one")) == 1
    broken = longmemeval_items()
    broken[1]["haystack_dates"] = ["yesterday"]
    source.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"lme\.json\[1\]: haystack_dates\[0\]"):
        import_longmemeval(source, tmp_path / "bad", NONE)
    source.write_text(json.dumps({"not": "a list"}), encoding="utf-8")
    with pytest.raises(ImportInputError, match="expected a list"):
        import_longmemeval(source, tmp_path / "bad", NONE)


def test_imported_yaml_reads_as_plain_task_files(tmp_path, write_locomo):
    import_locomo(write_locomo(tmp_path / "in"), tmp_path / "out", NONE)
    document = yaml.safe_load((tmp_path / "out" / "locomo" / "conv-7.yaml").read_text(encoding="utf-8"))
    probe = document[0]["sessions"][2]["turns"][0]["probe"]
    assert probe == {
        "mechanism": "single-hop",
        "expect": ["Quillon"],
        "answer": "Quillon",
        "evidence": ["D1:1"],
    }


def _blocks(run, arm):
    logs = sorted((run / "logs" / arm).glob("*.jsonl"))
    records = [json.loads(line) for log in logs for line in log.read_text(encoding="utf-8").splitlines()]
    return [r["block"] for r in records if r["type"] == "injection"], records


@pytest.mark.parametrize("policy", ["none", "default"])
def test_ttl_policy_none_means_no_arm_forgets_by_time(tmp_path, write_locomo, run_ok, policy):
    """Imported with `none`, the amnesia arm (30-day default ttl) keeps and shows exactly what full memory
    does; with `default` it applies its own 30-day ttl and its blocks differ (18 days in, some are stale)."""
    import_locomo(write_locomo(tmp_path / "in"), tmp_path / "tasks", parse_ttl_policy(policy))
    run_ok(tmp_path / "tasks", tmp_path / "run", arms="full-memory,amnesia")
    full, _ = _blocks(tmp_path / "run", "full-memory")
    amnesia, records = _blocks(tmp_path / "run", "amnesia")
    ttls = {r["ttl"] for r in records if r["type"] == "memory_write"}
    if policy == "none":
        assert ttls == {100 * 365 * DAY} and amnesia == full  # the engine's longest ttl, flat
        assert not [r for r in records if r["type"] == "memory_forget"]
    else:
        assert ttls == {30 * DAY} and amnesia != full
