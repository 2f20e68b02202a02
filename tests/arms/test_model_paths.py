"""The optional LLM paths of the rule-based arms go through `ctx.model` and are logged as model calls."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from arms.registry import create_arm
from tasks.modelapi import ModelRequest, ModelResponse
from tasks.spec import RememberSpec


@dataclass
class CannedModel:
    reply: str
    name: str = "canned"
    requests: list[ModelRequest] = field(default_factory=list)

    def describe(self) -> dict:
        return {"adapter": "canned"}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=self.reply, prompt_tokens=10, completion_tokens=5)


def test_retrieval_model_extractor(arm_driver, tmp_path):
    model = CannedModel("preference: Answers in French.\nnoise line")
    d = arm_driver(create_arm("retrieval", {"extractor": "model"}), tmp_path, model=model)
    d.start(0)
    d.turn("From now on, answer in French please.")
    d.end()
    assert [w["content"] for w in d.of_type("memory_write")] == ["Answers in French."]
    (call,) = d.of_type("model_call")
    assert call["purpose"] == "retrieval:extract:dispose" and call["response"] == model.reply


def test_claims_model_judge_decides_supersession(arm_driver, tmp_path):
    for reply, active in (("yes", 1), ("no", 2)):
        model = CannedModel(reply)
        d = arm_driver(create_arm("claims", {"judge": "model"}), tmp_path / reply, model=model)
        d.start(0)
        d.turn("x", remember=(RememberSpec("The verification drink is lapsang."),))
        d.turn("x", remember=(RememberSpec("The verification drink is oolong."),))
        assert sum(c.active for c in d.arm.claims.values()) == active
        assert len(d.of_type("model_call")) == 1


def test_claims_model_admission_asks_after_the_credential_rules(arm_driver, tmp_path):
    for reply, kept in (("yes", 1), ("no", 0)):
        model = CannedModel(reply)
        d = arm_driver(create_arm("claims", {"admission": "model"}), tmp_path / reply, model=model)
        d.start(0)
        d.turn("x", remember=(RememberSpec("The verification drink is lapsang."),))
        d.turn("x", remember=(RememberSpec("The password is hunter2hunter2!"),))  # refused before any call
        assert len(d.arm.claims) == kept and len(d.of_type("model_call")) == 1
        assert d.of_type("model_call")[0]["purpose"] == "claims:admission"
        assert [r["rule"] for r in d.of_type("memory_refused")] == (
            ["password"] if kept else ["model", "password"]
        )


def test_clue_folding_model_distiller_and_all_or_nothing_on_a_useless_reply(arm_driver, tmp_path):
    good = CannedModel("keywords: lapsang, drink\nsummary: the drink talk")
    d = arm_driver(
        create_arm("clue-folding", {"distiller": "model", "fold_at_session_end": True}),
        tmp_path / "good",
        model=good,
    )
    d.start(0)
    d.turn("The verification drink is lapsang.")
    d.end()
    assert d.of_type("memory_write")[0]["content"].startswith("keywords: lapsang, drink;")
    bad = CannedModel("I cannot help with that.")
    d = arm_driver(
        create_arm("clue-folding", {"distiller": "model", "fold_at_session_end": True}),
        tmp_path / "bad",
        model=bad,
    )
    d.start(0)
    d.turn("The verification drink is lapsang.")
    d.end()
    assert d.of_type("memory_write") == [] and len(d.of_type("model_call")) == 1


def test_model_path_without_a_model_is_a_clear_error(arm_driver, tmp_path):
    d = arm_driver(create_arm("claims", {"judge": "model"}), tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("The verification drink is lapsang."),))
    with pytest.raises(ValueError, match="needs a model"):
        d.turn("x", remember=(RememberSpec("The verification drink is oolong."),))
