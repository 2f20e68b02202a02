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
- Every write (remember specs and extraction alike) passes one gate: prompt-injection and credential
  patterns (rejected, `memory_refused`); with `confirm_before_write` every write becomes a pending
  proposal that is never injected nor searched.
- Retrieval: Okapi BM25 (arms/bm25.py) over content + category, structural filters (scope visibility)
  first; ranking relevance ↓, pinned ↓, recency ↓.
- Injection: index mode, a snapshot frozen at session start (`snapshot_chars` 5000 and
  `snapshot_entries` 20 caps plus the token budget; the overflow folds into `+ scope/category ×N` count
  lines; a trailing `≈N tokens` line), most specific scope first, then pinned, then most recently used.
  Optional per-step recall (`recall`, on by default) of the BM25 top hits for the current user text in
  a `<recalled-memory>` fence. Entries contradicted by a newer correction carry "⚠ contradicted by a
  newer correction".
- Usage-based eviction over a soft cap (`entries_cap` 500): pinned immune, lowest access count then
  oldest recall first; when every entry is exempt the cap is exceeded rather than deleting healthy
  data. A janitor at session creation retires unpinned entries unused for `janitor_idle` (90d; null =
  off).

- The third signal: a tool (a task's `tool_events`; the signature is the tool's name) that failed
  `failure_streak` (2; 0 = off) times in a row and then succeeded is a verified workaround: the
  successful call and its output become a `pitfall` candidate, drained like the others.
- A per-change audit (`audit`, the last 200): every successful change with its operation, source
  (tool = the task's remember/forget specs, the seed's tool path; review; flush; ui; janitor), a
  monotonic sequence number and a content preview.
- The pending queue's adoption step: a repeated proposal counts hits instead of queueing twice;
  `adopt_pending(id, text=None)` (optionally edited) and `reject_pending(id)` are the human's decision
  (source ui). No human answers in a replay, so proposals wait for ever unless `adopt_after_hits` (0 =
  never, the seed) stands in for a reviewer who adopts a proposal seen that many times.
- "The current request wins": every injected surface (the snapshot and the recall fence) states that
  the current user request, repository files and tool output take precedence over memory
  (`precedence_note`, on).
- Model tools (per the `tools` option; `auto`: when the model calls tools): `memory_search` (query,
  limit: the BM25 ranking over the visible entries) and `memory_get` (id: the full entry, a recall).

