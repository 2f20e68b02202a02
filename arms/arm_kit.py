"""Small pieces shared by the rule-based arms that keep their own store (retrieval, clue folding, claims,
MemoryBank): scope visibility, forget selectors, memory lines, budget fitting and the memory log records."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from amnesia.durations import format_duration
from amnesia.tokens import count_tokens
from arms.base import ArmBase, ArmContext, SessionInfo
from tasks.logschema import MemoryForget, MemoryRefused, MemoryTouch, MemoryWrite
from tasks.spec import ForgetSpec, RememberSpec

T = TypeVar("T")


def scope_for(spec: RememberSpec, session: SessionInfo) -> tuple[str, str | None]:
    """(scope, owner_id) of a write: the spec's scope, else workspace for the main agent, session for a sub
    and team for a team agent (only arms with `TEAMS` see one); a session write is owned by the session, a
    team write by the team."""
    scope = spec.scope or {"sub": "session", "team": "team"}.get(session.agent, "workspace")
    return scope, {"session": session.session_id, "team": session.team}.get(scope)


def visible_to(scope: str, owner_id: str | None, session: SessionInfo) -> bool:
    """A sub-agent sees only its own session memories, a team agent those and its team's; the main agent
    sees workspace + its session's."""
    own = scope == "session" and owner_id == session.session_id
    if session.agent == "sub":
        return own
    if session.agent == "team":
        return own or (scope == "team" and session.team is not None and owner_id == session.team)
    return scope == "workspace" or own


def forget_selects(
    spec: ForgetSpec, *, content: str, tags: Sequence[str] = (), key: str | None = None
) -> bool:
    """Whether a forget selector names this memory: same key, a shared tag, or the query as a substring."""
    if spec.key is not None and key == spec.key:
        return True
    if spec.tags and set(spec.tags) & set(tags):
        return True
    return bool(spec.query) and spec.query.casefold() in content.casefold()


def memory_line(
    item_id: str, label: str, age: float, content: str, *, untrusted: bool = False, notes: Sequence[str] = ()
) -> str:
    """`- [id] label · written 2d ago[ · untrusted][ · note...] · content` (the scripted model reads
    the age)."""
    parts = [f"- [{item_id}] {label}", f"written {format_duration(max(age, 0.0))} ago"]
    if untrusted:
        parts.append("untrusted")
    parts.extend(notes)
    parts.append(" ".join(content.split()))
    return " · ".join(parts)


def fit_block(
    render: Callable[[list[T]], str], ranked: Sequence[T], budget_tokens: int
) -> tuple[str, list[T]]:
    """Greedily keep items in rank order while the rendered block stays within the budget ("" if none
    fits)."""
    kept: list[T] = []
    block = ""
    for item in ranked:
        candidate = render([*kept, item])
        if count_tokens(candidate) <= budget_tokens:
            kept.append(item)
            block = candidate
    return block, kept


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _type_error(schema: Mapping[str, Any], value: Any) -> str | None:
    expected = schema.get("type")
    if expected is None:
        return None
    allowed = (expected,) if isinstance(expected, str) else tuple(expected)
    for name in allowed:
        if name == "null" and value is None:
            return None
        if isinstance(value, _JSON_TYPES.get(name, ())) and not (
            isinstance(value, bool) and name in ("integer", "number")
        ):
            if name == "string" and not value.strip() and schema.get("minLength"):
                return "must not be empty"
            if name in ("integer", "number") and value < schema.get("minimum", value):
                return f"must be >= {schema['minimum']}"
            if name in ("integer", "number") and value > schema.get("maximum", value):
                return f"must be <= {schema['maximum']}"
            if name == "array" and not schema.get("minItems", 0) <= len(value) <= schema.get(
                "maxItems", 10**9
            ):
                return f"needs {schema.get('minItems', 0)} to {schema.get('maxItems')} items"
            if name == "array" and "items" in schema:
                problems = [_type_error(schema["items"], item) for item in value]
                return next((f"item: {p}" for p in problems if p), None)
            return None
    return f"expected {' or '.join(allowed)}, got {type(value).__name__}"


