"""Arms B and C on one engine: `amnesia` (TTL + decay, arm C) and `full-memory` (arm B).

`full-memory` is a registered variant of this class with `auto_expire: false` and nothing else: the same
engine, store, selection and block format, with forgetting switched off (in the engine that one switch means
no decay, no expiry and no hard deadline — the item's ttl and curve are kept but never applied), so any
difference between B and C in a run is caused by forgetting alone.

Options: any `amnesia.Config` field (e.g. `default_ttl: 7d`, `renew_on_inject: used`), the short aliases
`ttl`/`curve`/`k` for `default_ttl`/`default_curve`/`decay_k`, and five arm options:
- `budget`: token budget of the block for this arm (default: the run's `--budget`);
- `use_keys`: pass the task's `key` to the engine so a new write supersedes the old one (an oracle: the task
  author names the subject; default off, so supersession is not given away);
- `tools`: when the model gets the seven `amnesia_*` tools (amnesia.tools) next to the scripted writes:
  `auto` (default: when the model calls tools, `scripted:tools`), `on`, `off`;
- `query`: what the engine gets as the injection query — `user` (default: the current user message) or
  `none`. It matters only with `injection_order: relevance` (the `amnesia-relevance` preset); the default
  strength order does not use it;
- `ttl_policy`: how the writer's ttl becomes the stored one (`task` default, `fixed:7d`, `scaled:0.5`,
  `noisy:0.8`; see `arms.arm_options.TtlPolicy`), for the task's writes and the model's `amnesia_remember`
  calls alike; pinned writes are never touched. Refused (other than `task`) with `auto_expire: false`
  (`full-memory`): the stored ttl is never applied there.

Scopes: a memory without an explicit scope is workspace-wide for the main agent, session-scoped for a
sub-agent and team-scoped for a team agent (seed §6.10). The main agent sees workspace memories plus its
current session's; a sub-agent sees only its own session's, and they are unplugged (`agent-disposed`) when
its session ends; a team agent sees its own session's and its team's, and the team's are unplugged when the
session marked `ends_team` ends (`Amnesia.end_team`). The store is in memory, ids come
from a counter and the audit secret is derived from the pair seed, so the logs are reproducible.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import asdict, fields
from typing import Any

from amnesia import Amnesia, Config, InMemoryStore
from amnesia.decay import forgets_by_time
from amnesia.durations import MAX_DURATION_SECONDS
from amnesia.errors import AmnesiaError, SecretRefused
from amnesia.tools import TOOLS, dispatch
from amnesia.views import Injection
from arms.arm_options import TtlPolicy
from arms.base import ArmBase, ArmContext, MemoryContext, SessionInfo, check_tool_mode
from tasks.errors import ArmConfigError
from tasks.fairness import TimeRule
from tasks.logschema import MemoryForget, MemoryRefused, MemoryTouch, MemoryWrite
from tasks.modelapi import Message
from tasks.spec import NEVER, ForgetSpec, RememberSpec

_ALIASES = {"ttl": "default_ttl", "curve": "default_curve", "k": "decay_k"}
RELEVANCE_KNOBS = {
    "score": "relevance_weight",
    "gate": "relevance_gate",
}  # each rule's parameter (fusion: none)
LATER_KNOBS = {  # name -> its default
    "relevance_renewal": "injected",
    "supersede_same_subject": False,
    "expiry_from_text": False,
    "calendar_utc_offset": 0.0,
    "block_lines": "full",
}
_ARM_OPTIONS = {"budget", "use_keys", "tools", "query", "ttl_policy"}
QUERY_SOURCES = ("user", "none")
_CONFIG_FIELDS = {f.name for f in fields(Config)}
# Engine fields that make no sense inside a replay (a file path, a host sweep timer): not accepted as options.
_HOST_ONLY = {"db_path", "lock_timeout", "sweep_interval"}
_KNOWN_OPTIONS = (_CONFIG_FIELDS - _HOST_ONLY) | set(_ALIASES) | _ARM_OPTIONS  # an arm's options (every pair)


def _engine_config(options: dict[str, Any], arm: str) -> Config:
    unknown = sorted(set(options) - _KNOWN_OPTIONS)
    if unknown:
        hint = "any amnesia Config field, ttl, curve, k, budget, use_keys, tools, query, ttl_policy"
        raise ArmConfigError(f"{arm}: unknown option {unknown[0]!r} ({hint})")
    mapped = {_ALIASES.get(name, name): value for name, value in options.items() if name not in _ARM_OPTIONS}
    key = tuple((name, type(value), value) for name, value in sorted(mapped.items()))
    try:
        hash(key)
    except TypeError:  # an unhashable value (a list...): Config refuses it, with its own message
        return Config.from_mapping(mapped, origin=arm)
    return _config_of(key, arm)


@functools.lru_cache(maxsize=256)
def _config_of(key: tuple[tuple[str, type, Any], ...], arm: str) -> Config:
    """The Config of a run's arm options, built once per run rather than once per pair (a Config is frozen,
    so the pairs can share it). The key carries each value's type: 1, 1.0 and True stay apart."""
    return Config.from_mapping({name: value for name, _, value in key}, origin=arm)


