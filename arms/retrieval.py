"""`retrieval`: dsh-memory (seed 002) — signal capture, one write gate, BM25 retrieval, a snapshot
frozen at session start, usage-based eviction and a janitor.

What it reproduces:
- Signal capture from user turns at zero model cost: explicit remember phrases (记住 / 以后都 / 帮我记
  / remember that / from now on ...) and corrections (不对 / 其实是 / actually / I meant ...).
  Candidates accumulate and are drained (extracted) by a periodic review (every `review_every`
  candidates, checked at the end of a turn) and by the dispose flush at session end; each drain costs 1
  from the per-session `extraction_budget` (20, 0 = unlimited).
- Extraction is rule-based by default (the sentence that carried the signal, trigger phrase stripped,
  flattened to one line); it skips what is already recorded: turns whose information was written
  explicitly (a remember spec, the seed's tool path) and near-duplicates of existing entries.
  `extractor: model` sends the candidates through `ctx.model` with a one-line-per-memory protocol
  instead (`category: content`, the seed's `scope: content` with the scope fixed by the session).
- Every write (remember specs, model tools, extraction, curation alike) passes one gate: the engine's
  credential rules (content, key, tags) and injection patterns (arms/write_gate.py; rejected,
  `memory_refused`); the scan runs again when an entry is read into a prompt (a `[BLOCKED: rule]`
  placeholder). With `confirm_before_write` every write becomes a pending proposal that is never injected
  nor searched.
- Retrieval: Okapi BM25 (arms/bm25.py) over content + category, structural filters (scope visibility)
  first; ranking relevance ↓, pinned ↓, recency ↓.
- Injection: a snapshot frozen at session start (`snapshot_chars` 5000 and `snapshot_entries` 20 caps
  plus the token budget; a trailing `≈N tokens` line). Its project-notes section renders convention,
  preference, failure, procedure and tool-quirk entries whole (`project_notes`, on); an entry rendered
  there is left out of the memory index, so nothing is shown twice. The memory index has one line per
  other entry, `scope/category · id · summary` (`index_lines: summary`; `whole` shows the whole entry),
  most specific scope first, then pinned, then most recently used; the overflow folds into
  `+ scope/category ×N` count lines; the full text comes from `memory_get`. Optional per-step recall
  (`recall`, on by default) of the BM25 top hits for the current user text in a `<recalled-memory>`
  fence, sent as its own user message right before the user turn and kept in the conversation
  (`recall_placement: message`; `system` appends it to the system block, as the arm first did); an entry
  already shown this session is not recalled again. Entries contradicted by a newer correction carry
  "⚠ contradicted by a newer correction". The snapshot is rebuilt at a host compaction, after the
  compaction flush drained what the dropped turns carried.
- The curator: every `curator_every` (20) sessions, at most `curator_batch` (5) entries of at least
  `curator_min_chars` (400) characters, longest first, are rewritten into one line: by `ctx.model`
  (`curator: model`, a `model_call` with purpose `retrieval:curate`) or by a deterministic stand-in
  (`rules`: the leading sentences that fit in `CURATED_CHARS`); `auto` uses the model unless it is a
  scripted one. A curation costs 1 from the session's extraction budget, as in the seed.
- Usage-based eviction over a soft cap (`entries_cap` 500): pinned immune, lowest access count then
  oldest recall first; when every entry is exempt the cap is exceeded rather than deleting healthy
  data. A janitor at session creation retires unpinned entries unused for `janitor_idle` (90d; null =
  off).

- The third signal: a tool (a task's `tool_events`; the signature is the tool's name) that failed
  `failure_streak` (2; 0 = off) times in a row and then succeeded is a verified workaround: the
  successful call and its output become a `tool-quirk` candidate, drained like the others.
- A per-change audit (`audit`, the last 200): every successful change with its operation, source
  (tool = the task's remember/forget specs and the model tools; review; flush; ui; janitor), a
  monotonic sequence number and a content preview.
- The pending queue's adoption step: a repeated proposal counts hits instead of queueing twice;
  `adopt_pending(id, text=None)` (optionally edited) and `reject_pending(id)` are the human's decision
  (source ui). No human answers in a replay, so proposals wait for ever unless `adopt_after_hits` (0 =
  never, the seed) stands in for a reviewer who adopts a proposal seen that many times.
- "The current request wins": every injected surface (the snapshot and the recall fence) states that
  the current user request, repository files and tool output take precedence over memory
  (`precedence_note`, on).
- Nine model tools (per the `tools` option; `auto`: when the model calls tools), derived from the seed's
  operations (arms/README.md maps each): memory_write, memory_update, memory_delete, memory_list,
  memory_search, memory_get, memory_pin, memory_audit and memory_pending. Tool writes pass the same gate
  (and become proposals under `confirm_before_write`; an update proposal never touches the entry before it
  is adopted); a sub-agent's tools see and change only what it may see.

Deviations (also in arms/README.md): an entry's summary is the model's (`memory_write`'s `summary`) or its
text cut at `summary_chars`; the scan uses the engine's credential and injection rules, not the seed's 37
(which the seed does not list); access counts rise on recall only (an index line is not a use)."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

from amnesia.tokens import count_tokens
from amnesia.tools import function_tool
from arms.arm_kit import (
    OwnStoreArm,
    ToolRefused,
    call_arm_tool,
    fit_block,
    forget_selects,
    memory_line,
    scope_for,
    visible_to,
)
from arms.arm_options import check_bool, check_choice, check_duration, check_int, check_number, options_from
from arms.base import CompactionInfo, MemoryContext, SessionInfo, check_tool_mode
from arms.bm25 import BM25Index
from arms.model_assist import ask_model
from arms.textnorm import content_terms, jaccard
from arms.write_gate import scan_write, shown
from tasks.modelapi import Message
from tasks.spec import ForgetSpec, RememberSpec, ToolEventSpec

REMEMBER_SIGNAL = re.compile(
    r"记住|以后都|帮我记|别忘了|\bremember(?: that)?\b|\bfrom now on\b|\bdon'?t forget\b|\bkeep in mind\b",
    re.IGNORECASE,
)
CORRECTION_SIGNAL = re.compile(r"不对|其实是|更正|\bactually\b|\bI meant\b|\bcorrection\b", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
CONTRADICTED_NOTE = "⚠ contradicted by a newer correction"
PRECEDENCE_NOTE = (
    "The current user request, repository files and tool output always take precedence over memory; "
    "on conflict, trust the present."
)
AUDIT_KEEP = 200  # the seed's rolling audit length
AUDIT_PREVIEW_CHARS = 60
# Most specific first (the seed's project → user → global): a sub-agent's session scope, then the workspace.
_SCOPE_TIER = {"session": 0, "workspace": 1}
# The categories the seed's memory-notes plugin renders into the project-notes section.
CONVENTION_CATEGORIES = ("convention", "preference")
PITFALL_CATEGORIES = ("failure", "procedure", "tool-quirk")
NOTE_CATEGORIES = CONVENTION_CATEGORIES + PITFALL_CATEGORIES
CURATED_CHARS = 200  # the curator's deterministic stand-in keeps the leading sentences that fit in this
_ELLIPSIS = "…"


@dataclass(frozen=True)
class RetrievalOptions:
    extraction_budget: int = 20  # drains per session; 0 = unlimited
    review_every: int = 5  # periodic review: drain once this many candidates are waiting
    extractor: str = "rules"  # rules | model
    confirm_before_write: bool = False
    snapshot_chars: int = 5000
    snapshot_entries: int = 20
    recall: bool = True
    recall_top_k: int = 3
    entries_cap: int = 500
    janitor_idle: Any = "90d"  # duration or None (off)
    duplicate_similarity: float = 0.6  # extraction skips candidates this close to an existing entry
    correction_similarity: float = 0.3  # a correction contradicts visible entries at least this close
    failure_streak: int = 2  # failures of one tool before a success make a workaround; 0 = off
    adopt_after_hits: int = 0  # stand-in reviewer: adopt a proposal seen this often; 0 = never (seed)
    precedence_note: bool = True  # every injected surface says the present wins over memory
    tools: str = "auto"  # when the nine model tools are offered (arms.base.TOOL_MODES)
    index_lines: str = "summary"  # summary: `scope/category · id · summary` | whole: the whole entry
    summary_chars: int = 80  # an entry without a written summary is cut to this many characters
    recall_placement: str = "message"  # message: its own user message | system: appended to the block
    project_notes: bool = True  # convention/preference/pitfall entries render whole in a notes section
    curator_every: int = 20  # sessions between curator runs; 0 = off
    curator_min_chars: int = 400  # entries this long or longer are rewritten into one line
    curator_batch: int = 5  # at most this many per run
    curator: str = "auto"  # model | rules (the deterministic stand-in) | auto (rules for a scripted model)
    compaction_flush: bool = True  # drain the dropped turns' signals at compaction end, rebuild the snapshot

    def __post_init__(self) -> None:
        arm = "retrieval"
        check_int(arm, "extraction_budget", self.extraction_budget)
        check_int(arm, "review_every", self.review_every, minimum=1)
        check_choice(arm, "extractor", self.extractor, ("rules", "model"))
        check_bool(arm, "confirm_before_write", self.confirm_before_write)
        check_int(arm, "snapshot_chars", self.snapshot_chars)
        check_int(arm, "snapshot_entries", self.snapshot_entries)
        check_bool(arm, "recall", self.recall)
        check_int(arm, "recall_top_k", self.recall_top_k, minimum=1)
        check_int(arm, "entries_cap", self.entries_cap, minimum=1)
        check_duration(arm, "janitor_idle", self.janitor_idle)
        check_number(arm, "duplicate_similarity", self.duplicate_similarity, maximum=1.0)
        check_number(arm, "correction_similarity", self.correction_similarity, maximum=1.0)
        check_int(arm, "failure_streak", self.failure_streak)
        check_int(arm, "adopt_after_hits", self.adopt_after_hits)
        check_bool(arm, "precedence_note", self.precedence_note)
        check_tool_mode(arm, self.tools)
        check_choice(arm, "index_lines", self.index_lines, ("summary", "whole"))
        check_int(arm, "summary_chars", self.summary_chars, minimum=8)
        check_choice(arm, "recall_placement", self.recall_placement, ("message", "system"))
        check_bool(arm, "project_notes", self.project_notes)
        check_int(arm, "curator_every", self.curator_every)
        check_int(arm, "curator_min_chars", self.curator_min_chars, minimum=1)
        check_int(arm, "curator_batch", self.curator_batch, minimum=1)
        check_choice(arm, "curator", self.curator, ("auto", "model", "rules"))
        check_bool(arm, "compaction_flush", self.compaction_flush)


@dataclass
class Entry:
    id: str
    content: str
    category: str
    scope: str
    owner_id: str | None
    source: str
    pinned: bool
    tags: tuple[str, ...]
    key: str | None
    created_at: float
    access_count: int = 0
    last_recalled_at: float | None = None
    contradicted_by: str | None = None
    hits: int = 1  # a pending proposal: how often it was proposed (seed: repeated proposals rise)
    correction: bool = False  # written from a correction (contradicts older entries once adopted)
    summary: str | None = None  # the index line's text when the writer gave one (else cut from content)
    updates: str | None = None  # a pending proposal that edits this entry id once adopted

    @property
    def last_used(self) -> float:
        return self.created_at if self.last_recalled_at is None else self.last_recalled_at

    @property
    def label(self) -> str:
        return f"{self.scope}/{self.category}"


@dataclass(frozen=True)
class AuditEntry:
    """One successful change of the store (seed: who wrote what, and when, is always answerable)."""

    seq: int  # monotonic over the task
    op: str  # write | update | delete | adopt | reject | pin | unpin | curate
    source: str  # tool | review | flush | ui | janitor
    item_id: str
    scope: str  # the entry's scope and owner: a sub-agent's audit tool sees only its own entries
    owner_id: str | None
    at: float  # simulated seconds
    preview: str  # the first AUDIT_PREVIEW_CHARS characters of the content


@dataclass
class Candidate:
    turn: int
    text: str
    category: str
    correction: bool


@dataclass
class SessionState:
    info: SessionInfo
    turn: int = -1
    turn_is_correction: bool = False
    explicit_turns: set[int] = field(default_factory=set)
    written_this_turn: set[str] = field(default_factory=set)  # the step's recall ran before these writes
    candidates: list[Candidate] = field(default_factory=list)
    drains: int = 0
    failures: dict[str, int] = field(default_factory=dict)  # tool name -> failures in a row
    turn_texts: list[str] = field(default_factory=list)  # the session's user turns (the compaction flush)
    snapshot_block: str = ""
    snapshot_ids: list[tuple[str, int]] = field(default_factory=list)  # (entry id, tokens of its line)
    # recall messages kept in the conversation: message text -> the entry ids it showed (not recalled again)
    recall_messages: dict[str, list[str]] = field(default_factory=dict)


def signal_candidate(text: str, turn: int) -> Candidate | None:
    """The captured fragment of a user turn: the sentences carrying a remember or correction phrase, trigger
    stripped and flattened to one line (so a forged line cannot break the one-line-per-memory protocol)."""
    remember = REMEMBER_SIGNAL.search(text)
    correction = CORRECTION_SIGNAL.search(text)
    if remember is None and correction is None:
        return None
    pattern = REMEMBER_SIGNAL if remember else CORRECTION_SIGNAL
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    carrying = [s for s in sentences if pattern.search(s)] or [text]
    fragment = " ".join(pattern.sub("", " ".join(carrying), count=1).split()).lstrip(":：,，-— ")
    if not fragment:
        return None
    category = (
        "correction"
        if correction
        else "preference"
        if re.search(r"以后都|from now on", text, re.I)
        else "note"
    )
    return Candidate(turn=turn, text=fragment[:300], category=category, correction=correction is not None)


def _with_estimate(text: str) -> str:
    """The snapshot's last line: its own cost, `≈N tokens` (the seed keeps injection cost visible)."""
    return f"{text}\n≈{count_tokens(text)} tokens"