def call_arm_tool(
    tools: Sequence[Mapping[str, Any]],
    handlers: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]],
    name: str,
    arguments: str,
) -> str:
    """Run one model tool call against an arm's store: the arguments are checked against the tool's JSON
    schema (required, types, no unknown fields) and every problem comes back to the model as a small
    `{"error": ..., "field": ...}` object, never as an exception. Returns compact JSON text."""
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}
    if name not in schemas or name not in handlers:
        result: dict[str, Any] = {"error": f"unknown tool {name!r}; offered: {', '.join(sorted(schemas))}"}
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as error:
        args, result = None, {"error": f"arguments are not JSON: {error.msg}"}
    if args is not None:
        result = _checked_call(schemas[name], handlers[name], args)
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def _checked_call(
    schema: Mapping[str, Any], handler: Callable[[dict[str, Any]], dict[str, Any]], args: Any
) -> dict[str, Any]:
    if not isinstance(args, dict):
        return {"error": "arguments must be a JSON object"}
    properties = schema.get("properties", {})
    for field in schema.get("required", ()):
        if field not in args:
            return {"error": "missing required field", "field": field}
    for field, value in args.items():
        if field not in properties:
            return {"error": f"unknown field; allowed: {', '.join(properties)}", "field": field}
        problem = _type_error(properties[field], value)
        if problem is not None:
            return {"error": problem, "field": field}
    try:
        return handler(args)
    except ToolRefused as refused:
        return {"error": str(refused), **({"field": refused.field} if refused.field else {})}


class ToolRefused(Exception):
    """A tool call that cannot be served (a bad handle, an unknown path); told to the model, not raised."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class MemoryLog:
    """Writes the memory records of docs/ARCHITECTURE.md with every field present (null where an arm
    has no notion)."""

    def __init__(self, ctx: ArmContext):
        self.ctx = ctx

    def write(
        self,
        item_id: str,
        content: str,
        *,
        kind: str,
        scope: str,
        owner_id: str | None,
        source: str,
        key: str | None = None,
        pinned: bool = False,
        ttl: float | None = None,
        strength: float | None = None,
        expires_at: float | None = None,
    ) -> None:
        self.ctx.log(
            MemoryWrite(
                item_id=item_id,
                content=content,
                kind=kind,
                ttl=ttl,
                pinned=pinned,
                scope=scope,
                owner_id=owner_id,
                key=key,
                source=source,
                curve=None,
                strength=strength,
                tokens=count_tokens(content),
                expires_at=expires_at,
            )
        )

    def write_spec(
        self,
        item_id: str,
        spec: RememberSpec,
        *,
        scope: str,
        owner_id: str | None,
        ttl: float | None,
        expires_at: float | None = None,
    ) -> None:
        """`write` for a task's write as given (content, kind, source, key, pin from `spec`), with the scope
        and ttl the arm gave it."""
        self.write(
            item_id,
            spec.content,
            kind=spec.kind,
            scope=scope,
            owner_id=owner_id,
            source=spec.source,
            key=spec.key,
            pinned=spec.pin,
            ttl=ttl,
            expires_at=expires_at,
        )

    def touch(self, item_id: str, *, reason: str, strength: float | None = None) -> None:
        self.ctx.log(MemoryTouch(item_id=item_id, strength=strength, reason=reason))

    def forget(self, item_id: str, content: str, *, reason: str) -> None:
        self.ctx.log(MemoryForget(item_id=item_id, reason=reason, content_hash=content_hash(content)))

    def refused(self, *, reason: str, rule: str) -> None:
        self.ctx.log(MemoryRefused(reason=reason, rule=rule))


class OwnStoreArm(ArmBase):
    """Base of the arms that keep their own store: the task context, the simulated time and the memory log."""

    memlog: MemoryLog

    def start_task(self, ctx: ArmContext) -> None:
        super().start_task(ctx)
        self.memlog = MemoryLog(ctx)

    def context(self) -> ArmContext:
        if self.ctx is None:
            raise RuntimeError(f"{self.name}: start_task was not called")
        return self.ctx

    def now(self) -> float:
        return self.context().clock.now()