Deviations (also in arms/README.md): the recall fence is appended to the memory block rather than sent
as an extra user message (the runner's prompt layout is fixed; the block is what gets logged); the
index line carries the whole (short) entry instead of a summary (`memory_get` returns the same text);
the seed names only `memory_get` of its nine tools, so the arm offers that and a `memory_search`; the
scan has a handful of rules rather than the seed's 37; access counts rise on recall only (an index
line is not a use)."""

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
from arms.base import MemoryContext, SessionInfo, check_tool_mode
from arms.bm25 import BM25Index
from arms.model_assist import ask_model
from arms.textnorm import content_terms, jaccard
from arms.write_gate import scan
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
_SCOPE_TIER = {"session": 0, "workspace": 1}  # most specific first (seed: project → user → global)


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
    tools: str = "auto"  # when memory_search / memory_get are offered (arms.base.TOOL_MODES)

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
    op: str  # write | delete | adopt | reject
    source: str  # tool | review | flush | ui | janitor
    item_id: str
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
    snapshot_block: str = ""
    snapshot_ids: list[tuple[str, int]] = field(default_factory=list)  # (entry id, tokens of its line)


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
        self._next_id = 1

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "base": "retrieval", "seed": self.SEED, "options": asdict(self.config)}

    # --- lifecycle
    def start_session(self, session: SessionInfo) -> None:
        self.session = SessionState(info=session)
        self._janitor()
        self._freeze_snapshot()

    def observe_user_turn(self, text: str) -> None:
        state = self._state()
        state.turn += 1
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
            state.candidates.append(Candidate(state.turn, text[:300], "pitfall", correction=False))

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
        if self.config.recall:
            recall_budget = budget - (count_tokens(block) + 2 if block else 0)
            shown = {item_id for item_id, _ in state.snapshot_ids} | state.written_this_turn
            fence, recalled = self._recall_fence(user_text, shown, recall_budget)
            if fence:
                block = f"{block}\n\n{fence}" if block else fence
        for entry in recalled:
            self._use(entry)
            items.append({"id": entry.id, "tokens": count_tokens(self._line(entry)), "via": "recall"})
        return MemoryContext(
            block=block,
            tokens=count_tokens(block),
            items=items,
            details={"snapshot_entries": len(state.snapshot_ids), "recalled": [e.id for e in recalled]},
        )

    def observe_answer(self, user_text: str, answer: str, context: MemoryContext) -> None:
        state = self._state()
        if len(state.candidates) >= self.config.review_every:
            self._drain("review")

    # --- model tools (the seed names memory_get; memory_search is its retrieval plane as a tool)
    def model_tools(self) -> list[dict[str, Any]]:
        return RETRIEVAL_TOOLS

    def dispatch_tool(self, name: str, arguments: str) -> str:
        handlers = {"memory_search": self._search_tool, "memory_get": self._get_tool}
        return call_arm_tool(RETRIEVAL_TOOLS, handlers, name, arguments)

    def _search_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        visible = {e.id: e for e in self._visible()}
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
        entry = next((e for e in self._visible() if e.id == args["id"]), None)
        if entry is None:
            raise ToolRefused(f"no memory {args['id']!r}", "id")
        self._use(entry)
        return {"id": entry.id, "scope": entry.scope, "category": entry.category, "content": entry.content}

    def _use(self, entry: Entry) -> None:
        """A recall: the usage signal that keeps an entry fresh (and out of eviction)."""
        entry.access_count += 1
        entry.last_recalled_at = self.now()
        self.memlog.touch(entry.id, reason="recall", strength=float(entry.access_count))

    def end_session(self, session: SessionInfo) -> None:
        self._drain("dispose")
        for entry in list(self.entries.values()):
            if entry.scope == "session" and entry.owner_id == session.session_id:
                self._delete(entry, "agent-disposed", origin="flush")
        self.pending = [p for p in self.pending if p.owner_id != session.session_id]
        self.session = None

    # --- writes
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
        origin: str,
    ) -> None:
        rule = scan(content)
        if rule is not None:
            self.memlog.refused(reason="security scan", rule=rule)
            return
        if self.config.confirm_before_write:
            repeated = self._similar_pending(content)
            if repeated is not None:  # the same proposal again: it gains a hit instead of a second row
                repeated.hits += 1
                if self.config.adopt_after_hits and repeated.hits >= self.config.adopt_after_hits:
                    self.adopt_pending(repeated.id, source="review")
                return
        entry = Entry(
            id=f"r-{self._next_id:04d}",
            content=content,
            category=category,
            scope=scope,
            owner_id=owner_id,
            source=source,
            pinned=pinned,
            tags=tuple(tags),
            key=key,
            created_at=self.now(),
            correction=correction,
        )
        self._next_id += 1
        if self.config.confirm_before_write:
            self.pending.append(entry)
            self.memlog.refused(reason="pending human review", rule="quarantined")
            if self.config.adopt_after_hits == 1:
                self.adopt_pending(entry.id, source="review")
            return
        self._store(entry, origin)

    def _store(self, entry: Entry, origin: str, op: str = "write") -> None:
        """Add an entry that passed the gate (and the review, in confirm mode) to the store."""
        self.entries[entry.id] = entry
        if self.session is not None:
            self.session.written_this_turn.add(entry.id)
        self.index.add(entry.id, f"{entry.content} {entry.category}")
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
        self._audit(op, origin, entry)
        if entry.correction:
            self._mark_contradicted(entry)
        self._evict_over_cap(origin)

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
        """Adopt a proposal (optionally edited first): it passes the gate again and becomes an entry."""
        proposal = next(p for p in self.pending if p.id == proposal_id)
        self.pending.remove(proposal)
        if text is not None:
            rule = scan(text)
            if rule is not None:
                self.memlog.refused(reason="security scan", rule=rule)
                return
            proposal.content = text
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
        self.audit.append(AuditEntry(self._audit_seq, op, source, entry.id, self.now(), preview))

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
    def _drain(self, trigger: str) -> None:
        state = self._state()
        # A user turn written explicitly is already recorded; a tool workaround never is.
        waiting = [
            c for c in state.candidates if c.category == "pitfall" or c.turn not in state.explicit_turns
        ]
        state.candidates = []
        if not waiting:
            return
        budget = self.config.extraction_budget
        if budget and state.drains >= budget:
            return  # the per-session cost ceiling: no more automatic extraction this session
        state.drains += 1
        scope = "session" if state.info.agent == "sub" else "workspace"
        owner = state.info.session_id if scope == "session" else None
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
                origin="flush" if trigger == "dispose" else "review",
            )

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

    def _line(self, entry: Entry) -> str:
        notes = [CONTRADICTED_NOTE] if entry.contradicted_by else []
        if entry.pinned:
            notes.insert(0, "pinned")
        return memory_line(
            entry.id,
            entry.label,
            self.now() - entry.created_at,
            entry.content,
            untrusted=entry.source == "auto",
            notes=notes,
        )

    def _freeze_snapshot(self) -> None:
        state = self._state()
        ranked = sorted(
            self._visible(), key=lambda e: (_SCOPE_TIER.get(e.scope, 2), not e.pinned, -e.last_used, e.id)
        )
        shown_cap = ranked[: self.config.snapshot_entries]
        lines = {e.id: self._line(e) for e in shown_cap}

        def render(kept: list[Entry]) -> str:
            kept_ids = {e.id for e in kept}
            folded: dict[str, int] = {}
            for entry in ranked:
                if entry.id not in kept_ids:
                    folded[entry.label] = folded.get(entry.label, 0) + 1
            body = [
                f"MEMORY INDEX (frozen at session start; {len(kept)} of {len(ranked)} entries)",
                *(lines[e.id] for e in kept),
                *(f"+ {label} ×{count}" for label, count in sorted(folded.items())),
                *([PRECEDENCE_NOTE] if self.config.precedence_note else []),
            ]
            text = "\n".join(body)
            return f"{text}\n≈{count_tokens(text)} tokens"

        def within_chars(kept: list[Entry]) -> bool:
            return sum(len(lines[e.id]) + 1 for e in kept) <= self.config.snapshot_chars

        char_capped: list[Entry] = []
        for entry in shown_cap:
            if within_chars([*char_capped, entry]):
                char_capped.append(entry)
        block, kept = fit_block(render, char_capped, self.context().budget_tokens) if ranked else ("", [])
        state.snapshot_block = block
        state.snapshot_ids = [(e.id, count_tokens(lines[e.id])) for e in kept]

    def _recall_fence(self, user_text: str, exclude: set[str], budget: int) -> tuple[str, list[Entry]]:
        visible = {e.id: e for e in self._visible() if e.id not in exclude}
        if budget <= 0 or not visible:
            return "", []
        scores = self.index.scores(user_text, visible)
        ranked = sorted(scores, key=lambda i: (-scores[i], not visible[i].pinned, -visible[i].last_used, i))[
            : self.config.recall_top_k
        ]
        hits = [visible[i] for i in ranked]

        note = [PRECEDENCE_NOTE] if self.config.precedence_note else []

        def render(kept: list[Entry]) -> str:
            return "\n".join(
                ["<recalled-memory>", *(self._line(e) for e in kept), *note, "</recalled-memory>"]
            )

        return fit_block(render, hits, budget) if hits else ("", [])

    # --- helpers
    def _state(self) -> SessionState:
        if self.session is None:
            raise RuntimeError("retrieval: called outside a session")
        return self.session


RETRIEVAL_TOOLS: list[dict[str, Any]] = [
    function_tool(
        "memory_search",
        "Search memory (BM25 over the entries you can see); returns one index line per hit.",
        {
            "query": {"type": "string", "minLength": 1, "description": "What to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Default 3."},
        },
        ("query",),
    ),
    function_tool(
        "memory_get",
        "The full text of one memory entry, by the id its index line shows.",
        {"id": {"type": "string", "minLength": 1, "description": "An entry id such as r-0003."}},
        ("id",),
    ),
]