def summarize(text: str, limit: int) -> str:
    """The text on one line, cut to `limit` characters at a word boundary (a CJK text anywhere) with "…"."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut and flat[limit - 1] != " ":
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:，；：") + _ELLIPSIS


def one_line_stand_in(text: str) -> str:
    """The curator's deterministic stand-in for a model's one-line rewrite: the leading sentences that fit
    in CURATED_CHARS (the first one cut at a word boundary if it alone is longer), on one line."""
    kept = ""
    for sentence in (s.strip() for s in _SENTENCE.findall(" ".join(text.split()))):
        joined = f"{kept} {sentence}".strip()
        if len(joined) > CURATED_CHARS:
            break
        kept = joined
    return kept or summarize(text, CURATED_CHARS)


class RetrievalArm(OwnStoreArm):
    name = "retrieval"
    SEED = "002"
    OPTIONS = RetrievalOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config = options_from(RetrievalOptions, "retrieval", options)
        self.tool_mode = self.config.tools
        self.janitor_idle = check_duration("retrieval", "janitor_idle", self.config.janitor_idle)
        self.entries: dict[str, Entry] = {}
        self.pending: list[Entry] = []
        self.audit: deque[AuditEntry] = deque(maxlen=AUDIT_KEEP)
        self._audit_seq = 0
        self.index = BM25Index()
        self.session: SessionState | None = None
        self.sessions_started = 0
        self._next_id = 1

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "base": "retrieval", "seed": self.SEED, "options": asdict(self.config)}

    # --- lifecycle
    def start_session(self, session: SessionInfo) -> None:
        self.session = SessionState(info=session)
        self.sessions_started += 1
        self._janitor()
        every = self.config.curator_every
        if every and self.sessions_started % every == 0:
            self._curate()
        self._freeze_snapshot()

    def observe_user_turn(self, text: str) -> None:
        state = self._state()
        state.turn += 1
        state.turn_texts.append(text)
        state.written_this_turn.clear()
        candidate = signal_candidate(text, state.turn)
        state.turn_is_correction = candidate is not None and candidate.correction
        if candidate is not None:
            state.candidates.append(candidate)

    def observe_tool_event(self, event: ToolEventSpec) -> None:
        """The third signal: a tool that failed `failure_streak` times in a row, then succeeded."""
        streak = self.config.failure_streak
        if not streak or event.status == "open":
            return
        state = self._state()
        if event.status == "error":
            state.failures[event.name] = state.failures.get(event.name, 0) + 1
            return
        failed = state.failures.pop(event.name, 0)
        if failed >= streak:
            call = " ".join(f"{event.name} {event.arguments}".split())
            text = f"{call} worked after {failed} failures: {' '.join(event.output.split())}"
            state.candidates.append(Candidate(state.turn, text[:300], "tool-quirk", correction=False))

    def remember(self, spec: RememberSpec) -> None:
        state = self._state()
        state.explicit_turns.add(state.turn)
        scope, owner = scope_for(spec, state.info)
        self._write(
            spec.content,
            category=spec.kind,
            scope=scope,
            owner_id=owner,
            source=spec.source,
            pinned=spec.pin and spec.source != "auto",  # untrusted text never promotes itself
            tags=spec.tags,
            key=spec.key,
            correction=state.turn_is_correction,
            origin="tool",
        )

    def forget(self, spec: ForgetSpec) -> None:
        state = self._state()
        for entry in list(self.entries.values()):
            if visible_to(entry.scope, entry.owner_id, state.info) and forget_selects(
                spec, content=entry.content, tags=entry.tags, key=entry.key
            ):
                self._delete(entry, "manual", origin="tool")
        self.pending = [
            p for p in self.pending if not forget_selects(spec, content=p.content, tags=p.tags, key=p.key)
        ]

    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext:
        state = self._state()
        budget = self.context().budget_tokens
        block = state.snapshot_block
        items = [{"id": i, "tokens": tokens, "via": "snapshot"} for i, tokens in state.snapshot_ids]
        recalled: list[Entry] = []
        messages: list[Message] = []
        if self.config.recall:
            recall_budget = budget - (count_tokens(block) + 2 if block else 0)
            already = {i for ids in state.recall_messages.values() for i in ids}
            shown_ids = {item_id for item_id, _ in state.snapshot_ids} | state.written_this_turn | already
            fence, recalled = self._recall_fence(user_text, shown_ids, recall_budget)
            if fence and self.config.recall_placement == "message":
                messages.append({"role": "user", "content": fence})
                state.recall_messages[fence] = [e.id for e in recalled]
            elif fence:
                block = f"{block}\n\n{fence}" if block else fence
        for entry in recalled:
            self._use(entry)
            items.append({"id": entry.id, "tokens": count_tokens(self._line(entry)), "via": "recall"})
        return MemoryContext(
            block=block,
            tokens=count_tokens(block) + sum(count_tokens(m["content"]) for m in messages),
            items=items,
            details={"snapshot_entries": len(state.snapshot_ids), "recalled": [e.id for e in recalled]},
            messages=messages,
        )

    def observe_answer(self, user_text: str, answer: str, context: MemoryContext) -> None:
        state = self._state()
        if len(state.candidates) >= self.config.review_every:
            self._drain("review")

    def on_compaction_end(self, info: CompactionInfo) -> None:
        """The seed's compaction/end flush: the signals of the turns the compaction hid are extracted, and the
        snapshot (frozen for the prefix cache, whose prefix a compaction rebuilds anyway) is frozen again, so
        what was learned mid-session joins it. Entries still shown by a recall message that survived the
        compaction stay out of it (never shown twice)."""
        if self.session is None:
            return
        state = self._state()
        for message in info.dropped:  # a dropped recall message no longer shows its entries
            state.recall_messages.pop(str(message.get("content") or ""), None)
        if not self.config.compaction_flush:
            return
        unmatched = list(enumerate(state.turn_texts))
        hidden: set[int] = set()
        for message in info.dropped:
            if message.get("role") != "user":
                continue
            turn = next((i for i, text in unmatched if text == message.get("content")), None)
            if turn is not None:
                hidden.add(turn)
                unmatched.remove((turn, state.turn_texts[turn]))
        self._drain("compaction", hidden)
        self._freeze_snapshot(exclude={i for ids in state.recall_messages.values() for i in ids})

    def end_session(self, session: SessionInfo) -> None:
        self._drain("dispose")
        for entry in list(self.entries.values()):
            if entry.scope == "session" and entry.owner_id == session.session_id:
                self._delete(entry, "agent-disposed", origin="flush")
        self.pending = [p for p in self.pending if p.owner_id != session.session_id]
        self.session = None

    # --- model tools: the seed's nine (see RETRIEVAL_TOOLS and arms/README.md)
    def model_tools(self) -> list[dict[str, Any]]:
        return RETRIEVAL_TOOLS

    def dispatch_tool(self, name: str, arguments: str) -> str:
        handlers = {
            "memory_write": self._write_tool,
            "memory_update": self._update_tool,
            "memory_delete": self._delete_tool,
            "memory_list": self._list_tool,
            "memory_search": self._search_tool,
            "memory_get": self._get_tool,
            "memory_pin": self._pin_tool,
            "memory_audit": self._audit_tool,
            "memory_pending": self._pending_tool,
        }
        return call_arm_tool(RETRIEVAL_TOOLS, handlers, name, arguments)

    def _own_scope(self) -> tuple[str, str | None]:
        """Where the current agent's writes go: a sub-agent's session scratch, else the workspace."""
        info = self._state().info
        return ("session", info.session_id) if info.agent == "sub" else ("workspace", None)

    def _visible_entry(self, item_id: str) -> Entry:
        entry = self.entries.get(item_id)
        if entry is None or not visible_to(entry.scope, entry.owner_id, self._state().info):
            raise ToolRefused(f"no memory {item_id!r}", "id")
        return entry

    def _write_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        scope, owner = self._own_scope()
        return self._write(
            args["content"],
            category=args.get("category", "note"),
            scope=scope,
            owner_id=owner,
            source="tool",
            pinned=args.get("pinned", False),
            summary=args.get("summary"),
            origin="tool",
        )

    def _update_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        entry = self._visible_entry(args["id"])
        content, summary = args["content"], args.get("summary")
        rule = scan_write(content, entry.key, entry.tags) or (scan_write(summary) if summary else None)
        if rule is not None:
            self.memlog.refused(reason="security scan", rule=rule)
            return {"rejected": rule}
        if self.config.confirm_before_write:  # a proposal: the entry is untouched until a human adopts it
            proposal = self._new_entry(
                content, category=entry.category, scope=entry.scope, owner_id=entry.owner_id, source="tool"
            )
            proposal.summary, proposal.updates = summary, entry.id
            self.pending.append(proposal)
            self.memlog.refused(reason="pending human review", rule="quarantined")
            return {"pending": proposal.id, "updates": entry.id}
        self._rewrite(entry, content, summary, op="update", origin="tool")
        return {"id": entry.id, "updated": True}

    def _delete_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        entry = self._visible_entry(args["id"])
        self._delete(entry, "manual", origin="tool")
        return {"id": entry.id, "deleted": True}

    def _list_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        category = args.get("category")
        entries = [e for e in self._ranked() if category is None or e.category == category]
        limit = args.get("limit", self.config.snapshot_entries)
        return {"count": len(entries), "entries": [self._index_line(e) for e in entries[:limit]]}

    def _search_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        category = args.get("category")  # structural filters first, then BM25 (the seed's order)
        visible = {e.id: e for e in self._visible() if category is None or e.category == category}
        scores = self.index.scores(args["query"], visible)
        ranked = sorted(
            (i for i in scores if scores[i] > 0),
            key=lambda i: (-scores[i], not visible[i].pinned, -visible[i].last_used, i),
        )[: args.get("limit", self.config.recall_top_k)]
        for item_id in ranked:
            self._use(visible[item_id])
        hits = [
            {"id": i, "line": self._line(visible[i]), "score": round(float(scores[i]), 4)} for i in ranked
        ]
        return {"count": len(hits), "results": hits, "note": PRECEDENCE_NOTE}

    def _get_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        entry = self._visible_entry(args["id"])
        self._use(entry)
        return {
            "id": entry.id,
            "scope": entry.scope,
            "category": entry.category,
            "content": shown(entry.content),
        }

    def _pin_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        entry = self._visible_entry(args["id"])
        pinned = args.get("pinned", True)
        if pinned and entry.source == "auto":
            raise ToolRefused("an entry from an untrusted source cannot be pinned", "id")
        if entry.pinned != pinned:
            entry.pinned = pinned
            self._audit("pin" if pinned else "unpin", "tool", entry)
        return {"id": entry.id, "pinned": entry.pinned}

    def _audit_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        info = self._state().info
        rows = [
            a
            for a in self.audit
            if visible_to(a.scope, a.owner_id, info) and args.get("id") in (None, a.item_id)
        ][-args.get("limit", 20) :]
        return {
            "count": len(rows),
            "audit": [
                {
                    "seq": a.seq,
                    "op": a.op,
                    "source": a.source,
                    "id": a.item_id,
                    "at": a.at,
                    "preview": a.preview,
                }
                for a in rows
            ],
        }

    def _pending_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        info = self._state().info
        rows = [p for p in self.pending if visible_to(p.scope, p.owner_id, info)]
        return {
            "count": len(rows),
            "pending": [
                {"id": p.id, "hits": p.hits, "updates": p.updates, "content": shown(p.content)} for p in rows
            ],
            "note": "Proposals wait for a human; a model cannot adopt them.",
        }

    def _use(self, entry: Entry) -> None:
        """A recall: the usage signal that keeps an entry fresh (and out of eviction)."""
        entry.access_count += 1
        entry.last_recalled_at = self.now()
        self.memlog.touch(entry.id, reason="recall", strength=float(entry.access_count))

    # --- writes
    def _new_entry(
        self, content: str, *, category: str, scope: str, owner_id: str | None, source: str
    ) -> Entry:
        entry = Entry(
            id=f"r-{self._next_id:04d}",
            content=content,
            category=category,
            scope=scope,
            owner_id=owner_id,
            source=source,
            pinned=False,
            tags=(),
            key=None,
            created_at=self.now(),
        )
        self._next_id += 1
        return entry

    def _write(
        self,
        content: str,
        *,
        category: str,
        scope: str,
        owner_id: str | None,
        source: str,
        pinned: bool = False,
        tags: tuple[str, ...] = (),
        key: str | None = None,
        correction: bool = False,
        summary: str | None = None,
        origin: str,
    ) -> dict[str, Any]:
        """One write through the gate; returns what a tool call answers: {id}, {pending} or {rejected}."""
        rule = scan_write(content, key, tags) or (scan_write(summary) if summary else None)
        if rule is not None:
            self.memlog.refused(reason="security scan", rule=rule)
            return {"rejected": rule}
        if self.config.confirm_before_write:
            repeated = self._similar_pending(content)
            if repeated is not None:  # the same proposal again: it gains a hit instead of a second row
                repeated.hits += 1
                if self.config.adopt_after_hits and repeated.hits >= self.config.adopt_after_hits:
                    self.adopt_pending(repeated.id, source="review")
                return {"pending": repeated.id, "hits": repeated.hits}
        entry = self._new_entry(content, category=category, scope=scope, owner_id=owner_id, source=source)
        entry.pinned, entry.tags, entry.key = pinned, tuple(tags), key
        entry.correction, entry.summary = correction, summary
        if self.config.confirm_before_write:
            self.pending.append(entry)
            self.memlog.refused(reason="pending human review", rule="quarantined")
            if self.config.adopt_after_hits == 1:
                self.adopt_pending(entry.id, source="review")
            return {"pending": entry.id, "hits": 1}
        self._store(entry, origin)
        return {"id": entry.id}

    def _store(self, entry: Entry, origin: str, op: str = "write") -> None:
        """Add an entry that passed the gate (and the review, in confirm mode) to the store."""
        self.entries[entry.id] = entry
        if self.session is not None:
            self.session.written_this_turn.add(entry.id)
        self._index(entry)
        self._log_write(entry)
        self._audit(op, origin, entry)
        if entry.correction:
            self._mark_contradicted(entry)
        self._evict_over_cap(origin)

    def _index(self, entry: Entry) -> None:
        """(Re)index an entry: its summary is indexed with its content, so a short summary recalls it too."""
        self.index.remove(entry.id)
        self.index.add(entry.id, f"{entry.content} {entry.summary or ''} {entry.category}")

    def _log_write(self, entry: Entry) -> None:
        self.memlog.write(
            entry.id,
            entry.content,
            kind=entry.category,
            scope=entry.scope,
            owner_id=entry.owner_id,
            source=entry.source,
            key=entry.key,
            pinned=entry.pinned,
        )

    def _rewrite(self, entry: Entry, content: str, summary: str | None, *, op: str, origin: str) -> None:
        """Replace a stored entry's text in place (an update, a curation): logged as a new write of its id."""
        entry.content, entry.summary = content, summary
        self._index(entry)
        self._log_write(entry)
        self._audit(op, origin, entry)

    # --- the pending queue: the human's decision
    def _similar_pending(self, content: str) -> Entry | None:
        terms = content_terms(content)
        return next(
            (
                p
                for p in self.pending
                if jaccard(terms, content_terms(p.content)) >= self.config.duplicate_similarity
            ),
            None,
        )

    def adopt_pending(self, proposal_id: str, text: str | None = None, *, source: str = "ui") -> None:
        """Adopt a proposal (optionally edited first): it passes the gate again and becomes an entry, or, for
        an update proposal, the entry's new text."""
        proposal = next(p for p in self.pending if p.id == proposal_id)
        self.pending.remove(proposal)
        if text is not None:
            rule = scan_write(text, proposal.key, proposal.tags)
            if rule is not None:
                self.memlog.refused(reason="security scan", rule=rule)
                return
            proposal.content = text
        target = self.entries.get(proposal.updates) if proposal.updates else None
        if target is not None:
            self._rewrite(target, proposal.content, proposal.summary, op="adopt", origin=source)
            return
        proposal.created_at = self.now()
        self._store(proposal, source, op="adopt")

    def reject_pending(self, proposal_id: str) -> None:
        """Reject a proposal: it leaves the queue, nothing is written."""
        proposal = next(p for p in self.pending if p.id == proposal_id)
        self.pending.remove(proposal)
        self._audit("reject", "ui", proposal)

    def _audit(self, op: str, source: str, entry: Entry) -> None:
        self._audit_seq += 1
        preview = " ".join(entry.content.split())[:AUDIT_PREVIEW_CHARS]
        self.audit.append(
            AuditEntry(
                self._audit_seq, op, source, entry.id, entry.scope, entry.owner_id, self.now(), preview
            )
        )

    def _mark_contradicted(self, correction: Entry) -> None:
        terms = content_terms(correction.content)
        for entry in self.entries.values():
            if (
                entry.id != correction.id
                and entry.contradicted_by is None
                and entry.scope == correction.scope
                and entry.owner_id == correction.owner_id
                and jaccard(terms, content_terms(entry.content)) >= self.config.correction_similarity
            ):
                entry.contradicted_by = correction.id

    def _evict_over_cap(self, origin: str) -> None:
        excess = len(self.entries) - self.config.entries_cap
        if excess <= 0:
            return
        evictable = sorted(
            (e for e in self.entries.values() if not e.pinned),
            key=lambda e: (
                e.access_count,
                -1.0 if e.last_recalled_at is None else e.last_recalled_at,
                e.created_at,
            ),
        )
        for entry in evictable[:excess]:
            self._delete(entry, "evicted", origin=origin)

    def _delete(self, entry: Entry, reason: str, *, origin: str) -> None:
        del self.entries[entry.id]
        self.index.remove(entry.id)
        self.memlog.forget(entry.id, entry.content, reason=reason)
        self._audit("delete", origin, entry)

    # --- extraction
    def _drain(self, trigger: str, turns: set[int] | None = None) -> None:
        """Extract the waiting candidates (only those of `turns`, when given: the compaction flush)."""
        state = self._state()
        # A user turn written explicitly is already recorded; a tool workaround never is.
        chosen = [c for c in state.candidates if turns is None or c.turn in turns]
        state.candidates = [c for c in state.candidates if c not in chosen]
        waiting = [c for c in chosen if c.category == "tool-quirk" or c.turn not in state.explicit_turns]
        if not waiting or not self._spend_drain():
            return
        scope, owner = self._own_scope()
        extracted = (
            self._extract_with_model(waiting, trigger) if self.config.extractor == "model" else waiting
        )
        for candidate in extracted:
            if self._is_duplicate(candidate.text):
                continue
            self._write(
                candidate.text,
                category=candidate.category,
                scope=scope,
                owner_id=owner,
                source="user",
                correction=candidate.correction,
                origin="review" if trigger == "review" else "flush",
            )

    def _spend_drain(self) -> bool:
        """Take 1 from the session's extraction budget (shared by review, the flushes and the curator);
        False when it is spent: the per-session cost ceiling."""
        state = self._state()
        budget = self.config.extraction_budget
        if budget and state.drains >= budget:
            return False
        state.drains += 1
        return True

    def _extract_with_model(self, waiting: list[Candidate], trigger: str) -> list[Candidate]:
        prompt = (
            "Extract durable memories from these user messages. Skip transient state and unverified guesses. "
            "Answer one memory per line as `category: content` (category: fact, preference, correction), "
            "or nothing.\n\n" + "\n".join(f"- {c.text}" for c in waiting)
        )
        state = self._state()
        reply = ask_model(
            self.context(),
            f"retrieval:extract:{trigger}",
            prompt,
            call_seed=self.context().seed + state.drains,
        )
        extracted = []
        for line in reply.splitlines():
            category, sep, content = line.strip().lstrip("-* ").partition(":")
            if sep and content.strip() and category.strip().lower() in {"fact", "preference", "correction"}:
                kind = category.strip().lower()
                extracted.append(
                    Candidate(waiting[-1].turn, " ".join(content.split()), kind, kind == "correction")
                )
        return extracted

    def _is_duplicate(self, text: str) -> bool:
        """Already in the store (a pending proposal is not: proposing it again counts a hit)."""
        terms = content_terms(text)
        return any(
            jaccard(terms, content_terms(e.content)) >= self.config.duplicate_similarity
            for e in self.entries.values()
        )

    # --- the curator
    def _curate(self) -> None:
        """Rewrite the longest overlong entries (at least `curator_min_chars`) into one line each, at most
        `curator_batch` of them; the rewrite passes the gate like any write."""
        overlong = sorted(
            (e for e in self.entries.values() if len(e.content) >= self.config.curator_min_chars),
            key=lambda e: (-len(e.content), e.id),
        )[: self.config.curator_batch]
        if not overlong or not self._spend_drain():
            return
        use_model = self.config.curator == "model" or (
            self.config.curator == "auto"
            and self.context().model is not None
            and not getattr(self.context().model, "scripted", False)
        )
        for entry in overlong:
            line = self._curated_by_model(entry) if use_model else one_line_stand_in(entry.content)
            if not line or len(line) >= len(entry.content):
                continue
            rule = scan_write(line, entry.key, entry.tags)
            if rule is not None:
                self.memlog.refused(reason="security scan", rule=rule)
                continue
            self._rewrite(entry, line, None, op="curate", origin="janitor")

    def _curated_by_model(self, entry: Entry) -> str:
        prompt = (
            "Rewrite this memory entry as one concise line that keeps every fact, name, number and "
            "instruction it states. Answer with the line only.\n\n" + entry.content
        )
        reply = ask_model(
            self.context(), "retrieval:curate", prompt, call_seed=self.context().seed + self._audit_seq
        )
        return next((" ".join(line.split()) for line in reply.splitlines() if line.strip()), "")

    # --- injection
    def _janitor(self) -> None:
        if self.janitor_idle is None:
            return
        now = self.now()
        for entry in list(self.entries.values()):
            if not entry.pinned and now - entry.last_used > self.janitor_idle:
                self._delete(entry, "stale", origin="janitor")

    def _visible(self) -> list[Entry]:
        info = self._state().info
        return [e for e in self.entries.values() if visible_to(e.scope, e.owner_id, info)]

    def _ranked(self) -> list[Entry]:
        """The visible entries, most specific scope first, then pinned, then most recently used."""
        return sorted(
            self._visible(), key=lambda e: (_SCOPE_TIER.get(e.scope, 2), not e.pinned, -e.last_used, e.id)
        )

    def _line(self, entry: Entry, text: str | None = None) -> str:
        """The entry's memory line with `text` (default: the whole entry), scanned again on the way out."""
        notes = [CONTRADICTED_NOTE] if entry.contradicted_by else []
        if entry.pinned:
            notes.insert(0, "pinned")
        return memory_line(
            entry.id,
            entry.label,
            self.now() - entry.created_at,
            shown(entry.content if text is None else text),
            untrusted=entry.source == "auto",
            notes=notes,
        )

    def _index_line(self, entry: Entry) -> str:
        """The entry's line in the memory index: its summary (`index_lines: summary`) or the whole entry."""
        if self.config.index_lines == "whole":
            return self._line(entry)
        return self._line(entry, entry.summary or summarize(entry.content, self.config.summary_chars))

    def _freeze_snapshot(self, exclude: frozenset[str] | set[str] = frozenset()) -> None:
        """The session's frozen snapshot: the project-notes section (whole entries), then the memory index
        of the other entries (all but `exclude`), within the char, entry and token caps."""
        state = self._state()
        ranked = [e for e in self._ranked() if e.id not in exclude]
        budget = self.context().budget_tokens
        notes: list[Entry] = []
        notes_block = ""
        if self.config.project_notes:
            noted = [e for e in ranked if e.category in NOTE_CATEGORIES]
            # fitted with the estimate line, so that the notes alone (when no index line fits) are in budget
            notes = fit_block(lambda kept: _with_estimate(self._render_notes(kept)), noted, budget)[1]
            notes_block = self._render_notes(notes) if notes else ""
        noted_ids = {e.id for e in notes}
        indexed = [e for e in ranked if e.id not in noted_ids]
        shown_cap = indexed[: self.config.snapshot_entries]
        lines = {e.id: self._index_line(e) for e in shown_cap}

        get_hint = "; memory_get <id> for the full text" if self.tools else ""

        def render(kept: list[Entry]) -> str:
            kept_ids = {e.id for e in kept}
            folded: dict[str, int] = {}
            for entry in indexed:
                if entry.id not in kept_ids:
                    folded[entry.label] = folded.get(entry.label, 0) + 1
            body = [
                *([notes_block, ""] if notes_block else []),
                f"MEMORY INDEX (frozen at session start; {len(kept)} of {len(indexed)} entries{get_hint})",
                *(lines[e.id] for e in kept),
                *(f"+ {label} ×{count}" for label, count in sorted(folded.items())),
                *([PRECEDENCE_NOTE] if self.config.precedence_note else []),
            ]
            return _with_estimate("\n".join(body))

        char_capped: list[Entry] = []
        used_chars = 0
        for entry in shown_cap:
            if used_chars + len(lines[entry.id]) + 1 <= self.config.snapshot_chars:
                char_capped.append(entry)
                used_chars += len(lines[entry.id]) + 1
        block, kept = fit_block(render, char_capped, budget) if indexed else ("", [])
        if not block and notes_block:  # nothing of the index fits (or there is none): the notes alone
            block = _with_estimate(notes_block)
        state.snapshot_block = block
        state.snapshot_ids = [(e.id, count_tokens(self._line(e))) for e in notes] + [
            (e.id, count_tokens(lines[e.id])) for e in kept
        ]

    def _render_notes(self, kept: list[Entry]) -> str:
        """The project-notes section: conventions and preferences, then the pitfall log, whole entries."""
        conventions = [self._line(e) for e in kept if e.category in CONVENTION_CATEGORIES]
        pitfalls = [self._line(e) for e in kept if e.category in PITFALL_CATEGORIES]
        return "\n".join(
            [
                "PROJECT NOTES (rendered from memory)",
                *(["Conventions and preferences:", *conventions] if conventions else []),
                *(["Pitfalls (failure / procedure / tool-quirk):", *pitfalls] if pitfalls else []),
            ]
        )

    def _recall_fence(self, user_text: str, exclude: set[str], budget: int) -> tuple[str, list[Entry]]:
        visible = {e.id: e for e in self._visible() if e.id not in exclude}
        if budget <= 0 or not visible:
            return "", []
        scores = self.index.scores(user_text, visible)
        ranked = sorted(scores, key=lambda i: (-scores[i], not visible[i].pinned, -visible[i].last_used, i))[
            : self.config.recall_top_k
        ]
        hits = [visible[i] for i in ranked]
        lines = {e.id: self._line(e) for e in hits}
        note = [PRECEDENCE_NOTE] if self.config.precedence_note else []

        def render(kept: list[Entry]) -> str:
            return "\n".join(["<recalled-memory>", *(lines[e.id] for e in kept), *note, "</recalled-memory>"])

        return fit_block(render, hits, budget) if hits else ("", [])

    # --- helpers
    def _state(self) -> SessionState:
        if self.session is None:
            raise RuntimeError("retrieval: called outside a session")
        return self.session


