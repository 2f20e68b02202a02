"""Context compaction as a host event (docs/harness.md#context-compaction): the task format's `compaction` and
`auto_compaction` (one-line errors, exit 2), the runner's replacement of older turns by one deterministic
summary message, the arm hooks around it, the `compaction` log record, a tool call never cut from its
result, and every model adapter taking the summary message."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from amnesia_bench.cli import app
from arms.base import ArmBase, CompactionInfo, MemoryContext
from runners.armconfig import ArmSpec
from runners.compaction import MAX_LINE_CHARS, Conversation, first_sentence, history_tokens
from runners.models.gguf import GGUFModel
from runners.models.openai_compat import OpenAICompatModel, OpenAISettings
from runners.models.scripted import ScriptedModel
from runners.replay import PairJob, replay_pair
from tasks.load import load_tasks
from tasks.logschema import log_filename
from tasks.spec import Task

THE_CODE = "4471"


# ---- the task format ---------------------------------------------------------------------------------------


def _with(tasks: list[dict[str, Any]], change) -> list[dict[str, Any]]:
    tasks = copy.deepcopy(tasks[:1])
    change(tasks[0])
    return tasks


def _turn(task: dict[str, Any], session: int, turn: int) -> dict[str, Any]:
    return task["sessions"][session]["turns"][turn]


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        (lambda t: _turn(t, 0, 3).update(compaction=3), "turns[3].compaction", "expected true, false or"),
        (lambda t: _turn(t, 0, 3).update(compaction={"keep": 1}), "compaction.keep", "unknown field"),
        (
            lambda t: _turn(t, 0, 3).update(compaction={"keep_turns": -1}),
            "compaction.keep_turns",
            "expected a whole number >= 0, got -1",
        ),
        (
            lambda t: _turn(t, 0, 1).update(compaction={"keep_turns": 1}),
            "turns[1].compaction",
            "nothing to compact: 1 earlier turn(s) in the session, keep_turns 1",
        ),
        (lambda t: t.update(auto_compaction={"keep_turns": 1}), "auto_compaction.at_tokens", "missing"),
        (
            lambda t: t.update(auto_compaction={"at_tokens": "many"}),
            "auto_compaction.at_tokens",
            "expected a whole number >= 1, got 'many'",
        ),
    ],
)
def test_a_bad_compaction_field_is_one_line_naming_file_line_field_and_value_exit_2(
    compaction_tasks, write_tasks, tmp_path: Path, change, field: str, problem: str
) -> None:
    folder = write_tasks(tmp_path / "tasks", _with(compaction_tasks, change))
    result = CliRunner().invoke(app, ["validate", str(folder)])
    assert result.exit_code == 2
    line, count = result.output.splitlines()
    prefix = f"error: {folder / 'tasks.yaml'}:"
    assert line.startswith(prefix) and line.split(":")[2].strip().isdigit(), line  # the file and its line
    assert f"{field}: {problem}" in line, line
    assert count == f"1 error(s) in {folder}"


def test_the_task_format_reads_events_and_the_threshold(
    compaction_tasks, write_tasks, tmp_path: Path
) -> None:
    gate, threshold = load_tasks(write_tasks(tmp_path / "tasks", compaction_tasks))
    events = [(s, t, turn.compaction) for s, session in enumerate(gate.sessions)
              for t, turn in enumerate(session.turns) if turn.compaction]  # fmt: skip
    assert [(s, t, c.keep_turns) for s, t, c in events] == [(0, 3, 1), (1, 2, 0)]
    assert gate.auto_compaction is None
    assert (threshold.auto_compaction.at_tokens, threshold.auto_compaction.keep_turns) == (12, 1)


# ---- the summary -------------------------------------------------------------------------------------------


def test_the_summary_keeps_each_dropped_turns_first_sentence_and_tool_names_only() -> None:
    conversation = Conversation()
    call = {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": '{"input": "ls"}'}}
    conversation.add_turn(0, [
        {"role": "user", "content": "Hello again. The gate code is 4471."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "error: locker 9 is jammed"},
        {"role": "assistant", "content": "Noted: the gate code is 4471."},
    ])  # fmt: skip
    recall = {"role": "user", "content": "<recalled-memory>The gate code is 4471.</recalled-memory>"}
    conversation.add_turn(
        1, [recall, {"role": "user", "content": "Thanks."}, {"role": "assistant", "content": "OK"}]
    )
    cut = conversation.cut(keep_turns=1)
    assert cut.summary == (
        "[conversation compacted] Summary of the earlier conversation:\n"
        "- user: Hello again. [tools: shell error]"
    )
    assert THE_CODE not in cut.summary and "jammed" not in cut.summary  # answers and outputs are not kept
    assert cut.dropped_turns == (0,) and len(cut.dropped) == 4
    conversation.apply(cut)
    assert conversation.messages() == [cut.message, *cut.kept]
    # A second compaction passes the first one's lines on, and switches to the turns' language.
    conversation.add_turn(
        2, [{"role": "user", "content": "会议室换成竹园厅。其他不变"}, {"role": "assistant", "content": "好"}]
    )
    again = conversation.cut(keep_turns=0)
    assert again.summary.split("\n") == [
        "【对话已压缩】之前对话的摘要：",
        "- 用户：Hello again. [tools: shell error]",
        "- 用户：Thanks.",
        "- 用户：会议室换成竹园厅。",
    ]
    assert again.dropped[0] == cut.message and again.dropped_turns == (1, 2) and recall in again.dropped
    assert conversation.cut(keep_turns=5) is None  # nothing but turns to keep: no compaction


def test_first_sentence_is_cut_to_the_line_limit() -> None:
    assert first_sentence("\n  Use v2.3 now! Then rest.") == "Use v2.3 now!"
    long = "x" * (MAX_LINE_CHARS + 50)
    assert first_sentence(long) == "x" * (MAX_LINE_CHARS - 1) + "…"


@st.composite
def _turns(draw) -> list[list[dict[str, Any]]]:
    turns = []
    for index in range(draw(st.integers(1, 6))):
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": draw(st.sampled_from(["a", "b. c", "会"]))}
        ]
        for call in range(draw(st.integers(0, 3))):
            call_id = f"t{index}-{call}"
            function = {"name": "shell", "arguments": "{}"}
            messages.append(
                {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "function": function}]}
            )
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": draw(st.sampled_from(["ok", "error: x"])),
                }
            )
        messages.append({"role": "assistant", "content": "done"})
        turns.append(messages)
    return turns


@settings(max_examples=60, deadline=None)
@given(turns=_turns(), keeps=st.lists(st.integers(0, 4), min_size=1, max_size=3))
def test_a_tool_call_is_never_cut_from_its_result(turns, keeps) -> None:
    conversation = Conversation()
    for index, messages in enumerate(turns):
        conversation.add_turn(index, messages)
        for keep in keeps:
            cut = conversation.cut(keep)
            if cut is None:
                continue
            for part in (cut.dropped, cut.kept):
                calls = {c["id"] for m in part for c in m.get("tool_calls") or ()}
                results = {m["tool_call_id"] for m in part if m.get("role") == "tool"}
                assert calls == results
            conversation.apply(cut)
            history = conversation.messages()
            assert history[0] == cut.message and history[1:] == list(cut.kept)
            assert history_tokens(history) == cut.tokens_after()


# ---- the runner --------------------------------------------------------------------------------------------


def _replay(tasks: list[Task], arms: tuple[str, ...], out: Path) -> dict[tuple[str, str], Path]:
    """Replay every (arm, task) pair with the scripted model into `out`; (arm, task id) -> its log."""
    logs = {}
    for arm in arms:
        for task in tasks:
            log = out / arm / log_filename(task.id)
            replay_pair(PairJob(ArmSpec(arm, arm), task, 11, log, out / "work" / arm, 2000), ScriptedModel())
            logs[(arm, task.id)] = log
    return logs


def _without_wall(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith("wall") and k != "summary"} for r in records]


def test_the_runner_replaces_turns_deterministically_and_logs_the_record(
    compaction_tasks, write_tasks, read_log, tmp_path: Path
) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "tasks", compaction_tasks))
    one, two = (_replay(tasks, ("no-memory", "full-memory"), tmp_path / out) for out in ("one", "two"))
    assert [_without_wall(read_log(log)) for log in one.values()] == [
        _without_wall(read_log(log)) for log in two.values()
    ]
    records = read_log(one[("no-memory", "helpful/gate-code-cut")])
    first, sub = [r for r in records if r["type"] == "compaction"]
    assert (first["session_index"], first["turn_index"], first["trigger"], first["keep_turns"]) == (
        0,
        3,
        "event",
        1,
    )
    assert (
        first["dropped_turns"] == [0, 1] and first["dropped_messages"] == 6
    )  # 2 user, 1 call, 1 result, 2 answers
    assert first["summary"].split("\n")[1:] == [
        "- user: Hello again.",
        "- user: Check the boxes. [tools: shell ok]",
    ]
    assert (sub["session_index"], sub["dropped_turns"], sub["summary"].split("\n")[1:]) == (
        1, [0, 1], ["- 用户：子任务：核对清单。", "- 用户：第二项是搬家公司。"],
    )  # fmt: skip
    # The record comes before its turn's record, and the probe's prompt holds the summary, then the kept turn.
    at = records.index(first)
    assert records[at + 1]["type"] == "turn" and records[at + 1]["turn_index"] == 3
    call = next(r for r in records[at:] if r["type"] == "model_call")
    assert [m["content"] for m in call["messages"][1:]] == [
        first["summary"],
        "Book the van for Tuesday.",
        "OK, noted.",
        "What is the gate code?",
    ]
    assert first["tokens_after"] == history_tokens(call["messages"][1:-1])
    probe = next(r for r in records if r["type"] == "probe")
    assert probe["classification"] == "abstained" and probe["exposed"]["expect"] == []  # cut, not in memory
    auto = read_log(one[("full-memory", "helpful/threshold-cut")])
    (record,) = [r for r in auto if r["type"] == "compaction"]
    assert (record["trigger"], record["turn_index"], record["dropped_turns"]) == ("tokens", 2, [0])
    assert record["tokens_before"] > 12
    assert next(r for r in auto if r["type"] == "probe")["classification"] == "correct"  # memory kept it


class RecordingArm(ArmBase):
    """Writes down every hook call (and the history it is given), in order."""

    name = "recording"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Any]] = []

    def observe_user_turn(self, text: str) -> None:
        self.calls.append(("turn", text))

    def memory_context(self, user_text: str, history: list[dict[str, Any]]) -> MemoryContext:
        self.calls.append(("history", [m["content"] for m in history]))
        return MemoryContext()

    def on_compaction_start(self, info: CompactionInfo) -> None:
        self.calls.append(("start", info))

    def on_compaction_end(self, info: CompactionInfo) -> None:
        self.calls.append(("end", info))


class _Spec:
    name = "recording"

    def __init__(self) -> None:
        self.arm = RecordingArm()

    def build(self) -> RecordingArm:
        return self.arm


def test_the_hooks_come_in_order_around_the_replacement_with_the_dropped_turns(
    compaction_tasks, write_tasks, read_log, tmp_path: Path
) -> None:
    (task, _) = load_tasks(write_tasks(tmp_path / "tasks", compaction_tasks))
    spec = _Spec()
    job = PairJob(spec, task, 5, tmp_path / "log.jsonl", tmp_path / "work", 2000)  # type: ignore[arg-type]
    replay_pair(job, ScriptedModel())
    calls = spec.arm.calls
    kinds = [kind for kind, _ in calls]
    assert kinds[:8] == ["turn", "history", "turn", "history", "turn", "history", "start", "end"]
    start, end = calls[6][1], calls[7][1]
    assert (start.session_id, start.trigger, start.turn_index, start.at) == ("s0", "event", 3, 0.0)
    assert start.dropped == end.dropped and [m["content"] for m in start.dropped if m["role"] == "user"] == [
        "Hello again. The gate code is 4471.",
        "Check the boxes. They are in the hall.",
    ]
    assert (start.summary, start.tokens_after) == ("", 0)
    record = next(r for r in read_log(job.log_path) if r["type"] == "compaction")
    assert (end.summary, end.tokens_before, end.tokens_after) == (
        record["summary"],
        record["tokens_before"],
        record["tokens_after"],
    )
    assert start.tokens_before == history_tokens([*start.dropped, *start.kept])
    assert calls[8:10] == [("turn", "What is the gate code?"),
                           ("history", [end.summary, "Book the van for Tuesday.", "OK, noted."])]  # fmt: skip
    # the sub-agent's compaction: keep_turns 0, so the history is the summary alone
    sub_start, sub_end = [info for kind, info in calls if kind in ("start", "end")][2:]
    assert (sub_start.session_id, sub_start.kept, sub_end.kept) == ("s1", (), ())
    assert calls[-1] == ("history", [sub_end.summary])


# ---- the model adapters ------------------------------------------------------------------------------------


def test_every_model_adapter_takes_the_summary_message(
    compaction_tasks, write_tasks, read_log, openai_stub, template_llama, tmp_path: Path
) -> None:
    (task, _) = load_tasks(write_tasks(tmp_path / "tasks", compaction_tasks))
    gguf_file = tmp_path / "model.gguf"
    gguf_file.write_bytes(b"GGUF" + bytes(8))
    models = {
        "gguf": GGUFModel.from_spec(str(gguf_file)),
        "openai": OpenAICompatModel(OpenAISettings.from_env("stub-model", base_url=openai_stub.base_url)),
        "scripted": ScriptedModel(),
    }
    for name, model in models.items():
        spec = _Spec()
        job = PairJob(spec, task, 5, tmp_path / f"{name}.jsonl", tmp_path / name, 2000)  # type: ignore[arg-type]
        replay_pair(job, model)
        records = read_log(job.log_path)
        assert records[-1]["type"] == "task_end", name
        summaries = [r["summary"] for r in records if r["type"] == "compaction"]
        after = next(r for r in records if r["type"] == "model_call" and r["turn_index"] == 3)
        assert after["messages"][1] == {"role": "user", "content": summaries[0]}, name
    assert any("【对话已压缩】" in prompt for prompt in template_llama.prompts)
    sent = [body["messages"] for body in openai_stub.requests]
    assert any({"role": "user", "content": summaries[0]} in messages for messages in sent)
