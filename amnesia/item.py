"""`MemoryItem`: one unit on the memory bus (seed 000 §5.2), and its validation on write: `new_item` turns
the arguments of `remember` into a checked item, `validate_item` checks a fully built one."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, get_args

from amnesia.checks import check_choice, check_time
from amnesia.durations import MAX_DURATION_SECONDS, parse_duration
from amnesia.errors import InvalidInput
from amnesia.safety import refuse_injection, refuse_secrets
from amnesia.tokens import count_tokens

if TYPE_CHECKING:
    from amnesia.config import Config

Kind = Literal["fact", "preference", "episode", "task-context"]
Scope = Literal["workspace", "session", "team"]
Source = Literal["tool", "user", "auto"]
Curve = Literal["flat", "linear", "ebbinghaus"]
Status = Literal["active", "stale", "forgotten"]

KINDS: tuple[str, ...] = get_args(Kind)
SCOPES: tuple[str, ...] = get_args(Scope)
SOURCES: tuple[str, ...] = get_args(Source)
CURVES: tuple[str, ...] = get_args(Curve)

MAX_TAGS = 32
MAX_TAG_CHARS = 64
MAX_KEY_CHARS = 200
UNSET: Any = object()  # "argument not given" (None is a meaningful ttl: no expiry, pinned only)


@dataclass(slots=True)
class MemoryItem:
    """A stored memory. `strength` is the *base* strength settled at `last_accessed_at`; the current strength
    is derived from it by `amnesia.decay` and never written back (so decay does not compound)."""

    id: str
    content: str
    kind: Kind = "fact"
    scope: Scope = "workspace"
    workspace_id: str = "default"
    owner_id: str | None = None  # scope=session -> session id; scope=team -> team id
    source: Source = "user"
    created_at: float = 0.0
    last_accessed_at: float = 0.0  # last injection/recall: the decay clock starts here (sliding renewal)
    access_count: int = 0
    ttl: float | None = None  # seconds; None only when pinned
    pinned: bool = False
    curve: Curve = "ebbinghaus"
    strength: float = 1.0
    status: Status = "active"
    tags: tuple[str, ...] = ()
    source_ref: dict[str, Any] | None = None
    key: str | None = None  # the subject: a new write with the same key supersedes this one
    supersedes: str | None = None  # id of the item this one replaced
    expires_at: float | None = None  # hard deadline that no access moves
    tokens: int = 0  # amnesia.tokens.count_tokens(content)
    size_bytes: int = field(default=0)  # len(content.encode()), what max_store_bytes counts

    @property
    def untrusted(self) -> bool:
        return self.source == "auto"

    def to_dict(self) -> dict[str, Any]:
        data = {spec.name: getattr(self, spec.name) for spec in fields(self)}
        data["tags"] = list(self.tags)
        data["source_ref"] = None if self.source_ref is None else dict(self.source_ref)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryItem:
        return cls(**{**data, "tags": tuple(data.get("tags", ()))})


# `new_item` makes an item as the class call would, in two steps (see there).
_new_object = object.__new__
_init_item = MemoryItem.__init__


def normalize_tags(tags: Any) -> tuple[str, ...]:
    """Lower-case, trim, inner whitespace -> '-', de-duplicated in first-seen order."""
    if tags is None:
        return ()
    if isinstance(tags, str):
        tags = [tags]
    try:
        raw = list(tags)
    except TypeError:
        raise InvalidInput(f"tags: expected a list of strings, got {type(tags).__name__}") from None
    normalized: list[str] = []
    for tag in raw:
        if not isinstance(tag, str):
            raise InvalidInput(f"tags: expected strings, got {type(tag).__name__}")
        clean = re.sub(r"\s+", "-", tag.strip().lower())
        if not clean:
            raise InvalidInput("tags: empty tag")
        if len(clean) > MAX_TAG_CHARS:
            raise InvalidInput(f"tags: tag longer than {MAX_TAG_CHARS} characters")
        if clean not in normalized:
            normalized.append(clean)
    if len(normalized) > MAX_TAGS:
        raise InvalidInput(f"tags: at most {MAX_TAGS} tags, got {len(normalized)}")
    return tuple(normalized)


def validate_item(item: MemoryItem, *, max_item_bytes: int) -> None:
    """Checks a fully built item before it is stored. Messages name the field, never the content."""
    if not isinstance(item.content, str):
        raise InvalidInput("content: must be a non-empty string")
    _check_fields(item, max_item_bytes, choices=True)


def _check_size(size_bytes: int, max_item_bytes: int) -> None:
    if size_bytes > max_item_bytes:
        raise InvalidInput(f"content: {size_bytes} bytes exceeds max_item_bytes ({max_item_bytes})")


def _check_fields(item: MemoryItem, max_item_bytes: int, *, choices: bool, ttl_required: bool = True) -> None:
    """`validate_item`'s checks of a built item whose content is a string; `choices` False skips the kind,
    scope and source choices (`new_item` has checked them already); `ttl_required` False lets an unpinned
    item have no ttl (it came from a `default_ttl` of 0: no expiry by default, seed §6.8)."""
    if (
        not item.content or item.content.isspace()
    ):  # nothing but whitespace: `not content.strip()`, less a copy
        raise InvalidInput("content: must be a non-empty string")
    _check_size(item.size_bytes, max_item_bytes)
    if choices:
        check_choice("kind", item.kind, KINDS)
        check_choice("scope", item.scope, SCOPES)
        check_choice("source", item.source, SOURCES)
    if item.curve not in CURVES:
        check_choice("curve", item.curve, CURVES)
    if item.owner_id is not None and (not isinstance(item.owner_id, str) or not item.owner_id):
        raise InvalidInput(f"owner_id: expected a non-empty string, got {item.owner_id!r}")
    if item.scope == "workspace" and item.owner_id is not None:
        raise InvalidInput("owner_id: workspace memories have no owner (use scope session or team)")
    if item.scope != "workspace" and not item.owner_id:
        raise InvalidInput(f"owner_id: required for scope {item.scope}")
    if item.ttl is None and not item.pinned and ttl_required:
        raise InvalidInput("ttl: may be null only for pinned memories")
    if item.ttl is not None and (not math.isfinite(item.ttl) or item.ttl <= 0):
        raise InvalidInput(f"ttl: must be a positive number of seconds, got {item.ttl!r}")
    if item.expires_at is not None:
        if not math.isfinite(item.expires_at):
            raise InvalidInput(f"expires_at: must be a finite time, got {item.expires_at!r}")
        if item.pinned:
            raise InvalidInput(
                "expires_at: a pinned memory cannot carry a hard deadline (unpin it or drop it)"
            )
        if item.expires_at <= item.created_at:
            raise InvalidInput(f"expires_at: {item.expires_at} is not after the write time {item.created_at}")
    if item.key is not None and (not isinstance(item.key, str) or not item.key.strip()):
        raise InvalidInput("key: must be a non-empty string")
    if item.key is not None and len(item.key) > MAX_KEY_CHARS:
        raise InvalidInput(f"key: longer than {MAX_KEY_CHARS} characters")


def resolve_ttl(ttl: Any, pin: bool, config: Config) -> float | None:
    """Seconds of shelf life for a write: UNSET -> the default (none for a pin, or when `default_ttl` is 0:
    no expiry by default, seed §6.8), a duration -> seconds; None only for a pin."""
    if ttl is UNSET:
        return None if pin or not config.default_ttl else config.default_ttl
    if ttl is None:
        if not pin:
            raise InvalidInput("ttl: may be null only for pinned memories")
        return None
    try:
        seconds = parse_duration(ttl, field="ttl")
    except ValueError as error:
        raise InvalidInput(str(error)) from None
    if seconds <= 0:
        raise InvalidInput(f"ttl: must be positive, got {ttl!r}")
    return seconds


def refuse_secrets_beside_content(key: Any, tags: Any, source_ref: Any) -> None:
    """The other text a write stores — its key, its tags and the strings of its source reference — is
    scanned for credentials like its content (SecretRefused naming the field and the rule). A source
    reference's entries are scanned as `name: value`, so `{"password": "hunter2!"}` reads as it would in
    prose; it is walked without recursion (it may be nested deeply)."""
    if isinstance(key, str):
        refuse_secrets(key, "key")
    if isinstance(tags, (str, list, tuple)):  # anything else is refused by normalize_tags
        for tag in [tags] if isinstance(tags, str) else tags:
            if isinstance(tag, str):
                refuse_secrets(tag, "tags")
    pending: list[Any] = [source_ref]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            for name, inner in value.items():
                if isinstance(inner, (dict, list, tuple)):
                    pending.append(inner)
                refuse_secrets(
                    f"{name}: {inner}" if isinstance(inner, (str, int, float)) else str(name), "source_ref"
                )
        elif isinstance(value, (list, tuple)):
            pending.extend(value)
        elif isinstance(value, str):
            refuse_secrets(value, "source_ref")


def new_item(
    config: Config,
    make_id: Callable[[], str],
    content: Any,
    kind: str,
    ttl: Any,
    pin: Any,
    curve: str | None,
    tags: Any,
    source: str,
    scope: str,
    owner_id: str | None,
    key: str | None,
    supersedes: str | None,
    expires_at: Any,
    source_ref: Any,
    workspace_id: str,
    now: float,
) -> MemoryItem:
    """The checked item `remember` writes. Refuses credentials, and instructions in text that is not the
    user's; untrusted (auto) text cannot be pinned and its ttl is capped. `make_id` is called once the
    content, choices, pin, ttl and deadline have passed their checks (tags and the built item come after).
    (Every write comes through here: `remember` passes the arguments by position, which is cheaper.)"""
    if not isinstance(content, str):
        raise InvalidInput(f"content: expected a string, got {type(content).__name__}")
    if content.isascii():  # one byte per character, and nothing that could fail to encode
        size_bytes = len(content)
    else:
        try:
            size_bytes = len(content.encode("utf-8"))
        except UnicodeEncodeError as error:  # lone surrogates: undecodable bytes smuggled into a str
            raise InvalidInput(f"content: not valid UTF-8 text (character {error.start})") from None
    _check_size(size_bytes, config.max_item_bytes)  # before the scans, whose cost grows with the text
    refuse_secrets(content)
    if kind not in KINDS or source not in SOURCES or scope not in SCOPES:  # one test, not three calls
        check_choice("kind", kind, KINDS)
        check_choice("source", source, SOURCES)
        check_choice("scope", scope, SCOPES)
    if source != "user":  # text a tool or web page produced must not smuggle instructions into prompts
        refuse_injection(content)
    if not isinstance(pin, bool):
        raise InvalidInput(f"pin: expected true or false, got {pin!r}")
    if pin and source == "auto":
        raise InvalidInput("pin: memories from an untrusted source (auto) cannot be pinned")
    # Most writes give a float ttl in range: nothing to parse, no call (resolve_ttl would return it as is).
    seconds = ttl if type(ttl) is float and 0.0 < ttl <= MAX_DURATION_SECONDS else None
    if seconds is None:
        seconds = resolve_ttl(ttl, pin, config)
    if source == "auto" and (seconds is None or seconds > config.untrusted_max_ttl):
        seconds = config.untrusted_max_ttl  # untrusted text gets a short shelf life
    if expires_at is not None:
        check_time("expires_at", expires_at)
    if source_ref is not None and not isinstance(source_ref, dict):
        raise InvalidInput("source_ref: expected a mapping")
    if key is not None or tags or source_ref:
        refuse_secrets_beside_content(key, tags, source_ref)
    item_id = make_id()
    # By position, in MemoryItem's field order (keywords cost 3x as much with 22 fields), and through the
    # generated __init__ itself: calling the class goes through type.__call__, which copies the 22 arguments
    # into a new tuple to prepend the instance; calling __init__ is a plain Python-to-Python call.
    item = _new_object(MemoryItem)
    _init_item(
        item,
        item_id,  # id
        content,  # content
        kind,  # type: ignore[arg-type]  # kind
        scope,  # type: ignore[arg-type]  # scope
        workspace_id,  # workspace_id
        owner_id,  # owner_id
        source,  # type: ignore[arg-type]  # source
        now,  # created_at
        now,  # last_accessed_at
        0,  # access_count
        seconds,  # ttl
        pin,  # pinned
        curve or config.default_curve,  # type: ignore[arg-type]  # curve
        1.0,  # strength
        "active",  # status
        () if tags is None or (type(tags) is tuple and not tags) else normalize_tags(tags),  # tags
        source_ref,  # source_ref
        key.strip() if isinstance(key, str) else key,  # key
        supersedes,  # supersedes
        None if expires_at is None else float(expires_at),  # expires_at
        count_tokens(content),  # tokens
        size_bytes,  # size_bytes
    )
    # Most writes (workspace scope, no owner, key or deadline, a ttl) pass every check `_check_fields` makes,
    # and this test of what is known here says so without the call that reads the item back; any other write
    # gets the full checks and their errors. (`seconds`, when not None, is finite and positive: it passed the
    # range test above or `resolve_ttl`, or is the Config's checked cap; the size was checked before the
    # credential scan. A test: no item the checks refuse is returned.)
    if (
        owner_id is None
        and key is None
        and expires_at is None
        and scope == "workspace"
        and seconds is not None
        and item.curve in CURVES
        and not content.isspace()
        and content
    ):
        return item
    # validate_item, less the choices made above (an unpinned item without a ttl got it from resolve_ttl)
    _check_fields(item, config.max_item_bytes, choices=False, ttl_required=False)
    return item
