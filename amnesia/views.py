"""Small, frozen, JSON-able views of engine state: what the API returns, never the store itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from amnesia import decay

if TYPE_CHECKING:
    from amnesia.config import Config
    from amnesia.item import MemoryItem
    from amnesia.selection import Selection


def _plain(value: Any) -> Any:
    if isinstance(value, _View):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_plain(element) for element in value]
    if isinstance(value, dict):
        return {key: _plain(element) for key, element in value.items()}
    return value


class _View:
    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict (tuples become lists, nested views dicts)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


# The instances' own attribute dict, reached past MemoryView's `__dict__` property (which fills it in first).
_INSTANCE_DICT: Any = _View.__dict__["__dict__"]
_WRITTEN = "_written"  # in an unread view's dict: what its fields are filled in from (see `memory_view`)


@dataclass(frozen=True)
class MemoryView(_View):
    """A written (or restored) memory, as the `written` event and remember() report it.

    The view a write returns is filled in on first use (`memory_view`); reading it in any way — a field,
    `vars()`, `==`, `repr`, pickling or copying — shows every field, as the memory was written."""

    id: str
    content: str
    kind: str
    ttl: float | None
    pinned: bool
    curve: str
    strength: float
    key: str | None
    scope: str
    owner_id: str | None
    source: str
    tokens: int
    created_at: float
    expires_at: float | None  # when it will be forgotten if never touched (None: never automatically)
    tags: tuple[str, ...] = ()
    untrusted: bool = False
    superseded: tuple[str, ...] = ()  # ids this write retired
    evicted: tuple[str, ...] = ()  # ids evicted to make room
    hard_expires_at: float | None = None  # the caller's fixed deadline, if any (expires_at includes it)

    def __getattr__(self, name: str) -> Any:
        # Reached only for a name that is not in the instance dict: an unread view's field, or a wrong name.
        values = _filled(self)
        if name in values:
            return values[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property  # type: ignore[misc]
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]  # vars(view): every field
        return _filled(self)

    def __getstate__(self) -> dict[str, Any]:  # pickle and copy: the fields, not what they are made from
        return dict(_filled(self))

    def to_dict(self) -> dict[str, Any]:
        """`_View.to_dict` from the filled-in fields (in field order; tuples of ids and tags become lists)
        at once: every write announces its view this way."""
        return {name: list(value) if type(value) is tuple else value for name, value in _filled(self).items()}


# The defaulted fields' class attributes would answer for an unread view; the generated __init__ keeps the
# defaults, and `dataclasses.fields` too.
for _name in ("tags", "untrusted", "superseded", "evicted", "hard_expires_at"):
    delattr(MemoryView, _name)


def _filled(view: MemoryView) -> dict[str, Any]:
    """The view's instance dict, with its fields filled in if it was not read yet."""
    values = _INSTANCE_DICT.__get__(view)
    written = values.get(_WRITTEN)
    if written is not None:  # filled, then the snapshot dropped: a reader in another thread sees the fields
        values.update(_written_fields(*written))
        values.pop(_WRITTEN, None)
    return values


def _written_fields(
    item: MemoryItem,
    config: Config,
    ttl: float | None,
    strength: float,
    scope: str,
    owner_id: str | None,
    last_accessed_at: float,
    superseded: tuple[str, ...],
    evicted: tuple[str, ...],
) -> dict[str, Any]:
    """A write's view fields, from its item and the fields of it that a touch or promote may change later
    (taken when it was written)."""
    return {
        "id": item.id,
        "content": item.content,
        "kind": item.kind,
        "ttl": ttl,
        "pinned": item.pinned,
        "curve": item.curve,
        "strength": strength,
        "key": item.key,
        "scope": scope,
        "owner_id": owner_id,
        "source": item.source,
        "tokens": item.tokens,
        "created_at": item.created_at,
        "expires_at": decay.forget_time(
            item.pinned, ttl, strength, item.curve, last_accessed_at, item.expires_at, config
        ),
        "tags": item.tags,
        "untrusted": item.untrusted,
        "superseded": superseded,
        "evicted": evicted,
        "hard_expires_at": item.expires_at,
    }


@dataclass(frozen=True)
class PlugView(_View):
    """One live memory, scalar view (content included: items are at most max_item_bytes)."""

    id: str
    kind: str
    scope: str
    owner_id: str | None
    status: str
    strength: float
    pinned: bool
    tokens: int
    content: str
    created_at: float
    last_accessed_at: float
    expires_at: float | None
    untrusted: bool = False


@dataclass(frozen=True)
class PlugDetail(_View):
    """Everything about one live memory (inspect)."""

    id: str
    kind: str
    scope: str
    owner_id: str | None
    workspace_id: str
    status: str
    strength: float
    base_strength: float
    pinned: bool
    tokens: int
    size_bytes: int
    content: str
    source: str
    untrusted: bool
    curve: str
    ttl: float | None
    created_at: float
    last_accessed_at: float
    access_count: int
    expires_at: float | None
    stale_at: float | None
    hard_expires_at: float | None
    remaining: float | None
    tags: tuple[str, ...]
    key: str | None
    supersedes: str | None
    source_ref: dict[str, Any] | None


@dataclass(frozen=True)
class ForgetSummary(_View):
    count: int
    ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class InjectionDecision(_View):
    id: str
    decision: str  # injected | skipped
    reason: str  # e.g. "fits", "does not fit the remaining budget", "pinned: over budget"
    tokens: int
    strength: float
    pinned: bool
    rank: int = 0  # 1-based position in the injection order
    why: str = ""  # why it ranks there: strength, or relevance score with matched terms (relevance order)


