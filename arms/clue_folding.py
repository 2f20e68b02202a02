"""`clue-folding`: full-life memory (seed 003) — when the prompt grows past a threshold, the oldest
completed turns are folded into token clues (keywords, seed tokens, a one-line summary: no message
text, no vectors) in a SQLite `memory_clues` table, and physically replaced in the prompt by one
checkpoint line; later, clues matching the current user text are recalled into the prompt.

What it reproduces:
- Measure, then fold: before each model call the prompt (history view + user text) is measured with
  amnesia.tokens; at ≥ `threshold_tokens` (8000) the oldest `forget_turns` (2) unfolded completed turns
  are folded, but only while at least `forget_turns + keep_completed_turns` (2 + 4) completed turns are
  unfolded, so the most recent 4 always stay; at most one fold per step.
- Regex distillation, zero model calls: quoted phrases, file paths, identifiers (snake_case, camelCase,
  dotted, hyphenated, with digits: each one token, `QX-5519` whole), CJK phrases as seed tokens; frequent
  content words (never a piece of an identifier or path) as keywords; the first
  sentence as summary. `distiller: model` asks `ctx.model` for the keywords and summary instead (same
  return shape).
- Storage: SQLite in WAL mode (`memory_clues.db` in the arm's workdir); each fold is one transaction,
  and folding is all-or-nothing: the checkpoint replaces the turns only after the clue row committed;
  any failure leaves the history untouched.
- Recall: LIKE matching (`%` and `_` escaped) of the current user text's distilled terms against the
  clues, at most `limit` (5, ≤ 20) clues ranked by matched terms then recency, at most
  `max_prompt_chars` (1800) chars with an "older clues have faded" marker when cut.
- `auto_forget: false` keeps history intact (recall only): no fold, at a host compaction neither.
- Recall through the `recall_from_clues` tool (`recall: tool`, the seed's Phase 1, default): the model calls
  it with a query when it needs the past; the result is the same recall prompt (LIKE matching, ≤ `limit`
  clues, ≤ 1,800 chars, faded marker). The tool is offered per the `tools` option (`auto`: when the
  model calls tools). `recall: auto` instead injects the recall for the current user text before every
  call (the arm's earlier behaviour, kept for `clue-folding-session-fold` and `clue-folding-strict`).
- Tool-pair check (`tool_pair_check`, on): a fold range holding a turn with an unanswered tool call
  (a task's `tool_events` with `status: open`) is not folded ("this time no forgetting").
- Compaction framing: a fold is compaction/start → summary (the distilled clue) → replace (the checkpoint
  stands for the turns once the row committed) → compaction/end, the end reached on every path, failures
  included; no fold starts while a compaction is open, the host's included (its `on_compaction_start`
  without the `on_compaction_end` yet). The session log has each fold as `fold` records (tasks.logschema:
  start, then end on every path); the injection's `details.fold` sums it up (`compaction`: the clue id, `by`,
  `turns`, `tokens`, `phases`) or says why it was skipped.
- The host's compaction (the task's `compaction` event, runners): its summary replaces the dropped turns in
  the runner's history; the arm keeps that summary first in its view, passes on its checkpoints of turns
  within the replaced range after it (as the host passes an earlier summary's lines on: the seed's checkpoint
  goes the host's own compaction path), and (`host_compaction: clues`, default) distills the dropped turns
  it had not folded into one clue with its checkpoint line, in a fold framed as above once the host's
  compaction has ended: what the seed does with the turns it cuts. The seed itself says only that its folds
  skip while a host's compaction is open; `host_compaction: yield` is that narrowest reading: the host's
  dropped turns leave no clue. The host's compaction counts as the turn's one cut.

Deviations (also in arms/README.md): `fold_at_session_end` (off by default, as in the seed) folds a
session's remaining completed turns when it ends (not a sub-agent's under `clue_keys: scope`, whose clues
end with it); benchmark sessions are far shorter than 8,000 tokens, so without it the arm seldom folds at
all — the variant `clue-folding-session-fold` turns it on (with `recall: auto`) and reproduces the results
of the arm before it followed the seed. The measure counts history (including the turn's tool messages) and
user text, not the runner's system text. Clues carry no tags or keys (the design stores only distilled
tokens), so forget selectors match by query only.

Keys (`clue_keys`): as in the seed, each clue row carries the id of the session that folded it, in one table
that recall and forgets search whole (the seed puts partitioning by project or workspace on its roadmap), so
a sub-agent's clues outlive it like any other session's; recall lines name the session. `clue_keys: scope`
is the arm before it followed the seed (and the common ground of the other arms): main-agent clues
workspace-wide, a sub-agent's private to its session and deleted (`agent-disposed`) when it ends; the
variants `clue-folding-session-fold` and `clue-folding-strict` keep it."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from amnesia.tokens import count_tokens, has_cjk
from amnesia.tools import function_tool
from arms.arm_kit import OwnStoreArm, call_arm_tool, fit_block, memory_line, visible_to
from arms.arm_options import check_bool, check_choice, check_int, options_from
from arms.base import ArmContext, CompactionInfo, MemoryContext, SessionInfo, check_tool_mode
from arms.model_assist import ask_model
from arms.textnorm import STOPWORDS
from tasks.errors import ArmConfigError
from tasks.logschema import FoldRecord
from tasks.modelapi import Message
from tasks.spec import ForgetSpec, ToolEventSpec

_QUOTED = re.compile(
    r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|「([^」\n]{2,80})」|『([^』\n]{2,80})』|`([^`\n]{2,80})`"
)
_PATH = re.compile(
    r"(?:[A-Za-z]:)?[\w.-]*/[\w./-]+|\b[\w-]+\.(?:py|ts|js|sh|md|json|yaml|yml|toml|sql|db|txt)\b"
)
# An identifier is one token however its parts are joined: runs of ASCII letters, digits and `_` joined by
# single `-` or `.` (`QX-5519`, `cache-v7-amber`, `app.config`, `my_var`), never cut where such a character
# touches it (the ASCII-only classes let it sit against CJK text: 在cache-v7里). It is a seed token when it
# looks like a name rather than a word: joined parts, a digit, a camelCase hump or three capitals and more.
_NOT_AFTER_NAME = r"(?<![A-Za-z0-9_.\-/\\])"
_NOT_BEFORE_NAME = r"(?![A-Za-z0-9_/\\-]|\.[A-Za-z0-9_])"
_IDENTIFIER = re.compile(_NOT_AFTER_NAME + r"[A-Za-z0-9_]+(?:[-.][A-Za-z0-9_]+)*" + _NOT_BEFORE_NAME)
_NAME_SHAPE = re.compile(r"[-._]|\d|[a-z][A-Z]|^[A-Z]{3,}$")
_CJK_PHRASE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")
_CJK_FUNCTION_CHARS = re.compile(r"[的了是在和与我你他她它们这那吗呢吧啊]")
# A keyword is a plain word of 3 letters or more, never a piece of an identifier or a path (`qx-` of QX-5519).
_WORD = re.compile(_NOT_AFTER_NAME + r"[A-Za-z][A-Za-z']{2,}" + _NOT_BEFORE_NAME)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n")
MAX_LIMIT = 20
# One LIKE pattern against every clue column; `%` and `_` in the pattern are escaped with a backslash.
MATCHES_CLUE = "keywords LIKE ? ESCAPE '\\' OR seed_tokens LIKE ? ESCAPE '\\' OR summary LIKE ? ESCAPE '\\'"
FADED_MARKER = "… older clues have faded"

# Each clue row is keyed by the session that folded it (`session_id`, as the seed writes it); `agent` is kept
# only for `clue_keys: scope`, which derives the harness's scopes from it.
SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_clues (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent TEXT NOT NULL,
    keywords TEXT NOT NULL, seed_tokens TEXT NOT NULL, summary TEXT NOT NULL,
    turn_from INTEGER NOT NULL, turn_to INTEGER NOT NULL, created_at REAL NOT NULL
)
"""


