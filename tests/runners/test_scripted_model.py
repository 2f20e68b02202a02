from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia.tokens import count_tokens
from runners.models import resolve_model, split_spec
from runners.models.scripted import ABSTAIN_TEXT, ACK_TEXT, ScriptedModel, _message_tokens
from tasks.errors import ModelSpecError
from tasks.modelapi import ModelRequest

CANDIDATES = ("oolong", "lapsang")


def _block(*lines: str) -> str:
    return "sys\n\nAMNESIA MEMORY\n" + "\n".join(lines)


def _probe(system: str, *, question: str = "What is the drink?", history=(), seed: int = 0) -> ModelRequest:
    messages = [{"role": "system", "content": system}, *history, {"role": "user", "content": question}]
    return ModelRequest(messages=messages, candidates=CANDIDATES, is_probe=True, seed=seed)


OLD_FIRST = _block(
    "- [m-1] fact · written 3d ago · The drink is lapsang.",
    "- [m-2] fact · written 1h ago · The drink is oolong.",
)
NEW_FIRST = _block(
    "- [m-2] fact · written 1h ago · The drink is oolong.",
    "- [m-1] fact · written 3d ago · The drink is lapsang.",
)


def test_resolve_model_specs() -> None:
    assert resolve_model("scripted").strategy == "uniform"
    assert resolve_model("scripted:newest").strategy == "newest"
    with pytest.raises(ModelSpecError, match="unknown scripted strategy"):
        resolve_model("scripted:oracle")
    with pytest.raises(ModelSpecError) as unknown:
        resolve_model("nonexistent-adapter:x")
    assert str(unknown.value) == (
        "--model: unknown provider 'nonexistent-adapter' in 'nonexistent-adapter:x'; known providers: "
        "gguf, openai, scripted (write provider/model or provider:model, e.g. openai/gpt-4o-mini)"
    )


@pytest.mark.parametrize(
    ("spec", "provider", "argument"),
    [
        ("scripted", "scripted", None),
        ("scripted/newest", "scripted", "newest"),
        ("scripted:newest", "scripted", "newest"),
        ("openai/gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("openai/meta-llama/Llama-3.1-8B", "openai", "meta-llama/Llama-3.1-8B"),
        ("openai:meta-llama/Llama-3.1-8B", "openai", "meta-llama/Llama-3.1-8B"),
        ("gguf/smollm2-135m", "gguf", "smollm2-135m"),
        ("gguf:/models/x.gguf", "gguf", "/models/x.gguf"),
        ("gguf//models/x.gguf", "gguf", "/models/x.gguf"),
        (" gpt-4o-mini ", "gpt-4o-mini", None),
    ],
)
def test_provider_slash_model_and_provider_colon_model_name_the_same_model(
    spec: str, provider: str, argument: str | None
) -> None:
    assert split_spec(spec) == (provider, argument)


def test_the_slash_form_resolves_to_the_same_model_as_the_colon_form() -> None:
    assert resolve_model("scripted/newest").describe() == resolve_model("scripted:newest").describe()
    assert resolve_model("openai/gpt-4o-mini").describe() == resolve_model("openai:gpt-4o-mini").describe()


def test_first_and_last_follow_prompt_position() -> None:
    assert ScriptedModel("first").answer(_probe(OLD_FIRST)) == "lapsang"
    assert ScriptedModel("last").answer(_probe(OLD_FIRST)) == "oolong"
    assert ScriptedModel("first").answer(_probe(NEW_FIRST)) == "oolong"


def test_newest_trusts_the_most_recent_written_line_wherever_it_sits() -> None:
    assert ScriptedModel("newest").answer(_probe(OLD_FIRST)) == "oolong"
    assert ScriptedModel("newest").answer(_probe(NEW_FIRST)) == "oolong"


def test_newest_falls_back_to_the_later_position_without_dates() -> None:
    system = _block("- The drink is oolong.", "- The drink is lapsang.")
    assert ScriptedModel("newest").answer(_probe(system)) == "lapsang"


def test_the_question_itself_does_not_count() -> None:
    request = _probe("sys", question="Is it oolong or lapsang?")
    assert ScriptedModel("uniform").answer(request) == ABSTAIN_TEXT


def test_history_counts_and_negated_mentions_do_not() -> None:
    history = [
        {"role": "user", "content": "It is no longer lapsang."},
        {"role": "assistant", "content": "OK"},
    ]
    assert ScriptedModel("uniform").answer(_probe("sys", history=history)) == ABSTAIN_TEXT
    history = [{"role": "user", "content": "The drink is oolong."}, {"role": "assistant", "content": "OK"}]
    assert ScriptedModel("first").answer(_probe("sys", history=history)) == "oolong"


def test_non_probe_turns_get_an_acknowledgement() -> None:
    request = ModelRequest(messages=[{"role": "user", "content": "Remember: oolong."}])
    response = ScriptedModel().complete(request)
    assert response.text == ACK_TEXT
    assert response.prompt_tokens > 0
    assert response.completion_tokens > 0


def test_uniform_covers_both_values_across_seeds() -> None:
    answers = {ScriptedModel("uniform").answer(_probe(OLD_FIRST, seed=seed)) for seed in range(64)}
    assert answers == set(CANDIDATES)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**63 - 1), order=st.booleans())
def test_uniform_is_seeded_and_ignores_line_order(seed: int, order: bool) -> None:
    """Same seed -> same answer; the choice depends on the distinct values present, not where they sit."""
    model = ScriptedModel("uniform")
    one = model.answer(_probe(OLD_FIRST if order else NEW_FIRST, seed=seed))
    assert one == model.answer(_probe(NEW_FIRST if order else OLD_FIRST, seed=seed))
    assert one in CANDIDATES


def test_cjk_candidates_match_as_substrings() -> None:
    request = ModelRequest(
        messages=[
            {"role": "system", "content": "记忆：验证饮品是乌龙茶。"},
            {"role": "user", "content": "验证饮品是什么？"},
        ],
        candidates=("乌龙茶", "正山小种"),
        is_probe=True,
    )
    assert ScriptedModel("uniform").answer(request) == "乌龙茶"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.text(max_size=12)
        | st.sampled_from(["\n", "\n\n", " · ", "乌龙茶", "- [m-0001] fact · written 2d ago"]),
        max_size=12,
    )
)
def test_a_message_is_counted_as_count_tokens_counts_it(pieces) -> None:
    """The scripted model counts a message line by line (memoised per line): the same count as the whole."""
    text = "".join(pieces)
    assert _message_tokens(text) == count_tokens(text)
