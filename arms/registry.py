"""Arms by name. Adding a policy to this repository is one module in arms/ with its class, plus one line
in `ARMS` below (name -> "module:Class"); named variants (presets) are a base arm plus options, in `VARIANTS`
here or in a YAML arm config file (see runners.armconfig). Classes are imported on first use
(`tasks.registry`).

Arms from outside the repository (plugins) need no edit here: an arm reference `path/to/file.py:Class` or
`package.module:Class` names a class directly (`--arms`, an arm config's `base`), and an installed package
may list its arms in the entry-point group `amnesia_bench.arms` (name = "module:Class"). A plugin is checked
like a built-in arm: it must follow the `Arm` protocol, and its options (its `OPTIONS` dataclass) are
validated by name and type before anything runs."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import re
import sys
import typing
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from arms.base import Arm
from tasks.errors import ArmConfigError, UnknownArmError
from tasks.registry import LazyRegistry

PLUGIN_GROUP = "amnesia_bench.arms"  # the entry-point group of installed plugin arms
_PROTOCOL = [name for name in Arm.__dict__ if not name.startswith("_")]  # describe, start_task, ...

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
        "mcp-memory": "arms.mcp_memory:McpMemoryArm",
        "langgraph-store": "arms.langgraph_store:LangGraphStoreArm",
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
# - `amnesia-seed-lines` — the seed's block format (`block_lines: seed`, seed 000 §6.4): each line shows its
#   remaining life and the budget use ends the block; measures what that hint does against `amnesia`.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "full-memory": ("amnesia", {"auto_expire": False}),
    "amnesia-hard-ttl": ("amnesia", {"default_curve": "flat", "renew_on_inject": "none"}),
    "amnesia-sliding-ttl": ("amnesia", {"default_curve": "flat", "renew_on_inject": "full"}),
    "amnesia-rank-decay": ("amnesia", {"default_curve": "ebbinghaus", "decay_mode": "rank"}),
    "amnesia-keep-all-oracle-key": ("amnesia", {"auto_expire": False, "use_keys": True}),
    "amnesia-relevance": ("amnesia", {"injection_order": "relevance"}),
    "amnesia-seed-lines": ("amnesia", {"block_lines": "seed"}),
    "claims-oracle-key": ("claims", {"supersession": "key"}),
    # `claims` before the seed's memory layers (issue 32): only credentials refused, no diaries, no entity
    # pages, BM25 search (kept so earlier results stay reproducible by name).
    "claims-bare": (
        "claims",
        {"admission": "credentials", "diaries": False, "entity_pages": False, "search": "bm25"},
    ),
    # The arm before issue 32 (whole entries in one system block, recall appended to it, no project notes),
    # kept so that earlier results stay reproducible by name.
    "retrieval-whole-entries": (
        "retrieval",
        {
            "index_lines": "whole",
            "recall_placement": "system",
            "project_notes": False,
            "compaction_flush": False,
        },
    ),
    # The arm before it followed seed 003 (session-end fold, recall injected before every call); "strict" is
    # that arm without the session-end fold (kept so earlier results stay reproducible by name).
    "clue-folding-session-fold": (
        "clue-folding",
        {"fold_at_session_end": True, "recall": "auto", "clue_keys": "scope"},
    ),
    "clue-folding-strict": (
        "clue-folding",
        {"fold_at_session_end": False, "recall": "auto", "clue_keys": "scope"},
    ),
    "memorybank-as-written": ("memorybank", {"formula": "as-written", "days_per_strength": 5.0}),
    "memorybank-code-intended": ("memorybank", {"formula": "intended", "days_per_strength": 5.0}),
    # LangGraph's store with a 7-day TTLConfig renewed on every search (the issue-33 configuration).
    "langgraph-store-7d": ("langgraph-store", {"default_ttl": "7d", "refresh_on_read": True}),
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
    "mcp-memory": "an MCP memory server over stdio (server-memory, amnesia or a YAML profile)",
    "langgraph-store": "LangGraph's SqliteStore: put, search (newest first), delete; TTL off by default",
    "langgraph-store-7d": "langgraph-store with a 7-day TTL renewed on read, swept by the store",
    "amnesia-hard-ttl": "hard TTL (Redis EXPIRE): full strength to the deadline, no renewal",
    "amnesia-sliding-ttl": "sliding TTL (LangGraph store): each injection restarts the ttl",
    "amnesia-rank-decay": "decay that re-ranks and never hides (mem0): nothing forgotten by time",
    "amnesia-keep-all-oracle-key": "keeps everything; a write replaces the memory of the same task key",
    "amnesia-relevance": "amnesia injecting by BM25 relevance to the user message and strength",
    "amnesia-seed-lines": "amnesia with the seed's block lines: each shows its remaining life",
    "claims-oracle-key": "claims superseded by the task's key instead of by similarity",
    "claims-bare": "claims without diaries, entity pages, admission rules or hybrid search",
    "retrieval-whole-entries": "retrieval as first built: whole entries in one system block, recall in it",
    "clue-folding-session-fold": "clue-folding as first built: session-end fold, recall before each call",
    "clue-folding-strict": "clue-folding-session-fold without the session-end fold",
    "memorybank-as-written": "memorybank with the paper's formula, 5 days per unit of strength",
    "memorybank-code-intended": "memorybank with the formula its code intends, 5 days per unit of strength",
}


def is_reference(name: str) -> bool:
    """Whether `name` names a class (`file.py:Class`, `package.module:Class`) rather than a registered arm."""
    return ":" in name


def reference_file(reference: str) -> Path | None:
    """The file a `file.py:Class` reference names (None for `package.module:Class`)."""
    where = reference.rpartition(":")[0]
    return Path(where) if where.endswith(".py") or "/" in where or "\\" in where else None


@cache
def installed_plugins() -> dict[str, tuple[str, str]]:
    """Arms of installed packages (entry-point group `amnesia_bench.arms`): name -> ("module:Class", the
    distribution that lists it). A name a built-in arm or variant already has is left out."""
    found: dict[str, tuple[str, str]] = {}
    for entry in metadata.entry_points(group=PLUGIN_GROUP):
        if entry.name not in ARMS and entry.name not in VARIANTS:
            found[entry.name] = (entry.value, entry.dist.name if entry.dist is not None else "unknown")
    return found


def _import_file(path: Path) -> Any:
    """The module in `path`, imported once under a name made from its resolved path (so a worker process
    imports the same file under the same name)."""
    resolved = path.resolve()
    name = "amnesia_bench_plugin_" + hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise UnknownArmError(f"arm {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@cache
def load_reference(reference: str) -> type:
    """The arm class a reference names (`path/to/file.py:Class` or `package.module:Class`), checked against
    the `Arm` protocol; UnknownArmError naming the reference otherwise."""
    where, _, attribute = reference.rpartition(":")
    if not where or not attribute.isidentifier():
        raise UnknownArmError(f"arm {reference!r}: expected file.py:Class or package.module:Class")
    file = reference_file(reference)
    try:
        if file is not None:
            if not file.is_file():
                raise UnknownArmError(f"arm {reference!r}: no such file {where!r}")
            module = _import_file(file)
        else:
            module = importlib.import_module(where)
    except ImportError as error:
        raise UnknownArmError(f"arm {reference!r}: cannot import {where!r} ({error})") from None
    cls = getattr(module, attribute, None)
    if not isinstance(cls, type):
        raise UnknownArmError(f"arm {reference!r}: {where!r} has no class {attribute!r}")
    missing = [name for name in _PROTOCOL if not callable(getattr(cls, name, None))]
    if missing:
        raise UnknownArmError(f"arm {reference!r}: not an arm (no {missing[0]}); subclass arms.ArmBase")
    return cls


def reference_name(reference: str) -> str:
    """The name an arm given by reference runs under (its logs' folder, the report's rows): its class's
    `name` if it sets one, else the class name in kebab-case (`MyTTLArm` -> `my-ttl-arm`)."""
    cls = load_reference(reference)
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or name in ("", "base"):
        name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", cls.__name__).lower()
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
        raise UnknownArmError(f"arm {reference!r}: name {name!r} must be lowercase letters, digits, . _ -")
    return name


def arm_class(name: str) -> type:
    """The class of a registered arm, an installed plugin or a reference."""
    if is_reference(name):
        return load_reference(name)
    if name in ARMS:
        return ARMS.load(name)
    target, _ = installed_plugins()[name]
    return load_reference(target)


_TYPES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def check_plugin_options(cls: type, arm: str, options: dict[str, Any]) -> None:
    """A plugin's options checked as the built-in arms check theirs: known names (its `OPTIONS` dataclass's
    fields; none without one) and, for fields typed int, float, bool or str, the value's type."""
    fields = dataclasses.fields(cls.OPTIONS) if getattr(cls, "OPTIONS", None) is not None else ()
    names = [field.name for field in fields]
    unknown = sorted(set(options) - set(names))
    if unknown:
        known = f"known: {', '.join(names)}" if names else "it takes no options"
        raise ArmConfigError(f"{arm}: unknown option {unknown[0]!r}; {known}")
    hints = typing.get_type_hints(cls.OPTIONS) if names else {}
    for name, value in options.items():
        wanted = hints.get(name)
        if wanted not in _TYPES:
            continue
        fits = isinstance(value, wanted) and not (wanted is not bool and isinstance(value, bool))
        if wanted is float and isinstance(value, int) and not isinstance(value, bool):
            fits = True
        if not fits:
            raise ArmConfigError(f"{arm}: option {name} must be {_TYPES[wanted]}, got {value!r}")


def resolve(name: str, overrides: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """(base arm name, merged options) for an arm, variant, installed plugin or reference; raises
    UnknownArmError."""
    options: dict[str, Any] = {}
    if name in VARIANTS:
        name, variant_options = VARIANTS[name]
        options = dict(variant_options)
    if is_reference(name):
        load_reference(name)
    elif name not in ARMS and name not in installed_plugins():
        raise UnknownArmError(f"unknown arm {name!r}; known: {', '.join(available())}")
    return name, {**options, **(overrides or {})}


def create_arm(name: str, overrides: dict[str, Any] | None = None) -> Arm:
    """A fresh arm for `name` (an arm, a variant, a plugin or a reference) with `overrides` on top of the
    variant's options."""
    base, options = resolve(name, overrides)
    cls = arm_class(base)
    if base not in ARMS:  # a plugin: its options checked here, as the built-in arms check their own
        check_plugin_options(cls, name, options)
    arm = cls(**options)
    arm.name = name
    return arm


def available() -> list[str]:
    """Every arm, variant and installed plugin name, sorted."""
    return sorted({*ARMS.names(), *VARIANTS, *installed_plugins()})
