"""`claims` / `claims-oracle-key`: Muse's memory layer (seed 004) — every memory is a claim with
provenance and a supersession chain, projected as a standing MEMORY.md; forgetting is two-phase (plan,
then confirm and verify).

What it reproduces:
- A claim holds its text, kind, speaker (user / tool / web for `source: auto`), the quote it came from
  (the user turn), learned-at, last-reinforced and a confidence (user 0.9, tool 0.7, web 0.3).
- Correction propagation: a new claim on the same subject supersedes the active one (old → superseded,
  both links kept); an identical restatement reinforces instead (last_reinforced, confidence +0.05).
  The subject is found by `supersession: similarity` (default, arm `claims`): the active claim of the
  same section and scope whose content terms (arms/textnorm.py) have the highest Dice coefficient, if ≥
  `similarity` (0.5) — or by `supersession: key` (arm `claims-oracle-key`): the active claim with the
  task's `key` when the spec has one, otherwise the similarity rule. The gap between the two arms is
  the oracle-key advantage. `judge: model` asks `ctx.model` to confirm each similarity match instead
  (yes/no).
- Untrusted text never rewrites the user's record: a web claim cannot supersede a user or tool claim;
  it stays active beside it, marked `untrusted`, with low confidence.
- Injection: the MEMORY.md projection of active claims visible to the agent, sections Facts /
  Preferences / Commitments; superseded claims stay in history (`explain`) but are never injected. Over
  the token budget the least confident, least recently reinforced claims are left out.
- `explain(claim_id)`: the provenance report with the supersession chain both ways.
- Forgetting is two-phase: `plan_forget(spec)` is a read-only inventory of every place the information
  lives (the matching claims, their whole supersession history, fuzzy neighbours, quotes of other
  claims that repeat it, the projection); `confirm_forget(plan)` executes it and then verifies that
  neither exact nor fuzzy search over what remains returns it (`ForgetIncomplete` otherwise).
- Credentials never enter a claim (amnesia.safety rules): a secret in the content refuses the write
  (`memory_refused`, the rule name only); a secret in the quote withholds the quote.

- The retrieval layer's tools (offered per the `tools` option; `auto`: when the model calls tools):
  `memory_search` (queries 1-3, maxResults, minScore 0-1; BM25 over the active claims, scores scaled so the
  best hit is 1) returns snippets with a citation into the MEMORY.md projection (`MEMORY.md#L7`), the
  claim id, its `memory://claims/<id>` URI and its status; `memory_get` (path or citation, optional
  from/lines) reads lines of the projection; `memory_explain` (one of id, uri, citation) returns the
  provenance report. `explain(handle)` takes any of the three handles.
- Two-phase forgetting with an explicit approval step: `plan_forget` → `approve_forget(plan)` →
  `confirm_forget(plan)`, which refuses (`ForgetNotApproved`, nothing changes) without an approval of
  that very plan. After executing it writes the pending record `forget/pending.json` in the arm's
  workdir — `{"claims": [...], "citations": [...]}` (ids and the projection lines it removed, never the
  forgotten text), written even when both lists are empty.

- The memory layers around the claims (arms/claims_layers.py; each has an option, and the variant
  `claims-bare` switches them all off):
  - Admission (`admission: rules`, §5.2/§5.5): credentials, payment cards and one-time codes (amnesia.safety),
    diagnostics and tool transcripts (by their form: tracebacks, log lines, shell prompts) and statements
    with fewer than two content terms are refused (`memory_refused` with the rule); `credentials` keeps only
    the credential rules, `model` asks `ctx.model` after them.
  - Write-before-reply (`write_timing: before_reply`, §5.1): a turn's claims are stored before its reply,
    so the reply sees them and the session log has the `memory_write` before the `model_call`;
    `after_reply` stores them after the reply, to measure what the order does.
  - Diaries (`diaries`, §3.1): `memory/YYYY-MM-DD.md` per simulated UTC day, `## Verified extraction —
    HH:MM UTC (session sN)` headings and one `- claim: c-0003 · ...` entry per new, superseding or
    reinforcing write. The source trail: never injected; `memory_search` finds a superseded claim through
    its diary entry (status `superseded`), `memory_get` reads the files; a forget deletes the entries.
  - Entity pages (`entity_pages`, §7.2, §4.3): one page per named entity (a capitalised Latin-script name
    that does not open a sentence — a rule, standing in for the seed's Relationships pipeline) with the
    six-section template (Facts and Open threads from the active claims, History as dates and ids); the
    index head (`index_head`, closest = most claims) is injected after MEMORY.md, and the page of every
    entity the user's turn names is injected too (the seed's read-before-answering contract).
  - Explain reports salience (0.5 at write, +0.1 per restatement, 1.0 pinned: a stand-in, the seed defers
    its evolution to another document), the dated source message (the user turn's text, its simulated
    time as ISO 8601 UTC, session and turn) and every line that shows the claim (`citations`).
  - Hybrid search (`search: hybrid`): BM25 fused with a deterministic hashed character n-gram vector, a
    shipped stand-in for an embedding model (arms/embedding.py documents the fusion); `search: bm25`.

Left out (see arms/README.md): the bank's four books, dreaming and the alignment synthesis, side chats and
the nine-surface inventory collapse into the one claim store and its files. Nobody can answer the plan in
a replay, so the task's forget spec — the user's instruction — stands in for the approval
(`forget_approval: instruction`, default); `forget_approval: none` leaves every plan unapproved, so
nothing is forgotten."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from amnesia.safety import find_secret_rule
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
from arms.arm_options import check_bool, check_choice, check_int, check_number, options_from
from arms.base import MemoryContext, SessionInfo, check_tool_mode
from arms.claims_layers import (
    ADMISSION_PROMPT,
    clock_of,
    day_of,
    entities_of,
    iso_of,
    mentions,
    refusal,
    slug,
)
from arms.embedding import HashedNgramEmbedder, hybrid_scores
from arms.model_assist import ask_model
from arms.textnorm import content_terms, dice
from tasks.modelapi import Message
from tasks.spec import ForgetSpec, RememberSpec

SECTIONS = ("Facts", "Preferences", "Commitments")
_COMMITMENT_KINDS = frozenset({"commitment", "task", "todo", "plan", "deadline", "constraint", "promise"})
SPEAKERS = {"user": "user", "tool": "tool", "auto": "web"}
CONFIDENCE = {"user": 0.9, "tool": 0.7, "web": 0.3}
WITHHELD_QUOTE = "[quote withheld: it contained a credential]"
REDACTED_QUOTE = "[quote removed by a forget]"
PROJECTION = "MEMORY.md"
ENTITY_DIR = "memory/entities"
ENTITY_INDEX = f"{ENTITY_DIR}/INDEX.md"
# §7.2's page template; Facts, History and Open threads are derived from the claims, the other three are
# written by the seed's Relationships pipeline (a model) and stay empty here.
PAGE_SECTIONS = ("Facts", "History", "The relationship", "In common", "Open threads", "Strengthening")
URI_PREFIX = "memory://claims/"
_CITATION = re.compile(r"^(?:~/)?([\w./-]+\.md)(?:#L(\d+)(?:-L?(\d+))?)?$")
SALIENCE_START = 0.5  # salience at write; +SALIENCE_STEP per restatement; a pinned write is 1.0
SALIENCE_STEP = 0.1
SEARCH_RESULTS_MAX = 20
GET_LINES_DEFAULT = 20


def section_of(kind: str) -> str:
    if kind == "preference":
        return "Preferences"
    return "Commitments" if kind in _COMMITMENT_KINDS else "Facts"


class ForgetIncomplete(RuntimeError):
    """After a confirmed forget, exact or fuzzy search still returned the forgotten information."""


class ForgetNotApproved(RuntimeError):
    """`confirm_forget` without an approval of that plan: nothing was changed (seed: stop and re-plan)."""


@dataclass(frozen=True)
class ClaimsOptions:
    supersession: str = "similarity"  # similarity | key (oracle: the task's key when given)
    similarity: float = 0.5  # Dice coefficient of content terms for "same subject"
    judge: str = "rules"  # rules | model
    forget_approval: str = "instruction"  # instruction (the forget spec approves its plan) | none
    tools: str = "auto"  # when memory_search / memory_get / memory_explain are offered (TOOL_MODES)
    # what may become a claim: rules (§5.2 + §5.5, claims_layers.refusal) | credentials (only the credential
    # rules: the arm before the admission rules) | model (the credential rules, then the model decides)
    admission: str = "rules"
    # when a turn's claims are stored: before_reply (§5.1: the reply of the turn sees them) | after_reply
    write_timing: str = "before_reply"
    # dated diary files memory/YYYY-MM-DD.md, the source trail (§3.1): searched and read, never injected
    diaries: bool = True
    # entity pages (§7.2): memory/entities/<slug>.md + INDEX.md; the index head is injected, and the pages of
    # the entities the user's turn names are read before the reply (§4.3)
    entity_pages: bool = True
    index_head: int = 10  # entities shown in the injected index (closest first)
    search: str = "hybrid"  # hybrid (BM25 + the stand-in embedding, arms/embedding.py) | bm25
    vector_weight: float = 0.5  # the vector side's share of a hybrid score
    vector_floor: float = 0.2  # cosine similarities below this count as 0

    def __post_init__(self) -> None:
        check_choice("claims", "supersession", self.supersession, ("similarity", "key"))
        check_number("claims", "similarity", self.similarity, maximum=1.0)
        check_choice("claims", "judge", self.judge, ("rules", "model"))
        check_choice("claims", "forget_approval", self.forget_approval, ("instruction", "none"))
        check_tool_mode("claims", self.tools)
        check_choice("claims", "admission", self.admission, ("rules", "credentials", "model"))
        check_choice("claims", "write_timing", self.write_timing, ("before_reply", "after_reply"))
        check_bool("claims", "diaries", self.diaries)
        check_bool("claims", "entity_pages", self.entity_pages)
        check_int("claims", "index_head", self.index_head)
        check_choice("claims", "search", self.search, ("hybrid", "bm25"))
        check_number("claims", "vector_weight", self.vector_weight, maximum=1.0)
        check_number("claims", "vector_floor", self.vector_floor, maximum=1.0)


@dataclass
class Claim:
    id: str
    text: str
    kind: str
    speaker: str
    quote: str
    learned_at: float
    last_reinforced: float
    confidence: float
    scope: str
    owner_id: str | None
    tags: tuple[str, ...]
    key: str | None
    salience: float = SALIENCE_START  # how much the claim matters: +0.1 per restatement, 1.0 when pinned
    source_at: float = 0.0  # simulated time of the user message the claim stands on
    source_session: str = ""  # that message's session id ...
    source_turn: int = 0  # ... and 0-based turn within it
    entities: tuple[str, ...] = ()  # the named entities it mentions (its entity pages)
    supersedes: str | None = None
    superseded_by: str | None = None

    @property
    def active(self) -> bool:
        return self.superseded_by is None

    @property
    def section(self) -> str:
        return section_of(self.kind)


@dataclass(frozen=True)
class ForgetPlan:
    """A read-only inventory: what will be retracted, what will be edited in place, where it was found."""

    claim_ids: tuple[str, ...]  # retracted, including superseded history and fuzzy neighbours
    quote_edits: tuple[str, ...]  # other claims whose quote repeats the information (edited in place)
    places: tuple[str, ...]  # every location, for the user-facing summary (ids and sections, never content)
    search_texts: tuple[str, ...]  # the retracted texts: verified absent by exact and fuzzy search afterwards
    search_query: str | None = None  # the selector's query: verified absent by exact search


@dataclass(frozen=True)
class ForgetCheck:
    exact_hits: int
    fuzzy_hits: int

    @property
    def forgotten(self) -> bool:
        return self.exact_hits == 0 and self.fuzzy_hits == 0


@dataclass
class DiaryLine:
    """One line of a diary file under its `# YYYY-MM-DD` title: a session heading (claim_id None) or an entry
    naming the claim it records (`claim: c-0003`, §6)."""

    text: str
    claim_id: str | None
    session_id: str


Lines = list[tuple[str, str | None]]  # a file as (line text, the claim id it shows or None); line n is `#Ln`


class ClaimsArm(OwnStoreArm):
    name = "claims"
    SEED = "004"
    OPTIONS = ClaimsOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config = options_from(ClaimsOptions, "claims", options)
        self.tool_mode = self.config.tools
        self.claims: dict[str, Claim] = {}
        self.diaries: dict[str, list[DiaryLine]] = {}  # YYYY-MM-DD -> the lines under the day's title
        self.embedder = HashedNgramEmbedder()
        self.session: SessionInfo | None = None
        self.turn_text = ""
        self.turn_at = 0.0  # simulated time of the current user turn
        self.turn_index = -1  # 0-based index of the current user turn in its session
        self.last_forget_check: ForgetCheck | None = None
        self._approved: ForgetPlan | None = None  # the plan the user approved, until it is confirmed
        self._deferred: list[RememberSpec] = []  # write_timing after_reply: the turn's writes until its reply
        self._next_id = 1

    def describe(self) -> dict[str, Any]:
        return {
            "arm": self.name,
            "base": "claims",
            "seed": self.SEED,
            **asdict(self.config),
            "embedding": self.embedder.name if self.config.search == "hybrid" else None,
        }

    def start_session(self, session: SessionInfo) -> None:
        self.session = session
        self.turn_index = -1

    def observe_user_turn(self, text: str) -> None:
        self.turn_text = text
        self.turn_at = self.now()
        self.turn_index += 1

    # --- writes: admission, claims with provenance, supersession, reinforcement, the diary
    def remember(self, spec: RememberSpec) -> None:
        if self.config.write_timing == "after_reply":
            self._deferred.append(spec)
            return
        self._store(spec)

    def observe_answer(self, user_text: str, answer: str, context: MemoryContext) -> None:
        deferred, self._deferred = self._deferred, []
        for spec in deferred:
            self._store(spec)

    def _store(self, spec: RememberSpec) -> None:
        session = self._session()
        refused = self._refusal(spec.content)
        if refused is not None:
            reason, rule = refused
            self.memlog.refused(reason=reason, rule=rule)
            return
        scope, owner = scope_for(spec, session)
        speaker = SPEAKERS.get(spec.source, spec.source)
        now = self.now()
        subject = self._subject_of(spec, scope, owner, speaker)
        if (
            subject is not None
            and " ".join(subject.text.split()).casefold() == " ".join(spec.content.split()).casefold()
        ):
            subject.last_reinforced = now
            subject.confidence = min(1.0, subject.confidence + 0.05)
            subject.salience = min(1.0, subject.salience + SALIENCE_STEP)
            self.memlog.touch(subject.id, reason="reinforce", strength=subject.confidence)
            self._write_diary(subject.id, f"reinforced · confidence {subject.confidence:.2f}")
            return
        quote = WITHHELD_QUOTE if find_secret_rule(self.turn_text) else " ".join(self.turn_text.split())
        claim = Claim(
            id=f"c-{self._next_id:04d}",
            text=spec.content,
            kind=spec.kind,
            speaker=speaker,
            quote=quote,
            learned_at=now,
            last_reinforced=now,
            confidence=CONFIDENCE.get(speaker, 0.5),
            scope=scope,
            owner_id=owner,
            tags=spec.tags,
            key=spec.key,
            salience=1.0 if spec.pin else SALIENCE_START,
            source_at=self.turn_at,
            source_session=session.session_id,
            source_turn=self.turn_index,
            entities=entities_of(spec.content),
        )
        self._next_id += 1
        self.claims[claim.id] = claim
        self.memlog.write(
            claim.id,
            claim.text,
            kind=claim.kind,
            scope=scope,
            owner_id=owner,
            source=spec.source,
            key=spec.key,
            strength=claim.confidence,
        )
        if subject is not None:
            subject.superseded_by = claim.id
            claim.supersedes = subject.id
            self.memlog.forget(subject.id, subject.text, reason="superseded")
        replaces = f"supersedes {subject.id} · " if subject is not None else ""
        self._write_diary(
            claim.id, f"{replaces}{claim.kind} · {' '.join(claim.text.split())} · said by {speaker}"
        )

    def _refusal(self, content: str) -> tuple[str, str] | None:
        """(reason, rule) when the admission rules keep `content` out of memory, else None."""
        rules = "credentials" if self.config.admission == "model" else self.config.admission
        found = refusal(content, rules)
        if found is None and self.config.admission == "model":
            reply = ask_model(
                self.context(),
                "claims:admission",
                ADMISSION_PROMPT + content,
                call_seed=self.context().seed + self._next_id,
            )
            if not reply.strip().lower().startswith("yes"):
                found = ("the model judged it not worth keeping for a later conversation", "model")
        return found

    def _write_diary(self, claim_id: str, entry: str) -> None:
        """Append an entry to today's diary (the day of the simulated clock), under the session's heading."""
        if not self.config.diaries:
            return
        session_id = self._session().session_id
        now = self.now()
        lines = self.diaries.setdefault(day_of(now), [])
        if not any(line.claim_id is None and line.session_id == session_id for line in lines):
            heading = f"## Verified extraction — {clock_of(now)} UTC (session {session_id})"
            lines.append(DiaryLine(heading, None, session_id))
        lines.append(DiaryLine(f"- claim: {claim_id} · {entry}", claim_id, session_id))

    def _subject_of(self, spec: RememberSpec, scope: str, owner: str | None, speaker: str) -> Claim | None:
        """The active claim this write is about (to supersede or reinforce), or None for a new subject."""
        same_place = [
            c for c in self.claims.values() if c.active and c.scope == scope and c.owner_id == owner
        ]
        if speaker == "web":  # untrusted text may only supersede other untrusted text
            same_place = [c for c in same_place if c.speaker == "web"]
        if self.config.supersession == "key" and spec.key is not None:
            # The key names a chain: its live head may be a keyless claim that superseded the keyed one.
            heads = {self._head(c).id for c in self.claims.values() if c.key == spec.key}
            keyed = [c for c in same_place if c.id in heads]
            return max(keyed, key=lambda c: c.learned_at) if keyed else None
        terms = content_terms(spec.content)
        scored = sorted(
            (
                (dice(terms, content_terms(c.text)), c.learned_at, c)
                for c in same_place
                if c.section == section_of(spec.kind)
            ),
            key=lambda entry: (entry[0], entry[1]),
            reverse=True,
        )
        for score, _, claim in scored:
            if score < self.config.similarity:
                return None
            if self.config.judge == "rules" or self._model_says_same_subject(claim, spec.content):
                return claim
        return None

    def _head(self, claim: Claim) -> Claim:
        """The live end of the claim's supersession chain."""
        while claim.superseded_by is not None and claim.superseded_by in self.claims:
            claim = self.claims[claim.superseded_by]
        return claim

    def _model_says_same_subject(self, old: Claim, new_text: str) -> bool:
        prompt = (
            "Two statements from a user's memory. Does the NEW one update or replace the OLD one "
            "(same subject)? "
            f"Answer yes or no.\nOLD: {old.text}\nNEW: {new_text}"
        )
        reply = ask_model(
            self.context(), "claims:supersession", prompt, call_seed=self.context().seed + self._next_id
        )
        return reply.strip().lower().startswith("yes")

    # --- injection: the MEMORY.md projection, the entity index and the pages the turn names
    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext:
        ranked = sorted(self._active_visible(), key=lambda c: (-c.confidence, -c.last_reinforced, c.id))

        def render(kept: list[Claim]) -> str:
            lines = [text for text, _ in self._projection(kept)]
            if self.config.entity_pages:
                lines += self._entity_context(kept, user_text)
            return "\n".join(lines)

        block, kept = fit_block(render, ranked, self.context().budget_tokens)
        items = [{"id": c.id, "tokens": count_tokens(self._line(c))} for c in kept]
        return MemoryContext(block=block, tokens=count_tokens(block), items=items)

    def _entity_context(self, kept: list[Claim], user_text: str) -> list[str]:
        """The injected part of the bank (§2.1, §4.3): the head of the entity index, then the page of every
        entity the user's turn names (read before the reply), both over the injected claims."""
        entities = self._entities(kept)
        if not entities:
            return []
        lines = ["", *self._index(entities[: self.config.index_head])]
        for name in entities:
            if mentions(user_text, name):
                lines += ["", *(text for text, _ in self._page(name, kept))]
        return lines

    def _active_visible(self) -> list[Claim]:
        session = self._session()
        return [c for c in self.claims.values() if c.active and visible_to(c.scope, c.owner_id, session)]

    def _visible(self, claim_id: str | None) -> bool:
        claim = self.claims.get(claim_id or "")
        return claim is not None and visible_to(claim.scope, claim.owner_id, self._session())

    def _line(self, claim: Claim) -> str:
        return memory_line(
            claim.id,
            claim.kind,
            self.now() - claim.learned_at,
            claim.text,
            untrusted=claim.speaker == "web",
            notes=[f"said by {claim.speaker}"],
        )

    def _projection(self, kept: list[Claim]) -> Lines:
        """MEMORY.md of these claims, one (line, claim id or None) per line; line n is `MEMORY.md#Ln`."""
        lines: Lines = [(f"# MEMORY.md ({len(kept)} active claims)", None)]
        for section in SECTIONS:
            lines.append((f"## {section}", None))
            lines.extend(
                (self._line(c), c.id)
                for c in sorted(kept, key=lambda c: (c.learned_at, c.id))
                if c.section == section
            )
        return lines

    def _entities(self, claims: list[Claim]) -> list[str]:
        """The entities these claims name, closest first. Closeness stands in for the seed's (a pipeline's
        judgement): the most claims naming the entity, then the most recently reinforced, then the name."""
        named: dict[str, list[Claim]] = {}
        for claim in claims:
            for entity in claim.entities:
                named.setdefault(entity, []).append(claim)
        return sorted(
            named, key=lambda e: (-len(named[e]), -max(c.last_reinforced for c in named[e]), e.casefold())
        )

    def _index(self, entities: list[str]) -> list[str]:
        return [
            f"# {ENTITY_INDEX} (closest first)",
            *(f"- {name} · {ENTITY_DIR}/{slug(name)}.md" for name in entities),
        ]

    def _page(self, name: str, active: list[Claim]) -> Lines:
        """The entity's page (§7.2's six sections): Facts and Open threads are the active claims naming it
        (commitments are open threads), History the dates and ids of every visible claim naming it,
        superseded ones included (ids only: an old value never reaches the page); the Relationships
        pipeline's three sections stay empty."""
        about = sorted((c for c in active if name in c.entities), key=lambda c: (c.learned_at, c.id))
        history = sorted(
            (c for c in self.claims.values() if name in c.entities and self._visible(c.id)),
            key=lambda c: (c.learned_at, c.id),
        )
        lines: Lines = [(f"# {name}", None)]
        for section in PAGE_SECTIONS:
            lines.append((f"## {section}", None))
            if section == "Facts":
                lines += [(self._line(c), c.id) for c in about if c.section != "Commitments"]
            elif section == "Open threads":
                lines += [(self._line(c), c.id) for c in about if c.section == "Commitments"]
            elif section == "History":
                lines += [
                    (
                        f"- {day_of(c.learned_at)} · {c.id} learned"
                        + (f" · superseded by {c.superseded_by}" if not c.active else ""),
                        None,
                    )
                    for c in history
                ]
        return lines

    def _diary_files(self) -> dict[str, Lines]:
        """memory/YYYY-MM-DD.md for every day with an entry the agent may see (its session headings kept)."""
        files: dict[str, Lines] = {}
        for day in sorted(self.diaries):
            lines = self.diaries[day]
            shown = [line for line in lines if line.claim_id is None or self._visible(line.claim_id)]
            sessions = {line.session_id for line in shown if line.claim_id}
            if sessions:  # a session heading stays while the session has an entry the agent may see
                kept = [(ln.text, ln.claim_id) for ln in shown if ln.claim_id or ln.session_id in sessions]
                files[f"memory/{day}.md"] = [(f"# {day}", None), *kept]
        return files

    def files(self) -> dict[str, Lines]:
        """Every memory file the agent can read, by path: MEMORY.md, the diaries, the entity index and
        pages."""
        active = self._active_visible()
        found = {PROJECTION: self._projection(active), **self._diary_files()}
        entities = self._entities(active) if self.config.entity_pages else []
        if entities:
            found[ENTITY_INDEX] = [(line, None) for line in self._index(entities)]
            found.update({f"{ENTITY_DIR}/{slug(name)}.md": self._page(name, active) for name in entities})
        return found

    def _citations(self) -> dict[str, str]:
        """claim id -> its citation in the standing projection of every active claim the agent sees."""
        projection = self._projection(self._active_visible())
        return {cid: f"{PROJECTION}#L{n}" for n, (_, cid) in enumerate(projection, start=1) if cid}

    # --- the retrieval layer's tools (seed §4)
    def model_tools(self) -> list[dict[str, Any]]:
        """memory_search, memory_get, memory_explain."""
        return CLAIM_TOOLS

    def dispatch_tool(self, name: str, arguments: str) -> str:
        handlers = {
            "memory_search": self._search_tool,
            "memory_get": self._get_tool,
            "memory_explain": self._explain_tool,
        }
        return call_arm_tool(CLAIM_TOOLS, handlers, name, arguments)

    def search(
        self, queries: list[str], max_results: int = 5, min_score: float = 0.0
    ) -> list[dict[str, Any]]:
        """Claims matching any query, best first (scores scaled so the best hit is 1), each with its snippet,
        citation, claim id, URI and status. Active claims are cited in MEMORY.md; with diaries, a superseded
        claim is found through its diary entry (status `superseded`). Entity pages repeat MEMORY.md lines, so
        each claim is one hit at its first citation. Scores: `search: hybrid` fuses BM25 with the stand-in
        embedding (arms/embedding.py); `search: bm25` is BM25 alone."""
        where: dict[str, str] = {}  # claim id -> its first citation in MEMORY.md, then in the diaries
        for path, lines in {
            PROJECTION: self._projection(self._active_visible()),
            **self._diary_files(),
        }.items():
            for n, (_, cid) in enumerate(lines, start=1):
                if cid is not None:
                    where.setdefault(cid, f"{path}#L{n}")
        weight = self.config.vector_weight if self.config.search == "hybrid" else 0.0
        best = hybrid_scores(
            queries,
            {cid: self.claims[cid].text for cid in where},
            self.embedder,
            vector_weight=weight,
            vector_floor=self.config.vector_floor,
        )
        top = max(best.values(), default=0.0)
        if top <= 0:
            return []
        results = []
        for cid in sorted(best, key=lambda cid: (-best[cid], cid)):
            score = round(best[cid] / top, 4)
            if score < min_score or len(results) >= max_results:
                continue
            path, _, line = where[cid].rpartition("#L")
            claim = self.claims[cid]
            results.append(
                {
                    "snippet": claim.text,
                    "path": path,
                    "line": int(line),
                    "citation": where[cid],
                    "claim_id": cid,
                    "uri": URI_PREFIX + cid,
                    "status": "active" if claim.active else "superseded",
                    "score": score,
                }
            )
        return results

    def _search_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        results = self.search(args["queries"], args.get("maxResults", 5), args.get("minScore", 0.0))
        return {"count": len(results), "results": results}

    def _get_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        files = self.files()
        match = _CITATION.match(args["path"].strip())
        if match is None or match.group(1) not in files:
            raise ToolRefused(
                f"unknown path {args['path']!r}: one of {', '.join(files)} (or <path>#L<n>)", "path"
            )
        path = match.group(1)
        lines = [text for text, _ in files[path]]
        cited_from = int(match.group(2)) if match.group(2) else 1
        cited_to = int(match.group(3)) if match.group(3) else (cited_from if match.group(2) else None)
        start = args.get("from", cited_from)
        count = args.get("lines", (cited_to - cited_from + 1) if cited_to else GET_LINES_DEFAULT)
        window = lines[start - 1 : start - 1 + count]
        return {
            "path": path,
            "from": start,
            "lines": len(window),
            "total_lines": len(lines),
            "text": "\n".join(window),
        }

    def _explain_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        given = [args[k] for k in ("id", "uri", "citation") if k in args]
        if len(given) != 1:
            raise ToolRefused("give exactly one of id, uri, citation")
        report = self.explain(given[0])
        return {k: v for k, v in report.items() if k not in ("scope", "owner_id", "tags", "key")}

    # --- provenance
    def resolve_handle(self, handle: str) -> str:
        """The claim id behind a claim id, a `memory://claims/<id>` URI or a citation (`MEMORY.md#L7`,
        `memory/2026-03-02.md#L4`); raises ToolRefused when it names no claim the agent can see."""
        text = handle.strip()
        match = _CITATION.match(text)
        if text.startswith(URI_PREFIX):
            text = text.removeprefix(URI_PREFIX)
        elif match is not None:
            lines = self.files().get(match.group(1), [])
            line = int(match.group(2) or 0)
            text = (lines[line - 1][1] or "") if 0 < line <= len(lines) else ""
        if not self._visible(text):
            raise ToolRefused(f"no claim at {handle!r}")
        return text

    def explain(self, handle: str) -> dict[str, Any]:
        """The provenance report (§6) for a claim id, URI or citation: the claim, its kind and salience, who
        said it and the quote, the dated source message it stands on, when learned and reinforced, its
        confidence, the claims it superseded (oldest last) and the claims that superseded it (newest last),
        and the lines that show it (`citations`: MEMORY.md, diaries, entity pages)."""
        claim = self.claims[handle] if handle in self.claims else self.claims[self.resolve_handle(handle)]
        older, cursor = [], claim.supersedes
        while cursor is not None and cursor in self.claims:
            older.append(cursor)
            cursor = self.claims[cursor].supersedes
        newer, cursor = [], claim.superseded_by
        while cursor is not None and cursor in self.claims:
            newer.append(cursor)
            cursor = self.claims[cursor].superseded_by
        citations = [
            f"{path}#L{n}"
            for path, lines in self.files().items()
            for n, (_, cid) in enumerate(lines, start=1)
            if cid == claim.id
        ]
        return {
            **asdict(claim),
            "status": "active" if claim.active else "superseded",
            "source_message": {
                "text": claim.quote,
                "at": iso_of(claim.source_at),
                "session_id": claim.source_session,
                "turn_index": claim.source_turn,
            },
            "supersedes_chain": older,
            "superseded_by_chain": newer,
            "uri": URI_PREFIX + claim.id,
            "citations": citations,
        }

    # --- forgetting: plan (read-only), then confirm (execute + verify)
    def forget(self, spec: ForgetSpec) -> None:
        plan = self.plan_forget(spec)
        if self.config.forget_approval == "none":
            return  # nobody approved the plan: nothing changes (seed §8: silence is not approval)
        self.approve_forget(plan)  # the task's forget spec is the user's instruction
        self.last_forget_check = self.confirm_forget(plan)

    def approve_forget(self, plan: ForgetPlan) -> None:
        """The user's explicit approval of this plan (seed §8.2); `confirm_forget` executes only an approved
        plan, and each approval serves one confirmation."""
        self._approved = plan

    def plan_forget(self, spec: ForgetSpec) -> ForgetPlan:
        session = self._session()
        visible = {cid: c for cid, c in self.claims.items() if visible_to(c.scope, c.owner_id, session)}
        selected = {
            cid for cid, c in visible.items() if forget_selects(spec, content=c.text, tags=c.tags, key=c.key)
        }
        while True:  # close over supersession history and fuzzy neighbours until nothing new joins
            grown = set(selected)
            for cid in selected:
                claim = visible[cid]
                grown.update(x for x in (claim.supersedes, claim.superseded_by) if x in visible)
                terms, needle = content_terms(claim.text), claim.text.casefold()
                grown.update(
                    other
                    for other, c in visible.items()
                    if needle in c.text.casefold()
                    or dice(terms, content_terms(c.text)) >= self.config.similarity
                )
            if grown == selected:
                break
            selected = grown
        texts = tuple(sorted({visible[cid].text for cid in selected}))
        needles = (*texts, spec.query) if spec.query else texts
        quote_edits = tuple(
            cid
            for cid, c in sorted(visible.items())
            if cid not in selected and any(t.casefold() in c.quote.casefold() for t in needles)
        )
        diary_lines = self._lines_of(self._diary_files(), selected)
        named = {e for cid in selected if visible[cid].active for e in visible[cid].entities}
        pages = sorted(f"{ENTITY_DIR}/{slug(e)}.md" for e in named) if self.config.entity_pages else []
        places = tuple(
            [
                f"claim {cid} ({'MEMORY.md ' + visible[cid].section if visible[cid].active else 'history'})"
                for cid in sorted(selected)
            ]
            + [f"quote of claim {cid} (edited in place)" for cid in quote_edits]
            + [f"diary line {citation}" for citation in diary_lines]
            + [f"entity page {page} (derived: its lines go with the claims)" for page in pages]
        )
        return ForgetPlan(tuple(sorted(selected)), quote_edits, places, texts, spec.query)

    def confirm_forget(self, plan: ForgetPlan) -> ForgetCheck:
        if self._approved != plan:
            raise ForgetNotApproved(
                "claims: no approval of this forget plan; nothing was changed (plan again)"
            )
        self._approved = None
        missing = [cid for cid in (*plan.claim_ids, *plan.quote_edits) if cid not in self.claims]
        if missing:
            raise ForgetIncomplete(
                f"claims: the forget plan is stale ({len(missing)} places changed); plan again"
            )
        removed_lines = self._lines_of({PROJECTION: self._projection(self._active_visible())}, plan.claim_ids)
        removed_lines += self._lines_of(self._diary_files(), plan.claim_ids)
        self._drop_diary_entries(plan.claim_ids)
        for cid in plan.claim_ids:
            claim = self.claims.pop(cid)
            self.memlog.forget(cid, claim.text, reason="manual")
        for claim in self.claims.values():
            if claim.supersedes in plan.claim_ids:
                claim.supersedes = None
            if claim.superseded_by in plan.claim_ids:
                claim.superseded_by = None  # its successor is gone: the claim is the live record again
        for cid in plan.quote_edits:
            self.claims[cid].quote = REDACTED_QUOTE
        self._write_pending(list(plan.claim_ids), removed_lines)
        check = self.verify_forgotten(plan.search_texts, plan.search_query)
        if not check.forgotten:
            raise ForgetIncomplete(
                f"claims: forget verification failed: {check.exact_hits} exact, {check.fuzzy_hits} fuzzy hits"
            )
        return check

    @staticmethod
    def _lines_of(files: dict[str, Lines], claim_ids: Iterable[str]) -> list[str]:
        """The citations (`path#Ln`, in file and line order) of the lines that show these claims."""
        wanted = set(claim_ids)
        return [
            f"{path}#L{n}"
            for path, lines in files.items()
            for n, (_, cid) in enumerate(lines, start=1)
            if cid in wanted
        ]

    def _drop_diary_entries(self, claim_ids: Iterable[str]) -> None:
        """Delete the diary entries of these claims (a day left without entries goes with them)."""
        gone = set(claim_ids)
        for day in list(self.diaries):
            self.diaries[day] = [line for line in self.diaries[day] if line.claim_id not in gone]
            if not any(line.claim_id for line in self.diaries[day]):
                del self.diaries[day]

    def _write_pending(self, claim_ids: list[str], citations: list[str]) -> None:
        """The pending record (seed §8.3): ids and exact line citations only, never the forgotten text;
        written even when both lists are empty."""
        path = Path(self.context().workdir) / "forget" / "pending.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"claims": claim_ids, "citations": citations}
        path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")

    def verify_forgotten(self, texts: tuple[str, ...], query: str | None = None) -> ForgetCheck:
        """Exact (substring, over texts and quotes) and fuzzy (Dice ≥ `similarity`, over texts) search
        of every claim the agent can reach for the retracted texts; the query is searched exactly."""
        session = self._session()
        needles = [t.casefold() for t in (*texts, *([query] if query else []))]
        fuzzy_terms = [content_terms(t) for t in texts]
        exact = fuzzy = 0
        diary_texts = [text.casefold() for lines in self._diary_files().values() for text, _ in lines]
        exact += sum(1 for text in diary_texts if any(n in text for n in needles))
        for claim in self.claims.values():
            if not visible_to(claim.scope, claim.owner_id, session):
                continue
            if any(n in claim.text.casefold() or n in claim.quote.casefold() for n in needles):
                exact += 1
            elif any(
                dice(terms, content_terms(claim.text)) >= self.config.similarity for terms in fuzzy_terms
            ):
                fuzzy += 1
        return ForgetCheck(exact, fuzzy)

    def end_session(self, session: SessionInfo) -> None:
        disposed = [
            c for c in self.claims.values() if c.scope == "session" and c.owner_id == session.session_id
        ]
        for claim in disposed:
            del self.claims[claim.id]
            self.memlog.forget(claim.id, claim.text, reason="agent-disposed")
        self._drop_diary_entries(c.id for c in disposed)
        self.session = None

    def _session(self) -> SessionInfo:
        if self.session is None:
            raise RuntimeError("claims: called outside a session")
        return self.session