@dataclass(frozen=True)
class Clue:
    keywords: tuple[str, ...]
    seed_tokens: tuple[str, ...]
    summary: str

    def as_text(self) -> str:
        keywords, seeds = ", ".join(self.keywords), ", ".join(self.seed_tokens)
        return f"keywords: {keywords}; seeds: {seeds}; summary: {self.summary}"


def distill(text: str, *, max_keywords: int = 12, max_seeds: int = 12) -> Clue:
    """Rule-based clue extraction (no model call): seed tokens, keywords and a one-sentence summary."""
    seeds: dict[str, None] = {}
    for match in _QUOTED.finditer(text):
        seeds.setdefault(next(g for g in match.groups() if g), None)
    for match in _PATH.finditer(text):
        token = match.group().strip(".,;:")
        if len(token) >= 2:
            seeds.setdefault(token, None)
    for match in _IDENTIFIER.finditer(text):
        token = match.group()
        if len(token) >= 2 and _NAME_SHAPE.search(token):
            seeds.setdefault(token, None)
    for match in _CJK_PHRASE.finditer(text):
        for phrase in _CJK_FUNCTION_CHARS.split(match.group()):
            if len(phrase) >= 2:
                seeds.setdefault(phrase[:8], None)
    words = Counter(w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS)
    keywords = tuple(word for word, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:max_keywords])
    first = next((s.strip() for s in _SENTENCE_END.split(text) if s.strip()), "")
    return Clue(keywords, tuple(list(seeds)[:max_seeds]), first[:100])


