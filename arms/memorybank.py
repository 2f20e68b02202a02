"""`memorybank`: the MemoryBank forgetting policy (Zhong et al. 2023, "MemoryBank: Enhancing Large
Language Models with Long-Term Memory"), the best-known published forgetting rule for agent memory.

What it reproduces: every memory has a strength S (1 when written) and a retention R = exp(−t/S), t in
whole days since its last recall; each recall adds 1 to S and resets the clock (t = 0). Forgetting is
stochastic at day granularity: once per simulated day on which the memory is loaded (the first clock
advance of that day), each item draws u ~ U(0,1) from a stream seeded by `ctx.seed`, and is dropped
when u > R. Recall is the top-k relevant memories for the current user text (k = `top_k`, 5), ranked by
BM25 (arms/bm25.py) in place of the paper's dense retriever; the recalled items are the injected ones.

The formula. The paper writes R = e^{−t/S}. Its public code computes `math.exp(-t / 5*S)`, which Python
reads as exp(−(t/5)·S): the stronger a memory, the faster it fades — the opposite of the design.
`formula: intended` (default) computes exp(−t/(c·S)); `formula: as-written` computes exp(−(t/c)·S);
`days_per_strength` is c (default 1, the paper's formula). Variants: `memorybank-as-written`
(as-written, c = 5: the public code's behaviour) and `memorybank-code-intended` (intended, c = 5: what
the code meant).

Left out: the paper stores every dialogue turn plus LLM-written daily summaries and a user portrait;
here the items are the task's remember specs (the same write stream every arm gets), so the comparison
isolates the forgetting policy. Task ttls are ignored (MemoryBank has none)."""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from typing import Any

from amnesia.tokens import count_tokens
from arms.arm_kit import OwnStoreArm, fit_block, forget_selects, memory_line, scope_for, visible_to
from arms.arm_options import check_choice, check_int, check_number, options_from
from arms.base import ArmContext, MemoryContext, SessionInfo
from arms.bm25 import BM25Index
from tasks.errors import ArmConfigError
from tasks.modelapi import Message
from tasks.spec import ForgetSpec, RememberSpec

DAY = 86_400.0


def retention(
    days: float, strength: float, *, formula: str = "intended", days_per_strength: float = 1.0
) -> float:
    """R for a memory last recalled `days` ago. intended: exp(−t/(c·S)); as-written: exp(−(t/c)·S)."""
    if formula == "as-written":
        return math.exp(-(days / days_per_strength) * strength)
    return math.exp(-days / (days_per_strength * strength))


@dataclass(frozen=True)
class MemoryBankOptions:
    formula: str = "intended"  # intended | as-written
    days_per_strength: float = 1.0
    top_k: int = 5

    def __post_init__(self) -> None:
        check_choice("memorybank", "formula", self.formula, ("intended", "as-written"))
        if check_number("memorybank", "days_per_strength", self.days_per_strength) <= 0:
            raise ArmConfigError(
                f"memorybank: option days_per_strength must be > 0, got {self.days_per_strength!r}"
            )
        check_int("memorybank", "top_k", self.top_k, minimum=1)


@dataclass
class BankItem:
    id: str
    content: str
    kind: str
    scope: str
    owner_id: str | None
    source: str
    tags: tuple[str, ...]
    key: str | None
    created_at: float
    last_recall_at: float
    strength: float = 1.0
    last_checked_day: int = 0


class MemoryBankArm(OwnStoreArm):
    name = "memorybank"
    SEED = "MemoryBank (Zhong et al. 2023)"
    OPTIONS = MemoryBankOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config = options_from(MemoryBankOptions, "memorybank", options)
        self.items: dict[str, BankItem] = {}
        self.index = BM25Index()
        self.session: SessionInfo | None = None
        self.written_this_turn: set[str] = set()  # not recalled by the turn that wrote them
        self._next_id = 1

    def describe(self) -> dict[str, Any]:
        return {
            "arm": self.name,
            "base": "memorybank",
            "seed": self.SEED,
            **asdict(self.config),
        }

    def start_task(self, ctx: ArmContext) -> None:
        super().start_task(ctx)
        self.rng = random.Random(ctx.seed)

    def advance_clock(self, now: float) -> None:
        today = int(now // DAY)
        for item in list(self.items.values()):
            if today <= item.last_checked_day:
                continue
            item.last_checked_day = today
            days = math.floor((now - item.last_recall_at) / DAY)
            kept = retention(
                days,
                item.strength,
                formula=self.config.formula,
                days_per_strength=self.config.days_per_strength,
            )
            if self.rng.random() > kept:
                self._drop(item, "stale")

    def start_session(self, session: SessionInfo) -> None:
        self.session = session

    def observe_user_turn(self, text: str) -> None:
        self.written_this_turn.clear()

    def remember(self, spec: RememberSpec) -> None:
        session = self._session()
        scope, owner = scope_for(spec, session)
        now = self.now()
        item = BankItem(
            id=f"b-{self._next_id:04d}",
            content=spec.content,
            kind=spec.kind,
            scope=scope,
            owner_id=owner,
            source=spec.source,
            tags=spec.tags,
            key=spec.key,
            created_at=now,
            last_recall_at=now,
            last_checked_day=int(now // DAY),
        )
        self._next_id += 1
        self.items[item.id] = item
        self.written_this_turn.add(item.id)
        self.index.add(item.id, item.content)
        self.memlog.write(
            item.id,
            item.content,
            kind=item.kind,
            scope=scope,
            owner_id=owner,
            source=item.source,
            key=item.key,
            strength=item.strength,
        )

    def forget(self, spec: ForgetSpec) -> None:
        session = self._session()
        for item in list(self.items.values()):
            if visible_to(item.scope, item.owner_id, session) and forget_selects(
                spec, content=item.content, tags=item.tags, key=item.key
            ):
                self._drop(item, "manual")

    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext:
        session = self._session()
        visible = {
            i.id: i
            for i in self.items.values()
            if visible_to(i.scope, i.owner_id, session) and i.id not in self.written_this_turn
        }
        scores = self.index.scores(user_text, visible)
        ranked = [visible[i] for i in sorted(scores, key=lambda i: (-scores[i], -visible[i].created_at, i))]
        now = self.now()

        def line(item: BankItem) -> str:
            return memory_line(
                item.id,
                item.kind,
                now - item.created_at,
                item.content,
                untrusted=item.source == "auto",
                notes=[f"strength {item.strength:g}"],
            )

        def render(kept: list[BankItem]) -> str:
            return "\n".join([f"MEMORYBANK (recalled {len(kept)} memories)", *map(line, kept)])

        block, kept = fit_block(render, ranked[: self.config.top_k], self.context().budget_tokens)
        items = [{"id": item.id, "tokens": count_tokens(line(item))} for item in kept]
        for item in kept:  # recall strengthens and resets the forgetting clock
            item.strength += 1
            item.last_recall_at = now
            self.memlog.touch(item.id, reason="recall", strength=item.strength)
        return MemoryContext(block=block, tokens=count_tokens(block), items=items)

    def end_session(self, session: SessionInfo) -> None:
        for item in list(self.items.values()):
            if item.scope == "session" and item.owner_id == session.session_id:
                self._drop(item, "agent-disposed")
        self.session = None

    def _drop(self, item: BankItem, reason: str) -> None:
        del self.items[item.id]
        self.index.remove(item.id)
        self.memlog.forget(item.id, item.content, reason=reason)

    def _session(self) -> SessionInfo:
        if self.session is None:
            raise RuntimeError("memorybank: called outside a session")
        return self.session