_QUERIES = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "minItems": 1,
    "maxItems": 3,
    "description": "1-3 queries: the first closest to the user's own words, the others rephrasings.",
}
CLAIM_TOOLS: list[dict[str, Any]] = [
    function_tool(
        "memory_search",
        "Search your memory before answering about past work, decisions, dates, people, preferences or "
        "plans. Returns snippets with a citation (MEMORY.md#L<line>), the claim id, its memory:// URI "
        "and status.",
        {
            "queries": _QUERIES,
            "maxResults": {"type": "integer", "minimum": 1, "maximum": SEARCH_RESULTS_MAX},
            "minScore": {"type": "number", "minimum": 0, "maximum": 1, "description": "Score floor (0-1)."},
        },
        ("queries",),
    ),
    function_tool(
        "memory_get",
        "Read memory text by citation: a path (MEMORY.md) or a search citation such as MEMORY.md#L7 or "
        "MEMORY.md#L7-L9; from (1-based line) and lines override the window.",
        {
            "path": {"type": "string", "minLength": 1},
            "from": {"type": "integer", "minimum": 1},
            "lines": {"type": "integer", "minimum": 1},
        },
        ("path",),
    ),
    function_tool(
        "memory_explain",
        "Where a memory came from: who said it, the quote, when it was learned and reinforced, its "
        "confidence and the claims it replaced or that replaced it. Give exactly one of id, uri, citation.",
        {
            "id": {"type": "string", "minLength": 1, "description": "A claim id such as c-0003."},
            "uri": {"type": "string", "minLength": 1, "description": "memory://claims/<id>"},
            "citation": {"type": "string", "minLength": 1, "description": "MEMORY.md#L<line>"},
        },
    ),
]