def clue_from_row(row: sqlite3.Row) -> Clue:
    def split(value: str) -> tuple[str, ...]:
        return tuple(part for part in value.split(", ") if part)

    return Clue(split(row["keywords"]), split(row["seed_tokens"]), row["summary"])


def like_escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass(frozen=True)
class ClueFoldingOptions:
    threshold_tokens: int = 8000
    forget_turns: int = 2
    keep_completed_turns: int = 4
    limit: int = 5
    max_prompt_chars: int = 1800
    auto_forget: bool = True
    fold_at_session_end: bool = False  # not in the seed: folds what is left when a session ends
    recall: str = "tool"  # tool (the model calls recall_from_clues) | auto (injected before every call)
    tool_pair_check: bool = True  # never fold a range holding an unanswered tool call
    distiller: str = "rules"  # rules | model
    tools: str = "auto"  # when recall_from_clues is offered (arms.base.TOOL_MODES)
    # clues: the turns a host compaction drops (those not folded yet) become a clue; yield: they go unclued
    host_compaction: str = "clues"
    # session (the seed): every clue is keyed by the session that folded it and recall sees the whole table;
    # scope (the arm before it followed the seed): main-agent clues workspace-wide, a sub-agent's private
    # to its session and deleted when it ends
    clue_keys: str = "session"

    def __post_init__(self) -> None:
        arm = "clue-folding"
        check_int(arm, "threshold_tokens", self.threshold_tokens)
        check_int(arm, "forget_turns", self.forget_turns, minimum=1)
        check_int(arm, "keep_completed_turns", self.keep_completed_turns)
        if not 1 <= check_int(arm, "limit", self.limit, minimum=1) <= MAX_LIMIT:
            raise ArmConfigError(f"{arm}: option limit must be at most {MAX_LIMIT}, got {self.limit!r}")
        check_int(arm, "max_prompt_chars", self.max_prompt_chars, minimum=1)
        check_bool(arm, "auto_forget", self.auto_forget)
        check_bool(arm, "fold_at_session_end", self.fold_at_session_end)
        check_choice(arm, "recall", self.recall, ("tool", "auto"))
        check_bool(arm, "tool_pair_check", self.tool_pair_check)
        check_choice(arm, "distiller", self.distiller, ("rules", "model"))
        check_tool_mode(arm, self.tools)
        check_choice(arm, "clue_keys", self.clue_keys, ("session", "scope"))
        check_choice(arm, "host_compaction", self.host_compaction, ("clues", "yield"))


