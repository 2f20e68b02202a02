"""The task generator: deterministic per seed, every category, valid output, an honest manifest."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.generate import HARMFUL, HELPFUL, generate, write_generated
from tasks.load import GROUPS, load_tasks, task_set_hash, validate_path


def test_same_seed_same_tasks_other_seed_other_tasks():
    for group in GROUPS:
        assert generate(group, 30, seed=5) == generate(group, 30, seed=5)
        assert generate(group, 30, seed=5) != generate(group, 30, seed=6)


def test_task_i_does_not_depend_on_n():
    assert generate("mixed", 40, seed=1)[:7] == generate("mixed", 7, seed=1)


def test_every_category_and_both_languages_appear():
    helpful = generate("helpful", 40, seed=0)
    harmful = generate("harmful", 60, seed=0)
    mixed = generate("mixed", 48, seed=0)
    assert len({task["category"] for task in helpful}) == len(HELPFUL)
    assert len({task["category"] for task in harmful}) == len(HARMFUL)
    assert len({task["category"] for task in mixed}) == len(HELPFUL) * len(HARMFUL)
    for tasks in (helpful, harmful, mixed):
        assert {task["lang"] for task in tasks} == {"en", "zh"}


def test_unknown_group_and_negative_n_are_refused():
    with pytest.raises(ValueError, match="group"):
        generate("useful", 1, seed=0)
    with pytest.raises(ValueError, match="n: must be non-negative"):
        generate("helpful", -1, seed=0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), group=st.sampled_from(GROUPS))
def test_generated_tasks_validate_and_are_answerable(
    assert_probe_values_written_before_and_not_asked, tmp_path_factory, seed, group
):
    tasks = generate(group, 12, seed)
    path = tmp_path_factory.mktemp("gen") / "set.yaml"
    path.write_text(yaml.safe_dump(tasks, allow_unicode=True, sort_keys=False), encoding="utf-8")
    assert validate_path(path) == []
    for task in load_tasks(path):
        assert_probe_values_written_before_and_not_asked(task)


def test_write_generated_writes_valid_files_and_a_matching_manifest(tmp_path):
    tasks = [task for group in GROUPS for task in generate(group, 30, seed=9)]
    out = tmp_path / "gen"
    manifest_path = write_generated(tasks, out, meta={"seed": 9})
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    content_hash, files = task_set_hash(out)
    assert manifest["seed"] == 9 and manifest["count"] == 90
    assert (manifest["content_hash"], manifest["files"]) == (content_hash, files)
    loaded = load_tasks(out)
    assert sorted(task.id for task in loaded) == sorted(task["id"] for task in tasks)
    again = write_generated(tasks, tmp_path / "again")
    assert json.loads(again.read_text(encoding="utf-8"))["content_hash"] == content_hash


def test_write_generated_refuses_a_non_empty_folder_and_leaves_no_temp(tmp_path):
    out = tmp_path / "gen"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError):
        write_generated(generate("helpful", 3, seed=0), out)
    assert [p.name for p in tmp_path.iterdir()] == ["gen"]
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
