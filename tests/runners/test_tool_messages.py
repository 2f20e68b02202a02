"""Tool-call messages reach every model adapter in a form its chat template accepts: the replayed tool calls
carry content "" (never null), and the GGUF adapter writes them out as text
(`tasks.modelapi.tool_calls_as_text`). The chat template is SmolLM2's, rendered with Jinja2 as
llama-cpp-python renders it (the `render_smollm2` and `template_llama` fixtures, tests/runners/conftest.py):
given a tool-call message with `content: None` it fails as the real model did on
`harmful/tool-workaround-retired`."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners.armconfig import ArmSpec
from runners.execute import replay_all
from runners.models.gguf import GGUFModel, completion_prompt
from runners.replay import PairJob, tool_event_messages
from tasks.load import load_tasks
from tasks.logschema import is_finished, read_log
from tasks.modelapi import tool_calls_as_text
from tasks.spec import ToolEventSpec

SHIPPED = Path(__file__).resolve().parents[2] / "tasks"
EVENTS = (
    ToolEventSpec(name="shell", arguments="pnpm install", status="error", output="ETIMEDOUT"),
    ToolEventSpec(
        name="shell", arguments="pnpm install --registry=https://registry.npmmirror.com", output="Done"
    ),
)


def test_the_template_breaks_on_content_null_and_takes_tool_calls_as_text(render_smollm2) -> None:
    messages = [{"role": "user", "content": "Install the dependencies."}, *tool_event_messages(EVENTS, "c")]
    assert all(isinstance(message["content"], str) for message in messages)
    with pytest.raises(TypeError, match="NoneType"):
        render_smollm2([{**m, "content": None} if "tool_calls" in m else m for m in messages])
    prompt = render_smollm2(tool_calls_as_text(messages))
    assert '[calls tool shell with {"input": "pnpm install"}]' in prompt
    assert "<|im_start|>user\n[tool shell returned]\nerror: ETIMEDOUT<|im_end|>" in prompt
    assert "<|im_start|>user\n[tool shell returned]\nDone<|im_end|>" in prompt
    roles = [message["role"] for message in tool_calls_as_text(messages)]
    assert roles == ["user", "assistant", "user", "assistant", "user"]  # still alternating


def test_text_rendering_keeps_plain_messages_and_an_assistant_text_beside_its_calls() -> None:
    plain = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    assert tool_calls_as_text(plain) == plain
    call = {"id": "x", "type": "function", "function": {"name": "recall", "arguments": '{"q": "drink"}'}}
    (assistant,) = tool_calls_as_text(
        [{"role": "assistant", "content": "Let me look.", "tool_calls": [call]}]
    )
    assert assistant == {
        "role": "assistant",
        "content": 'Let me look.\n[calls tool recall with {"q": "drink"}]',
    }
    assert "Tool: " not in completion_prompt([*plain, *tool_event_messages(EVENTS, "c")])


def test_the_gguf_adapter_replays_the_shipped_tool_task_on_every_main_arm(
    template_llama, tmp_path: Path
) -> None:
    (task,) = [t for t in load_tasks(SHIPPED / "harmful") if t.id == "harmful/tool-workaround-retired"]
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(8))
    model = GGUFModel.from_spec(str(gguf))
    jobs = [
        PairJob(ArmSpec(arm, arm), task, 0, tmp_path / arm / "log.jsonl", tmp_path / "work" / arm, 2000)
        for arm in ("no-memory", "full-memory", "amnesia")
    ]
    replay_all(model, jobs)
    for job in jobs:
        assert is_finished(job.log_path)
        records = read_log(job.log_path)
        (probe,) = [record for record in records if record.get("type") == "probe"]
        assert probe["classification"] == "correct"
    assert any("[calls tool shell with" in prompt for prompt in template_llama.prompts)