@dataclass
class FoldState:
    info: SessionInfo
    turns: list[tuple[str, str]] = field(default_factory=list)  # completed turns: (text, answer)
    unbalanced: set[int] = field(default_factory=set)  # completed turns holding an unanswered tool call
    events: list[ToolEventSpec] = field(default_factory=list)  # the current turn's tool calls
    # Completed turns no longer verbatim in the arm's view, from the start of the session: folded by the arm
    # or dropped by the host's compactions.
    folded: int = 0
    host_dropped: int = 0  # of those, the turns the host's compactions took out of the runner's history
    # The checkpoint lines of the session's folds, oldest first, each standing for its fold's turns in the
    # arm's view; a host's compaction that covers them passes them on (on_compaction_end).
    checkpoints: list[Message] = field(default_factory=list)
    # The compaction started and not yet ended ("host", or a fold's clue id while it runs): while one is open,
    # no fold starts (the seed's "no unclosed compaction/start" check).
    open_compaction: str | None = None
    folded_this_turn: bool = False  # the seed cuts at most once per turn
    host_fold: dict[str, Any] | None = (
        None  # the fold at the host's compaction, logged with the next injection
    )


class ClueFoldingArm(OwnStoreArm):
    name = "clue-folding"
    SEED = "003"
    OPTIONS = ClueFoldingOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config = options_from(ClueFoldingOptions, "clue-folding", options)
        self.tool_mode = self.config.tools
        self.state: FoldState | None = None
        self.db: sqlite3.Connection | None = None
        self._next_id = 1

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "base": "clue-folding", "seed": self.SEED, **asdict(self.config)}

    def start_task(self, ctx: ArmContext) -> None:
        super().start_task(ctx)
        path = Path(ctx.workdir) / "memory_clues.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            stale.unlink(missing_ok=True)  # a resumed pair starts from scratch
        self.db = sqlite3.connect(path)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(SCHEMA)
        self.db.commit()

    def end_task(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def start_session(self, session: SessionInfo) -> None:
        self.state = FoldState(info=session)

    def forget(self, spec: ForgetSpec) -> None:
        if not spec.query:
            return
        pattern = f"%{like_escape(spec.query)}%"
        rows = (
            self._db()
            .execute(
                f"SELECT * FROM memory_clues WHERE {MATCHES_CLUE} ORDER BY id",
                (pattern, pattern, pattern),
            )
            .fetchall()
        )
        self._delete([row for row in rows if self._sees(row)], "manual")

    def observe_user_turn(self, text: str) -> None:
        self._state().events = []

    def observe_tool_event(self, event: ToolEventSpec) -> None:
        self._state().events.append(event)

    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext:
        state = self._state()
        report = state.host_fold
        state.host_fold = None
        if self.config.auto_forget and not state.folded_this_turn:
            measured = sum(count_tokens(str(m.get("content") or "")) for m in self._view(history))
            if measured + count_tokens(user_text) >= self.config.threshold_tokens:
                report = self._fold_oldest()
        block, recalled = "", []
        if self.config.recall == "auto":
            block, recalled, _ = self._recall(user_text, self.config.limit, self.context().budget_tokens)
        details: dict[str, Any] = {
            "folded_turns": state.folded,
            "folded_now": report.get("compaction") if report else None,
        }
        if report:
            details["fold"] = report
        return MemoryContext(
            block=block,
            tokens=count_tokens(block),
            items=[{"id": cid, "tokens": tokens} for cid, tokens in recalled],
            # without a checkpoint the view is the runner's history (see on_compaction_end)
            history=self._view(history) if state.checkpoints else None,
            details=details,
        )

    def observe_answer(self, user_text: str, answer: str, context: MemoryContext) -> None:
        state = self._state()
        if any(event.status == "open" for event in state.events):
            state.unbalanced.add(len(state.turns))
        tool_lines = [
            f"{event.name} {event.arguments}".strip() + (f" -> {event.output}" if event.output else "")
            for event in state.events
        ]
        state.turns.append(("\n".join([user_text, *tool_lines]), answer))
        state.events = []
        state.folded_this_turn = False

    # --- the host's compaction (runners: before a turn, the older turns become one summary message)
    def on_compaction_start(self, info: CompactionInfo) -> None:
        """The host's compaction/start: until its end no fold may start."""
        self._state().open_compaction = "host"

    def on_compaction_end(self, info: CompactionInfo) -> None:
        """The host's compaction/end. Its summary now stands for the dropped turns. The arm's checkpoints of
        folds within them were in the replaced range and are passed on after it: the seed puts its checkpoint
        in place through the host's own compaction path (the same surface replace, framed as a compaction), so
        a later compaction treats it as it treats its own earlier summary, whose lines our host passes on
        (runners/compaction.py). With `host_compaction: clues` the dropped
        turns the arm had not folded become a clue, as the seed does with the turns it cuts, in a fold of its
        own framed like any other (the host's compaction is closed by now). The kept turns are counted by
        their user messages: this arm adds no messages of its own to a turn."""
        state = self._state()
        state.open_compaction = None
        state.folded_this_turn = True  # the host's cut is this turn's one cut
        dropped = len(state.turns) - sum(1 for m in info.kept if m.get("role") == "user")
        state.host_dropped = dropped
        if state.folded >= dropped:
            return
        if self.config.auto_forget and self.config.host_compaction == "clues":
            # The host has already cut the range, so the tool-pair check (which guards the arm's own cut)
            # has nothing to protect here.
            state.host_fold = self._fold(dropped - state.folded, by="host", check_pairs=False)
        state.folded = dropped  # gone from the conversation, clued or not

    # --- the model tool (seed Phase 1)
    def model_tools(self) -> list[dict[str, Any]]:
        """`recall_from_clues`, offered when the arm recalls through the tool (`recall: tool`)."""
        return [RECALL_TOOL] if self.config.recall == "tool" else []

    def dispatch_tool(self, name: str, arguments: str) -> str:
        return call_arm_tool(self.model_tools(), {"recall_from_clues": self._recall_tool}, name, arguments)

    def _recall_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        limit = min(args.get("limit", self.config.limit), MAX_LIMIT)
        prompt, recalled, faded = self._recall(args["query"], limit, None)
        return {
            "count": len(recalled),
            "clues": [cid for cid, _ in recalled],
            "prompt": prompt,
            "faded": faded,
        }

    def end_session(self, session: SessionInfo) -> None:
        state = self._state()
        if session.agent == "sub" and self.config.clue_keys == "scope":
            rows = (
                self._db()
                .execute("SELECT * FROM memory_clues WHERE session_id = ? ORDER BY id", (session.session_id,))
                .fetchall()
            )
            self._delete(rows, "agent-disposed")
        elif self.config.fold_at_session_end:
            while state.folded < len(state.turns):
                count = min(self.config.forget_turns, len(state.turns) - state.folded)
                if "skipped" in self._fold(count, by="session-end"):
                    break
        self.state = None

    # --- folding
    def _view(self, history: list[Message]) -> list[Message]:
        """What the model sees instead of the runner's history: the host's summary (after a host compaction),
        the checkpoint lines, then the turns not folded, verbatim."""
        state = self._state()
        summary, turns = split_summary(history, len(state.turns) - state.host_dropped)
        return [*summary, *state.checkpoints, *unfolded(turns, state.folded - state.host_dropped)]

    def _fold_oldest(self) -> dict[str, Any] | None:
        state = self._state()
        if len(state.turns) - state.folded < self.config.forget_turns + self.config.keep_completed_turns:
            return None  # the recent-turns guard
        return self._fold(self.config.forget_turns, by="threshold")

    def _fold(self, count: int, *, by: str, check_pairs: bool = True) -> dict[str, Any]:
        """Fold the next `count` unfolded turns into one clue row, framed as the seed frames it:
        compaction/start, the summary (the distilled clue), the replacement (the checkpoint line stands for
        the turns once the row has committed), compaction/end. Returns what it did for the injection's
        details: `{"compaction": id, ...}`, or `{"skipped": reason, ...}` with nothing changed when a
        compaction is still open, the range holds an unanswered tool call or the store fails ("this time no
        forgetting"). `by`: threshold | host | session-end."""
        state = self._state()
        start = state.folded
        span = state.turns[start : start + count]
        turns = list(range(start, start + len(span)))
        if state.open_compaction is not None:
            return {"skipped": "unclosed compaction", "by": by, "turns": turns}
        if check_pairs and self.config.tool_pair_check and state.unbalanced & set(turns):
            # the range would cut a tool call from its (missing) result
            return {"skipped": "unanswered tool call", "by": by, "turns": turns}
        text = "\n".join(f"{user}\n{answer}" for user, answer in span)
        clue_id = f"k-{self._next_id:04d}"
        tokens = count_tokens(text)
        opened = FoldRecord(
            session_index=state.info.index,
            turn_index=len(state.turns),
            trigger=by,
            phase="start",
            fold_id=clue_id,
            turns=turns,
            tokens=tokens,
        )
        # what the end record says unless the fold gets through (an error the arm does not expect included)
        ended = dataclasses.replace(opened, phase="end", skipped="the fold did not complete")
        state.open_compaction = clue_id  # compaction/start
        self.context().log(opened)
        try:
            try:
                clue = self._distill(text)  # the summary
                with self._db():  # one transaction: committed or rolled back as a whole
                    self._db().execute(
                        "INSERT INTO memory_clues VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            clue_id,
                            state.info.session_id,
                            state.info.agent,
                            ", ".join(clue.keywords),
                            ", ".join(clue.seed_tokens),
                            clue.summary,
                            start,
                            start + len(span) - 1,
                            self.now(),
                        ),
                    )
            except (sqlite3.Error, ValueError) as error:
                ended.skipped = f"clue not stored: {error}"
                return {"skipped": ended.skipped, "by": by, "turns": turns}
            self._next_id += 1
            keyed = self.config.clue_keys == "session"
            private = not keyed and state.info.agent == "sub"
            self.memlog.write(
                clue_id,
                clue.as_text(),
                kind="clue",
                scope="session" if private else "workspace",
                owner_id=state.info.session_id if keyed or private else None,
                source="user",
            )
            state.folded += len(span)
            checkpoint = checkpoint_text(len(span), clue, has_cjk(text))  # the replacement
            state.checkpoints.append({"role": "user", "content": checkpoint})
            state.folded_this_turn = True
            ended.summary, ended.skipped = checkpoint, None
        finally:
            state.open_compaction = None  # compaction/end, on every path: no half transaction stays open
            self.context().log(ended)
        return {
            "compaction": clue_id,
            "by": by,
            "turns": turns,
            "tokens": tokens,
            "phases": ["start", "summary", "replace", "end"],
        }

    def _distill(self, text: str) -> Clue:
        if self.config.distiller == "rules":
            return distill(text)
        prompt = (
            "Distill this conversation into recall clues. Answer exactly two lines:\n"
            "keywords: <comma-separated names, paths, terms>\nsummary: <one sentence>\n\n" + text
        )
        reply = ask_model(
            self.context(), "clue-folding:distill", prompt, call_seed=self.context().seed + self._next_id
        )
        fields = dict(
            (name.strip().lower(), value.strip())
            for name, sep, value in (line.partition(":") for line in reply.splitlines())
            if sep
        )
        keywords = tuple(k.strip() for k in fields.get("keywords", "").split(",") if k.strip())
        if not keywords:
            raise ValueError("clue-folding: the model returned no keywords")
        return Clue(keywords, distill(text).seed_tokens, fields.get("summary", "")[:100])

    # --- recall
    def _recall(
        self, user_text: str, limit: int, budget_tokens: int | None
    ) -> tuple[str, list[tuple[str, int]], bool]:
        """(recall prompt, [(clue id, tokens)], whether older clues faded) for the clues matching the
        text's distilled terms; `budget_tokens` None = the character cap only (the tool's answer)."""
        query = distill(user_text)
        terms = [t for t in dict.fromkeys((*query.keywords, *query.seed_tokens)) if t]
        if not terms:
            return "", [], False
        rows = self._db().execute("SELECT * FROM memory_clues").fetchall()
        visible = {row["id"]: row for row in rows if self._sees(row)}
        matches: Counter[str] = Counter()
        for term in terms:
            pattern = f"%{like_escape(term)}%"
            for (clue_id,) in self._db().execute(
                f"SELECT id FROM memory_clues WHERE {MATCHES_CLUE}",
                (pattern, pattern, pattern),
            ):
                if clue_id in visible:
                    matches[clue_id] += 1
        ranked = sorted(matches, key=lambda cid: (-matches[cid], -visible[cid]["created_at"], cid))
        ranked = ranked[:limit]
        now = self.now()
        lines = {cid: self._line(visible[cid], now) for cid in ranked}
        within_chars: list[str] = []
        for cid in ranked:
            if sum(len(lines[c]) + 1 for c in [*within_chars, cid]) > self.config.max_prompt_chars:
                break
            within_chars.append(cid)
        cut = len(within_chars) < len(ranked)

        def render(kept: list[str]) -> str:
            faded = [FADED_MARKER] if cut or len(kept) < len(within_chars) else []
            return "\n".join([f"RECALLED FROM CLUES ({len(kept)} clues)", *(lines[c] for c in kept), *faded])

        if budget_tokens is None:
            block, kept = (render(within_chars), within_chars) if within_chars else ("", [])
        else:
            block, kept = fit_block(render, within_chars, budget_tokens)
        return block, [(cid, count_tokens(lines[cid])) for cid in kept], FADED_MARKER in block

    # --- helpers
    def _sees(self, row: sqlite3.Row) -> bool:
        """Whether the current session's recall and forgets see this clue. The seed keeps one table with the
        folding session's id on each row and recalls across all of it (partitioning by project or workspace
        is on its roadmap); `clue_keys: scope` applies the harness's agent scopes instead."""
        if self.config.clue_keys == "session":
            return True
        scope = "session" if row["agent"] == "sub" else "workspace"
        return visible_to(scope, row["session_id"], self._state().info)

    def _line(self, row: sqlite3.Row, now: float) -> str:
        """The clue's recall line; under the seed's keying it names the session that folded it."""
        notes = (f"session {row['session_id']}",) if self.config.clue_keys == "session" else ()
        return memory_line(
            row["id"], "clue", now - row["created_at"], clue_from_row(row).as_text(), notes=notes
        )

    def _delete(self, rows: list[sqlite3.Row], reason: str) -> None:
        with self._db():
            for row in rows:
                self._db().execute("DELETE FROM memory_clues WHERE id = ?", (row["id"],))
        for row in rows:
            self.memlog.forget(row["id"], clue_from_row(row).as_text(), reason=reason)

    def _state(self) -> FoldState:
        if self.state is None:
            raise RuntimeError("clue-folding: called outside a session")
        return self.state

    def _db(self) -> sqlite3.Connection:
        if self.db is None:
            raise RuntimeError("clue-folding: start_task was not called")
        return self.db


