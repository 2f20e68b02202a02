"""Context compaction as the host performs it (docs/harness.md#context-compaction): one session's
conversation, kept turn by turn, whose older turns can be replaced by one summary message.

The summary is a deterministic, rule-based digest (no model call), so that scripted runs give the same logs
every time: a fixed header in the language of the turns, then one line per dropped turn with the user's
first sentence (at most `MAX_LINE_CHARS` characters) and the names of the tools the turn called. The
assistant's answers and the tools' outputs are not kept. An earlier summary that is dropped again passes its
lines on, oldest first, so what one compaction kept a later one keeps too.

The cut falls between turns, and a turn's messages (the user text, its tool calls with their results, the
answer) are kept or dropped together, so a tool call is never separated from its result.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from amnesia.tokens import count_tokens, has_cjk
from tasks.modelapi import Message

MAX_LINE_CHARS = 200  # a dropped turn's line keeps at most this much of the user's first sentence
HEADERS = {
    "en": "[conversation compacted] Summary of the earlier conversation:",
    "zh": "【对话已压缩】之前对话的摘要：",
}
_USER_LABEL = {"en": "- user: ", "zh": "- 用户："}
_TOOLS = {"en": " [tools: {}]", "zh": "（工具：{}）"}
_STATUS = {"en": {"ok": "ok", "error": "error"}, "zh": {"ok": "成功", "error": "失败"}}
_TOOL_JOIN = {"en": ", ", "zh": "、"}
# A sentence ends at . ! ? before a space or the end, or at a CJK full stop, exclamation or question mark.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]")


def first_sentence(text: str) -> str:
    """The first sentence of the first non-empty line of `text`, cut to MAX_LINE_CHARS (with "…")."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    end = _SENTENCE_END.search(line)
    sentence = line[: end.end()] if end else line
    return sentence if len(sentence) <= MAX_LINE_CHARS else sentence[: MAX_LINE_CHARS - 1] + "…"


def message_tokens(message: Message) -> int:
    """The tokens of one history message: its text plus the names and arguments of its tool calls."""
    tokens = count_tokens(str(message.get("content") or ""))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        tokens += count_tokens(f"{function.get('name') or ''} {function.get('arguments') or ''}")
    return tokens


def history_tokens(messages: Sequence[Message]) -> int:
    """The tokens of a history (`message_tokens` summed)."""
    return sum(message_tokens(message) for message in messages)


@dataclass(frozen=True)
class Cut:
    """What a compaction with a given `keep_turns` would do, worked out before anything changes."""

    dropped: tuple[Message, ...]  # the history messages replaced, oldest first (an earlier summary first)
    kept: tuple[Message, ...]  # the messages kept verbatim after the summary
    dropped_turns: tuple[int, ...]  # the session's turn indices of the dropped turns
    summary: str  # the text of the message that replaces `dropped`

    @property
    def message(self) -> Message:
        """The summary message placed where `dropped` was: a user message, as hosts send their summaries."""
        return {"role": "user", "content": self.summary}

    def tokens_after(self) -> int:
        """The history's tokens once the cut is applied (the summary message and the kept turns)."""
        return history_tokens([self.message, *self.kept])


class Conversation:
    """One session's history as the host holds it: completed turns, each a tuple of its messages (an arm's
    extra messages, the user text, the turn's finished tool calls with their results, the answer), after the
    summary of the last compaction, if any."""

    def __init__(self) -> None:
        self._summary_lines: tuple[str, ...] = ()
        self._summary: Message | None = None
        self._turns: list[tuple[int, tuple[Message, ...]]] = []  # (turn index in the session, messages)

    def messages(self) -> list[Message]:
        """The history placed in the prompt: the summary message (if any), then every kept turn."""
        head = [self._summary] if self._summary is not None else []
        return head + [message for _, turn in self._turns for message in turn]

    def add_turn(self, turn_index: int, messages: Sequence[Message]) -> None:
        """Append a completed turn (its messages in prompt order, the user message first)."""
        self._turns.append((turn_index, tuple(messages)))

    def tokens(self) -> int:
        """The history's tokens (`history_tokens`)."""
        return history_tokens(self.messages())

    def cut(self, keep_turns: int) -> Cut | None:
        """What compacting now, keeping the last `keep_turns` turns, would drop and write; None when no turn
        would be dropped (an earlier summary alone is never re-summarised)."""
        count = len(self._turns) - keep_turns
        if count <= 0:
            return None
        dropped_turns = self._turns[:count]
        said = [*self._summary_lines, *(_user_text(turn) for _, turn in dropped_turns)]
        lang = "zh" if any(has_cjk(text) for text in said) else "en"
        lines = [_localised(line, lang) for line in self._summary_lines]
        lines += [_turn_line(turn, lang) for _, turn in dropped_turns]
        head = (self._summary,) if self._summary is not None else ()
        return Cut(
            dropped=head + tuple(message for _, turn in dropped_turns for message in turn),
            kept=tuple(message for _, turn in self._turns[count:] for message in turn),
            dropped_turns=tuple(index for index, _ in dropped_turns),
            summary="\n".join([HEADERS[lang], *lines]),
        )

    def apply(self, cut: Cut) -> None:
        """Replace the dropped turns (and any earlier summary) by `cut`'s summary message."""
        count = len(cut.dropped_turns)
        if tuple(index for index, _ in self._turns[:count]) != cut.dropped_turns:
            raise ValueError("compaction: the conversation changed since the cut was worked out")
        self._summary_lines = tuple(cut.summary.split("\n")[1:])
        self._summary = cut.message
        del self._turns[:count]


def _turn_line(turn: tuple[Message, ...], lang: str) -> str:
    """One summary line for a dropped turn, in the summary's language `lang`."""
    results = {m.get("tool_call_id"): str(m.get("content") or "") for m in turn if m.get("role") == "tool"}
    tools = [
        (str((call.get("function") or {}).get("name") or "tool"),
         "error" if results.get(call.get("id"), "").startswith("error: ") else "ok")
        for message in turn
        for call in message.get("tool_calls") or ()
    ]  # fmt: skip
    line = _USER_LABEL[lang] + first_sentence(_user_text(turn))
    if tools:
        named = _TOOL_JOIN[lang].join(f"{name} {_STATUS[lang][status]}" for name, status in tools)
        line += _TOOLS[lang].format(named)
    return line


def _user_text(turn: tuple[Message, ...]) -> str:
    """The user's own message of a turn: the last of the user messages it opens with (an arm's extra messages,
    such as a recall message, come before it)."""
    opening = list(itertools.takewhile(lambda m: m.get("role") == "user", turn))
    return str(opening[-1].get("content") or "") if opening else ""


def _localised(line: str, lang: str) -> str:
    """An earlier summary's `line` with its user label in the summary's language `lang` (the user's words and
    the tools' part stay as they were written)."""
    for label in _USER_LABEL.values():
        if line.startswith(label):
            return _USER_LABEL[lang] + line.removeprefix(label)
    return line