_ID = {"type": "string", "minLength": 1, "description": "An entry id such as r-0003."}
_CATEGORY = {
    "type": "string",
    "minLength": 1,
    "description": "fact, preference, convention, failure, procedure, tool-quirk, note...",
}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": 50}
RETRIEVAL_TOOLS: list[dict[str, Any]] = [
    function_tool(
        "memory_write",
        "Store a new memory entry (it passes the security gate; in review mode it becomes a proposal).",
        {
            "content": {"type": "string", "minLength": 1, "description": "The entry, one fact or rule."},
            "category": _CATEGORY,
            "summary": {"type": "string", "minLength": 1, "description": "A one-line summary for the index."},
            "pinned": {"type": "boolean", "description": "Keep it out of eviction and the janitor."},
        },
        ("content",),
    ),
    function_tool(
        "memory_update",
        "Replace the text of an entry you can see (gated; in review mode a proposal that leaves it as is).",
        {
            "id": _ID,
            "content": {"type": "string", "minLength": 1, "description": "The new text."},
            "summary": {"type": "string", "minLength": 1, "description": "A new one-line summary."},
        },
        ("id", "content"),
    ),
    function_tool("memory_delete", "Delete an entry you can see.", {"id": _ID}, ("id",)),
    function_tool(
        "memory_list",
        "The memory index: one line per entry you can see (scope/category · id · summary).",
        {"category": _CATEGORY, "limit": {**_LIMIT, "description": "Default 20."}},
    ),
    function_tool(
        "memory_search",
        "Search memory (BM25 over the entries you can see); returns one line per hit.",
        {
            "query": {"type": "string", "minLength": 1, "description": "What to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Default 3."},
            "category": _CATEGORY,
        },
        ("query",),
    ),
    function_tool(
        "memory_get",
        "The full text of one memory entry, by the id its index line shows.",
        {"id": _ID},
        ("id",),
    ),
    function_tool(
        "memory_pin",
        "Pin (or unpin) an entry you can see: pinned entries rank first and are never evicted.",
        {"id": _ID, "pinned": {"type": "boolean", "description": "Default true; false unpins."}},
        ("id",),
    ),
    function_tool(
        "memory_audit",
        "Who changed which entry, when and how (the latest changes of entries you can see).",
        {"id": _ID, "limit": {**_LIMIT, "description": "Default 20."}},
    ),
    function_tool(
        "memory_pending", "The proposals waiting for a human's review (never injected or searched).", {}
    ),
]