@dataclass(frozen=True)
class InjectionPlan(_View):
    """A dry run of injection (preview): nothing is touched."""

    block: str
    tokens: int
    budget_tokens: int
    items: tuple[dict[str, Any], ...]  # [{"id", "tokens"}] in block order
    decisions: tuple[InjectionDecision, ...]
    pinned_overflow: tuple[str, ...]  # pinned items that did not fit the budget
    excluded: dict[str, int] = field(default_factory=dict)  # {"stale": n, "invisible": n}
    at: float = 0.0
    order: str = "strength"  # the injection order used: strength, or relevance (a query was given)
    query: str | None = None  # the query it was ranked by (None: none given, or the strength order)


@dataclass(frozen=True)
class Injection(_View):
    """What select_for_injection placed in the prompt (and touched per renew_on_inject)."""

    block: str
    tokens: int
    budget_tokens: int
    items: tuple[dict[str, Any], ...]
    at: float
    renew_on_inject: str
    pinned_overflow: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StatusView(_View):
    counts: dict[str, int]  # active, stale, forgotten (audited forgets still within retention), pinned
    tokens: int  # tokens of all live memories
    bytes: int  # content bytes of all live memories (max_store_bytes counts these)
    next_expiry_at: float | None
    recent_forgets: tuple[dict[str, Any], ...]  # last 5: id, reason, at, content_hash
    last_injection: dict[str, Any] | None  # {count, tokens, budget_tokens, at}


@dataclass(frozen=True)
class SweepResult(_View):
    at: float
    settled: int  # live items examined
    forgotten: int
    by_reason: dict[str, int]
    ids: tuple[str, ...]
    stale: int  # items now stale (not injected, still recallable)
    audit_pruned: int


def memory_view(
    item: MemoryItem,
    config: Config,
    superseded: Sequence[MemoryItem] = (),
    evicted: Sequence[MemoryItem] = (),
) -> MemoryView:
    """The view of a memory just written (or restored), naming the items the write retired and evicted.
    Its fields are filled in when it is first read: every `remember` returns one and most callers never read
    it, and filling it in cost a sixth of the write. It keeps the item and the item's fields that can change
    later (strength, clock, ttl, scope, owner), and the ids it names (not the retired items: their content
    is gone)."""
    view = _new_view(MemoryView)
    # One attribute set past the frozen __setattr__: the instance keeps it without a dict of its own until the
    # view is read (a quarter cheaper than handing it a new dict).
    _set_attribute(
        view,
        _WRITTEN,
        (
            item,
            config,
            item.ttl,
            item.strength,
            item.scope,
            item.owner_id,
            item.last_accessed_at,
            tuple([old.id for old in superseded]) if superseded else (),
            tuple([old.id for old in evicted]) if evicted else (),
        ),
    )
    return view


_new_view = object.__new__
_set_attribute = object.__setattr__


def plug_view(item: MemoryItem, now: float, config: Config) -> PlugView:
    """The scalar view of one live memory at `now`."""
    return PlugView(
        id=item.id,
        kind=item.kind,
        scope=item.scope,
        owner_id=item.owner_id,
        status=decay.status(item, now, config),
        strength=decay.strength(item, now, config),
        pinned=item.pinned,
        tokens=item.tokens,
        content=item.content,
        created_at=item.created_at,
        last_accessed_at=item.last_accessed_at,
        expires_at=decay.forget_at(item, config),
        untrusted=item.untrusted,
    )


def plug_detail(item: MemoryItem, now: float, config: Config) -> PlugDetail:
    """Every field of one live memory at `now`: its plug view plus the stored fields and derived times."""
    summary = vars(plug_view(item, now, config))
    return PlugDetail(
        **summary,
        workspace_id=item.workspace_id,
        base_strength=item.strength,
        size_bytes=item.size_bytes,
        source=item.source,
        curve=item.curve,
        ttl=item.ttl,
        access_count=item.access_count,
        stale_at=decay.stale_at(item, config),
        hard_expires_at=item.expires_at,
        remaining=None if summary["expires_at"] is None else max(0.0, summary["expires_at"] - now),
        tags=item.tags,
        key=item.key,
        supersedes=item.supersedes,
        source_ref=item.source_ref,
    )


def plan_view(
    selection: Selection, budget: int, excluded: dict[str, int], now: float, query: str | None = None
) -> InjectionPlan:
    """The preview of a selection: its block and every decision; `query` is the query it was ranked by."""
    return InjectionPlan(
        block=selection.block,
        tokens=selection.tokens,
        budget_tokens=budget,
        items=selection.item_refs(),
        decisions=selection.decisions,
        pinned_overflow=selection.pinned_overflow,
        excluded=excluded,
        at=now,
        order="strength" if query is None else "relevance",
        query=query,
    )


def injection_view(
    selection: Selection, budget: int, excluded: dict[str, int], mode: str, now: float, by_relevance: bool
) -> Injection:
    """What a selection put in the prompt, renewed per `mode` (renew_on_inject); `by_relevance`: ranked by
    a query (the details then say so; the strength order's details are as they always were)."""
    order = {"order": "relevance"} if by_relevance else {}
    return Injection(
        block=selection.block,
        tokens=selection.tokens,
        budget_tokens=budget,
        items=selection.item_refs(),
        at=now,
        renew_on_inject=mode,
        pinned_overflow=selection.pinned_overflow,
        details={
            "skipped": sum(1 for d in selection.decisions if d.decision == "skipped"),
            "excluded": excluded,
            "pinned_overflow": list(selection.pinned_overflow),
            **order,
        },
    )