RECALL_TOOL = function_tool(
    "recall_from_clues",
    "Recall earlier, folded-away conversation from its clues (names, paths, terms, a one-line summary). "
    "Call it when the user refers to something you no longer see.",
    {
        "query": {"type": "string", "minLength": 1, "description": "What to recall, in the user's words."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": "How many clues at most (default 5).",
        },
    },
    ("query",),
)


def split_summary(history: list[Message], turns_held: int) -> tuple[list[Message], list[Message]]:
    """(the host's summary messages, the turns' messages) of the runner's history, which holds the session's
    last `turns_held` completed turns: whatever precedes the first of them is what a host compaction put
    there (nothing before one)."""
    starts = [i for i, m in enumerate(history) if m.get("role") == "user"]
    if turns_held > len(starts):
        raise RuntimeError(f"clue-folding: the history holds {len(starts)} user turns, expected {turns_held}")
    first = starts[len(starts) - turns_held] if turns_held else len(history)
    return history[:first], history[first:]


def unfolded(history: list[Message], folded: int) -> list[Message]:
    """The history after its first `folded` turns (a turn starts at its user message; tool messages
    belong to the turn they follow)."""
    starts = [i for i, m in enumerate(history) if m.get("role") == "user"]
    return history[starts[folded] :] if folded < len(starts) else []


def checkpoint_text(turns: int, clue: Clue, chinese: bool) -> str:
    """The one line that replaces the folded turns in the prompt."""
    seeds = list(dict.fromkeys((*clue.seed_tokens, *clue.keywords)))[:8]
    if chinese:
        return (
            f"【🧠 记忆已折叠】为了腾出空间，我已淡忘更早的 {turns} 轮对话，留下的线索：{'、'.join(seeds)}。"
            "需要时我会用 recall_from_clues 自己回忆。"
        )
    return (
        f"[memory folded] To free space I let go of the {turns} earlier turn(s); "
        f"clues left: {', '.join(seeds)}. "
        "I can recall them from the clues when needed."
    )
