"""Arms by name. Adding a policy is one module in arms/ with its class, plus one line in `ARMS` below
(name -> "module:Class"); named variants (presets) are a base arm plus options, in `VARIANTS` here or in a
YAML arm config file (see runners.armconfig). Classes are imported on first use (`tasks.registry`)."""

from __future__ import annotations

from typing import Any

from arms.base import Arm
from tasks.errors import UnknownArmError
from tasks.registry import LazyRegistry

ARMS = LazyRegistry(
    "arm",
    {
        "no-memory": "arms.no_memory:NoMemoryArm",
        "amnesia": "arms.amnesia_arm:AmnesiaArm",
        "agent-managed": "arms.agent_managed:AgentManagedArm",
        "retrieval": "arms.retrieval:RetrievalArm",
        "clue-folding": "arms.clue_folding:ClueFoldingArm",
        "claims": "arms.claims:ClaimsArm",
        "memorybank": "arms.memorybank:MemoryBankArm",
    },
)

# Named presets: (base arm, options).
# Named configurations of the `amnesia` arm that mirror the forgetting semantics of known systems (no
# new code paths: each preset is the engine with a few Config switches, so a difference in a run is the
# policy alone).
#
# - `amnesia-hard-ttl` — Redis `EXPIRE` / cachetools `TTLCache`: a flat curve (full strength until the
#   deadline) and no renewal on read (`renew_on_inject: none`): an item disappears exactly one ttl after
#   it was written.
# - `amnesia-sliding-ttl` — LangGraph store with `refresh_on_read`: a flat curve, and every injection is
#   a read that restarts the ttl (`renew_on_inject: full`).
# - `amnesia-rank-decay` — mem0 platform's decay, which re-ranks and does not hide: an Ebbinghaus curve
#   with `decay_mode: rank`, so a decayed item is ranked lower but still injected, and nothing is forgotten
#   by time alone (past its ttl it keeps decaying instead of being deleted).
# - `amnesia-keep-all-oracle-key` — keep everything (no decay, no expiry) plus supersession by the task's
#   `key` (`use_keys: true`): what an LLM-judged update ("does this replace that?") achieves at best.
# - `amnesia-relevance` — the engine's query-aware order (`injection_order: relevance`): the live, non-stale
#   memories ranked by BM25 relevance to the current user message combined with strength (amnesia.relevance).
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "full-memory": ("amnesia", {"auto_expire": False}),
    "amnesia-hard-ttl": ("amnesia", {"default_curve": "flat", "renew_on_inject": "none"}),
    "amnesia-sliding-ttl": ("amnesia", {"default_curve": "flat", "renew_on_inject": "full"}),
    "amnesia-rank-decay": ("amnesia", {"default_curve": "ebbinghaus", "decay_mode": "rank"}),
    "amnesia-keep-all-oracle-key": ("amnesia", {"auto_expire": False, "use_keys": True}),
    "amnesia-relevance": ("amnesia", {"injection_order": "relevance"}),
    "claims-oracle-key": ("claims", {"supersession": "key"}),
    # The arm before it followed seed 003 (session-end fold, recall injected before every call); "strict" is
    # that arm without the session-end fold (kept so earlier results stay reproducible by name).
    "clue-folding-session-fold": ("clue-folding", {"fold_at_session_end": True, "recall": "auto"}),
    "clue-folding-strict": ("clue-folding", {"fold_at_session_end": False, "recall": "auto"}),
    "memorybank-as-written": ("memorybank", {"formula": "as-written", "days_per_strength": 5.0}),
    "memorybank-code-intended": ("memorybank", {"formula": "intended", "days_per_strength": 5.0}),
}

# One line per arm and variant for `amnesia-bench list arms`: what it does, in the same neutral words for all.
DESCRIPTIONS: dict[str, str] = {
    "no-memory": "a cold start every session: stores nothing, injects nothing",
    "amnesia": "the Amnesia engine: every memory has a ttl and decays; forgotten ones go",
    "full-memory": "amnesia with forgetting switched off: keeps and injects every memory",
    "agent-managed": "the Amnesia engine, managed by the model through the amnesia_* tools",
    "retrieval": "dsh-memory: write gate, BM25 recall, session snapshot, usage eviction",
    "clue-folding": "full-life memory: old turns folded into token clues, recalled by match",
    "claims": "claims with provenance, superseded by similarity; two-phase forgetting",
    "memorybank": "MemoryBank: retention exp(-t/S), renewed on recall, daily random drops",
    "amnesia-hard-ttl": "hard TTL (Redis EXPIRE): full strength to the deadline, no renewal",
    "amnesia-sliding-ttl": "sliding TTL (LangGraph store): each injection restarts the ttl",
    "amnesia-rank-decay": "decay that re-ranks and never hides (mem0): nothing forgotten by time",
    "amnesia-keep-all-oracle-key": "keeps everything; a write replaces the memory of the same task key",
    "amnesia-relevance": "amnesia injecting by BM25 relevance to the user message and strength",
    "claims-oracle-key": "claims superseded by the task's key instead of by similarity",
    "clue-folding-session-fold": "clue-folding as first built: session-end fold, recall before each call",
    "clue-folding-strict": "clue-folding-session-fold without the session-end fold",
    "memorybank-as-written": "memorybank with the paper's formula, 5 days per unit of strength",
    "memorybank-code-intended": "memorybank with the formula its code intends, 5 days per unit of strength",
}


def resolve(name: str, overrides: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """(base arm name, merged options) for an arm or variant name; raises UnknownArmError."""
    options: dict[str, Any] = {}
    if name in VARIANTS:
        name, variant_options = VARIANTS[name]
        options = dict(variant_options)
    if name not in ARMS:
        raise UnknownArmError(f"unknown arm {name!r}; known: {', '.join(available())}")
    return name, {**options, **(overrides or {})}


def create_arm(name: str, overrides: dict[str, Any] | None = None) -> Arm:
    """A fresh arm for `name` (an arm or a variant) with `overrides` on top of the variant's options."""
    base, options = resolve(name, overrides)
    arm = ARMS.load(base)(**options)
    arm.name = name
    return arm


def available() -> list[str]:
    """Every arm and variant name, sorted."""
    return sorted({*ARMS.names(), *VARIANTS})