@functools.lru_cache(maxsize=256)
def _described_config(config: Config) -> dict[str, Any]:
    """`describe()`'s config part (every value is a scalar: callers get a shallow copy)."""
    described = {k: v for k, v in asdict(config).items() if k not in _HOST_ONLY}
    # Only the knobs that act are described (and logged): none of the relevance ones in the seed's strength
    # order, and of the rule's parameters only the chosen rule's.
    idle = set(RELEVANCE_KNOBS.values())
    if config.injection_order == "strength":
        idle |= {"injection_order", "relevance_rule", "relevance_duplicates", "relevance_renewal"}
    else:
        idle.discard(RELEVANCE_KNOBS.get(config.relevance_rule, ""))
    # Knobs added after logs were first compared across revisions are described only when they are set, so
    # a run that leaves them alone logs what it logged before they existed.
    idle |= {name for name, default in LATER_KNOBS.items() if getattr(config, name) == default}
    return {k: v for k, v in described.items() if k not in idle}


class AmnesiaArm(ArmBase):
    name = "amnesia"
    SEED = "000"
    TEAMS = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config = _engine_config(options, self.name)
        budget = options.get("budget")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 0):
            raise ArmConfigError(f"{self.name}: budget: expected a non-negative integer, got {budget!r}")
        self.budget: int | None = budget
        self.use_keys = bool(options.get("use_keys", False))
        self.tool_mode = check_tool_mode(self.name, options.get("tools", "auto"))
        self.query_source = options.get("query", "user")
        if self.query_source not in QUERY_SOURCES:
            raise ArmConfigError(f"{self.name}: query: expected user|none, got {self.query_source!r}")
        self.ttl_policy = TtlPolicy.parse(self.name, options.get("ttl_policy"))
        if self.ttl_policy.kind != "task" and not self.config.auto_expire:
            # With forgetting off the stored ttl is never applied: the option would be logged and do nothing.
            raise ArmConfigError(
                f"{self.name}: option ttl_policy={options['ttl_policy']} does nothing on an arm that never "
                "forgets (auto_expire: false)"
            )
        self._writes = 0  # remember() calls so far in this task: the write index of the noisy ttl policy
        self._tool_writes = 0  # the model's amnesia_remember calls so far (their own noisy stream)
        self.engine: Amnesia | None = None
        self.session: SessionInfo | None = None
        self._ids_by_key: dict[str, list[str]] = {}
        self._unsubscribe: list[Any] = []
        self._last_injection: Injection | None = None  # what the next answer is reported against ("used")

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        """Every engine Config field a replay can use, then the arm options (aliases: ttl, curve, k)."""
        config = {name: value for name, value in Config().to_dict().items() if name not in _HOST_ONLY}
        return {
            **config,
            "budget": None,
            "use_keys": False,
            "tools": "auto",
            "query": "user",
            "ttl_policy": "task",
        }

    def describe(self) -> dict[str, Any]:
        config = dict(_described_config(self.config))
        return {
            "arm": self.name,
            "base": "amnesia",
            "options": dict(self.options),
            "config": config,
            "budget": self.budget,
            "use_keys": self.use_keys,
            "tools": self.tool_mode,
            **({} if self.query_source == "user" else {"query": self.query_source}),  # absent at the default
        }

    def time_rule(self) -> TimeRule | None:
        """The engine's cut-off under this arm's config and ttl policy; None when it never forgets by time
        (`auto_expire: false`, or rank mode, where decay only re-orders)."""
        if not self.config.auto_expire or not forgets_by_time(self.config):
            return None
        policy, default_ttl = self.ttl_policy, self.config.default_ttl

        def stored_ttl(ttl: float | None, seed: int, write_index: int) -> float | None:
            return policy.apply(ttl, default_ttl, seed=seed, write_index=write_index)

        return TimeRule(self.config, stored_ttl)

    # --- lifecycle -------------------------------------------------------------------------------------

    def start_task(self, ctx: ArmContext) -> None:
        super().start_task(ctx)
        self._writes = self._tool_writes = 0
        counter = iter(range(1, 10**12))
        secret = hashlib.sha256(f"amnesia-audit-secret:{ctx.seed}".encode()).digest()
        self.engine = Amnesia(
            store=InMemoryStore(secret=secret),
            config=self.config,
            clock=ctx.clock,
            workspace_id=ctx.task_id,
            id_factory=lambda: f"m-{next(counter):04d}",
        )
        log = ctx.log
        self._unsubscribe = [
            self.engine.on("written", lambda p: log(_write_record(p))),
            self.engine.on("forgotten", lambda p: log(_forget_record(p))),
            self.engine.on("touched", lambda p: log(_touch_record(p))),
        ]

    def advance_clock(self, now: float) -> None:
        self._engine().sweep()

    def start_session(self, session: SessionInfo) -> None:
        self.session = session

    def end_session(self, session: SessionInfo) -> None:
        if session.agent != "main":
            self._engine().end_agent(session.session_id)
        if session.team is not None and session.ends_team:
            self._engine().end_team(session.team)
        self.session = None

    def end_task(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []

    # --- memory ----------------------------------------------------------------------------------------

    def remember(self, spec: RememberSpec) -> None:
        session = self._session()
        scope = spec.scope or {"main": "workspace", "sub": "session", "team": "team"}[session.agent]
        key = spec.key if self.use_keys else None
        write_index, self._writes = self._writes, self._writes + 1
        ttl = spec.ttl
        if not spec.pin:
            ttl = self.ttl_policy.apply(
                ttl, self.config.default_ttl, seed=self._ctx().seed, write_index=write_index
            )
        try:
            view = self._engine().remember(
                spec.content,
                kind=spec.kind,
                **({} if ttl is None else _stored(ttl)),
                pin=spec.pin,
                tags=spec.tags,
                source=spec.source,
                scope=scope,
                owner_id={"workspace": None, "session": session.session_id, "team": session.team}[scope],
                key=key,
            )
        except SecretRefused as error:
            self._ctx().log(MemoryRefused(reason="secret refused", rule=error.rule))
            return
        except AmnesiaError as error:
            self._ctx().log(MemoryRefused(reason=str(error), rule=type(error).__name__))
            return
        if spec.key is not None:
            self._ids_by_key.setdefault(spec.key, []).append(view.id)

    def forget(self, spec: ForgetSpec) -> None:
        engine = self._engine()
        if spec.key is not None and not self.use_keys:
            # The engine never saw the key (no oracle supersession); forget the items written under it by id.
            for item_id in self._ids_by_key.pop(spec.key, []):
                if engine.inspect(item_id) is not None:
                    engine.forget(item_id)
        if spec.key is not None and self.use_keys:
            engine.forget(key=spec.key)
        if spec.query is not None:
            engine.forget(query=spec.query)
        if spec.tags:
            engine.forget(tags=list(spec.tags))

    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext:
        session = self._session()
        budget = self._ctx().budget_tokens if self.budget is None else self.budget
        injection = self._engine().select_for_injection(
            budget,
            owner_id=session.session_id,
            include_workspace=session.agent == "main",
            query=user_text if self.query_source == "user" else None,
            team_id=session.team,
        )
        self._last_injection = injection
        return MemoryContext(
            block=injection.block,
            tokens=injection.tokens,
            items=[dict(item) for item in injection.items],
            details=dict(injection.details),
        )

    def observe_answer(self, user_text: str, answer: str, context: MemoryContext) -> None:
        if self.config.renew_on_inject == "used" and self._last_injection is not None:
            self._engine().report_answer(self._last_injection, answer, question=user_text)

    # --- model tools (seed §6.3) ------------------------------------------------------------------------

    def model_tools(self) -> list[dict[str, Any]]:
        """The seven `amnesia_*` tools (amnesia.tools)."""
        return TOOLS

    def dispatch_tool(self, name: str, arguments: str) -> str:
        """Run one tool call as the current agent: the main agent sees the workspace and its session, a
        sub-agent only its own session, a team agent its own session and its team's."""
        session = self._session()
        return dispatch(
            self._engine(),
            name,
            arguments,
            owner_id=session.session_id,
            include_workspace=session.agent == "main",
            ttl_rule=None if self.ttl_policy.kind == "task" else self._tool_ttl,  # task: the model's ttl
            team_id=session.team,
        )

    def _tool_ttl(self, ttl: float | None) -> float | None:
        """The ttl stored for a non-pinned `amnesia_remember` call that asked for `ttl`: the ttl policy, as
        for the task's writes."""
        write_index, self._tool_writes = self._tool_writes, self._tool_writes + 1
        return self.ttl_policy.apply(
            ttl, self.config.default_ttl, seed=self._ctx().seed, write_index=write_index, stream="tool"
        )

    # --- helpers ---------------------------------------------------------------------------------------

    def _engine(self) -> Amnesia:
        if self.engine is None:
            raise RuntimeError("amnesia arm: start_task was not called")
        return self.engine

    def _ctx(self) -> ArmContext:
        if self.ctx is None:
            raise RuntimeError("amnesia arm: start_task was not called")
        return self.ctx

    def _session(self) -> SessionInfo:
        if self.session is None:
            raise RuntimeError("amnesia arm: no session is open")
        return self.session


def _stored(ttl: float) -> dict[str, Any]:
    """The engine's ttl (and curve) for a write's stored ttl. The engine takes no ttl only with a pin, so a
    `never` ttl is its longest one (100 years) on a flat curve: it neither decays nor expires in any replay,
    and it ranks as full memory ranks."""
    return {"ttl": float(MAX_DURATION_SECONDS), "curve": "flat"} if ttl == NEVER else {"ttl": ttl}


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isinf(value) else value


def _write_record(payload: dict[str, Any]) -> MemoryWrite:
    return MemoryWrite(
        item_id=payload["id"],
        content=payload["content"],
        kind=payload["kind"],
        ttl=payload["ttl"],
        pinned=payload["pinned"],
        scope=payload["scope"],
        owner_id=payload["owner_id"],
        key=payload["key"],
        source=payload["source"],
        curve=payload["curve"],
        strength=payload["strength"],
        tokens=payload["tokens"],
        expires_at=_finite(payload.get("expires_at")),
    )


def _forget_record(payload: dict[str, Any]) -> MemoryForget:
    return MemoryForget(item_id=payload["id"], reason=payload["reason"], content_hash=payload["content_hash"])


def _touch_record(payload: dict[str, Any]) -> MemoryTouch:
    return MemoryTouch(item_id=payload["id"], strength=payload["strength"], reason=payload["reason"])
