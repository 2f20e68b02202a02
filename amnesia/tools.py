"""The seven model-facing tools (seed §6.3) as OpenAI tools-format function definitions, and their dispatcher.

`TOOLS` is what a runner passes as `tools=` to a chat-completions call. `dispatch(engine, name, arguments)`
runs one tool call and returns the JSON text to hand back to the model. It never raises at the model: an
unknown tool, bad JSON, a wrong type, an unknown or missing field, or an engine refusal all come back as a
small `{"error": "...", "field": "..."}` object (`field` only when one field is to blame). Every value the
model controls is bounded by the tool's JSON schema (string lengths, array sizes, number ranges) and by the
limits below (the size of the JSON text, its nesting depth, the number of values); the MCP server validates
through this same layer. Results are small views (ids, counts, a few items), never the whole store.

The dispatcher is bound to one agent: `owner_id` is the agent's session (None for the main agent outside any
session), `include_workspace=False` marks a sub-agent, which writes, recalls and forgets only in its own
session, and `team_id` a team agent (a teammate: with `include_workspace=False`), which also reaches the
memories its team shares and by default writes there (seed §6.10). Every tool keeps to what the agent could
recall (`amnesia.caller.Caller`): audit, restore, forget and status' recent forgets included. The model
chooses a scope, never whose session or team it writes to. A host may also give the dispatcher a
`ttl_rule`: how the ttl the model asked for becomes the stored one on a non-pinned `amnesia_remember` (the
benchmark's `ttl_policy` arm option applies to the model's writes through it, as to the task's); the result
the model reads shows the stored ttl. A write's `source` (trust) is the caller's to lower, never to raise: by
default a caller writes as `tool` and may mark a write `auto` (untrusted); only a host that grants
`max_source="user"` lets its caller write the user's own words.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amnesia.caller import Caller
from amnesia.checks import shown
from amnesia.durations import MAX_DURATION_SECONDS, parse_duration
from amnesia.errors import AmnesiaError, NotFound, NotRestorable, one_line
from amnesia.item import MAX_KEY_CHARS, MAX_TAG_CHARS, MAX_TAGS, resolve_ttl

if TYPE_CHECKING:
    from amnesia.engine import Amnesia

KINDS = ("fact", "preference", "episode", "task-context")
SCOPES = ("workspace", "session", "team")
# The sources of a write, least trusted first. A caller may mark its write less trusted than its host allows
# (`max_source`), never more: a model reading a web page may say so, never pass its text off as the user's.
SOURCES_BY_TRUST = ("auto", "tool", "user")
DEFAULT_SOURCE = "tool"
RECALL_LIMIT_MAX = 20
# What amnesia_remember answers (seed §6.3: id, ttl, expiry): the model already has the content it just wrote.
REMEMBER_RESULT_FIELDS = (
    "id",
    "kind",
    "scope",
    "owner_id",
    "ttl",
    "pinned",
    "expires_at",
    "key",
    "superseded",
    "evicted",
)
AUDIT_LIMIT_MAX = 50
# Bounds on what a model sends. The schema ones are in TOOLS (the model and MCP clients see them); these three
# hold before the schema is consulted: a call never needs more, and past them parsing itself is the risk.
MAX_ARGUMENTS_CHARS = 262_144  # the JSON text of one call's arguments
MAX_DEPTH = 3  # arguments object > array > value
MAX_VALUES = 1_000  # JSON values in one call's arguments, containers included
MAX_CONTENT_CHARS = 65_536  # the engine's max_item_bytes (default 2048) refuses most of these anyway
MAX_QUERY_CHARS = 4_096
MAX_ID_CHARS = 64
MAX_TTL_CHARS = 64
MAX_BUDGET_TOKENS = 10_000_000

_TTL = {
    "type": ["string", "number", "null"],
    "maxLength": MAX_TTL_CHARS,
    "maximum": MAX_DURATION_SECONDS,
    "description": "Shelf life: a duration like '15m', '2h30m', '7d', '1w', or seconds. "
    "Omit for the default; null only together with pin=true.",
}
MAX_TTL_MS = int(MAX_DURATION_SECONDS * 1000)  # the seed's ttlMs: the same bound as ttl, in milliseconds
_TTL_MS = {
    "type": ["integer", "null"],
    "minimum": 1,
    "maximum": MAX_TTL_MS,
    "description": "The seed's name for the shelf life, in milliseconds (86400000 = 1 day); give ttl or "
    "ttlMs, not two different values. null only together with pin=true.",
}
_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_ID_CHARS,
    "description": "A memory id such as 'm-3f2a9c1b0d4e'.",
}
_TAGS = {"type": "array", "maxItems": MAX_TAGS, "items": {"type": "string", "maxLength": MAX_TAG_CHARS}}
_QUERY = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS}


def function_tool(
    name: str, description: str, properties: dict[str, Any], required: Sequence[str] = ()
) -> dict[str, Any]:
    """One model tool in the OpenAI tools format (a JSON-schema function, no extra fields allowed); the
    harness's arms build their own tools with it too."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(required),
                "additionalProperties": False,
            },
        },
    }


TOOLS: list[dict[str, Any]] = [
    function_tool(
        "amnesia_remember",
        "Remember one short fact for a limited time, only when the user asks you to. Always give a ttl. "
        "If it replaces an older fact, pass supersedes (that memory's id) or the same key.",
        {
            "content": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_CONTENT_CHARS,
                "description": "One sentence to remember.",
            },
            "kind": {"type": "string", "enum": list(KINDS), "description": "Default 'fact'."},
            "ttl": _TTL,
            "ttlMs": _TTL_MS,
            "pin": {
                "type": "boolean",
                "description": "Keep until explicitly forgotten (needs a user request).",
            },
            "tags": {**_TAGS, "description": "Labels to forget by later."},
            "key": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_KEY_CHARS,
                "description": "Subject; a new write retires the old one.",
            },
            "supersedes": {**_ID, "description": "Id of the memory this one replaces (it is forgotten)."},
            "scope": {
                "type": "string",
                "enum": list(SCOPES),
                "description": "'session' ends with the current task; 'team' is shared with your team and "
                "ends when the team is disposed; default: workspace for the main agent, session for a "
                "sub-agent, team for a team agent.",
            },
            "source": {
                "type": "string",
                "enum": list(SOURCES_BY_TRUST),
                "description": "Where the text came from. 'auto': a tool output or web page (untrusted: "
                "a short shelf life, marked untrusted, cannot replace the user's memories). Default 'tool'; "
                "'user' only where the host allows it.",
            },
        },
        ("content",),
    ),
    function_tool(
        "amnesia_forget",
        "Forget memories now: by id, by a text query, or by tags; all=true with confirm=true forgets "
        "everything you can see.",
        {
            "id": _ID,
            "query": {**_QUERY, "description": "Forget memories whose content matches."},
            "tags": {**_TAGS, "description": "Forget memories with a tag."},
            "all": {
                "type": "boolean",
                "description": "Forget every memory you can see (needs confirm=true).",
            },
            "confirm": {"type": "boolean", "description": "Must be true together with all=true."},
            "scope": {
                "type": "string",
                "enum": list(SCOPES),
                "description": "Only memories of this scope (with id, query, tags or all).",
            },
        },
    ),
    function_tool(
        "amnesia_status",
        "Memory health: counts per status, tokens, next expiry, the last forgets and the last injection.",
        {},
    ),
    function_tool(
        "amnesia_audit",
        "The most recent forget records of memories you could see (id, kind, reason, time, content hash; "
        "the content only in restorable mode).",
        {
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": AUDIT_LIMIT_MAX,
                "description": "Default 10.",
            }
        },
    ),
    function_tool(
        "amnesia_recall",
        "Look up memories matching a query; every match is renewed (its shelf life restarts).",
        {
            "query": {**_QUERY, "description": "Words to look for."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": RECALL_LIMIT_MAX,
                "description": "Default 5.",
            },
        },
        ("query",),
    ),
    function_tool(
        "amnesia_restore",
        "Bring a forgotten memory back from the audit trail (only in restorable mode); it gets a new id.",
        {"id": _ID},
        ("id",),
    ),
    function_tool(
        "amnesia_preview",
        "Dry run: which memories would be injected under the token budget and why; changes nothing.",
        {
            "budget_tokens": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_BUDGET_TOKENS,
                "description": "Default: the configured budget.",
            },
            "query": {
                "type": "string",
                "maxLength": MAX_QUERY_CHARS,
                "description": "The user's current text: ranks the block when injection_order is relevance.",
            },
        },
    ),
]
TOOL_NAMES: tuple[str, ...] = tuple(tool["function"]["name"] for tool in TOOLS)
_SCHEMAS: dict[str, dict[str, Any]] = {
    tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS
}

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    # bool is an int subclass in Python, but JSON true is not a number.
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


class ToolError(Exception):
    """A tool call the dispatcher refuses; becomes `{"error": message, "field": field}` for the model."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def to_dict(self) -> dict[str, str]:
        return {"error": self.message} | ({"field": self.field} if self.field else {})


_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate: not Unicode text, cannot be stored


def _brief(value: Any) -> str:
    """A value as an error message may quote it: at most 40 characters of its JSON, "..." marking a cut
    (its depth is already bounded)."""
    try:
        text = json.dumps(value)
        return text if len(text) <= 40 else text[:40] + "..."
    except ValueError:  # an integer past Python's int-to-text digit limit
        return f"a {type(value).__name__} too large to print"


def _check_shape(arguments: Mapping[str, Any]) -> None:
    """Refuse arguments nested deeper than MAX_DEPTH or holding more than MAX_VALUES values, without
    recursion (a 100,000-deep array must not exhaust the stack)."""
    pending: list[tuple[Any, int]] = [(arguments, 1)]
    seen = 0
    while pending:
        value, depth = pending.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise ToolError(f"arguments: more than {MAX_VALUES} values in one call")
        children = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
        if children and depth >= MAX_DEPTH:
            raise ToolError(f"arguments: nested deeper than {MAX_DEPTH} levels")
        pending.extend((child, depth + 1) for child in children)


def _check_value(field: str, value: Any, spec: Mapping[str, Any]) -> None:
    """Check one value against the small JSON-schema subset the tool definitions use."""
    types = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    if not any(_JSON_TYPES[t](value) for t in types):
        raise ToolError(f"{field}: expected {' or '.join(types)}, got {_brief(value)}", field)
    if value is None:
        return
    if "enum" in spec and value not in spec["enum"]:
        raise ToolError(f"{field}: expected one of {', '.join(spec['enum'])}, got {_brief(value)}", field)
    if isinstance(value, str):
        _check_text(field, value, spec)
    elif isinstance(value, list):
        if len(value) > spec.get("maxItems", len(value)):
            raise ToolError(f"{field}: at most {spec['maxItems']} items, got {len(value)}", field)
        for index, element in enumerate(value):
            _check_value(f"{field}[{index}]", element, spec["items"])
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            raise ToolError(f"{field}: must be a finite number, got {value}", field)
        if "minimum" in spec and value < spec["minimum"]:
            raise ToolError(f"{field}: must be at least {spec['minimum']}, got {_brief(value)}", field)
        if "maximum" in spec and value > spec["maximum"]:
            raise ToolError(f"{field}: must be at most {spec['maximum']}, got {_brief(value)}", field)


def _check_text(field: str, value: str, spec: Mapping[str, Any]) -> None:
    if len(value) < spec.get("minLength", 0):
        raise ToolError(f"{field}: must not be empty", field)
    if len(value) > spec.get("maxLength", len(value)):
        raise ToolError(f"{field}: at most {spec['maxLength']} characters, got {len(value)}", field)
    if _SURROGATE.search(value):
        raise ToolError(f"{field}: holds a lone surrogate (\\ud800-\\udfff), which is not text", field)


def validate_arguments(name: str, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Parse and check a tool call's arguments; raises ToolError naming the tool, field and value. Shared by
    the in-process dispatcher and the MCP server (its resources too): one set of bounds."""
    schema = _SCHEMAS.get(name)
    if schema is None:
        raise ToolError(f"unknown tool {shown(str(name)[:80])}; tools: {', '.join(TOOL_NAMES)}")
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str):
        arguments = _parse(arguments)
    if not isinstance(arguments, Mapping):
        raise ToolError(f"arguments: expected a JSON object, got {type(arguments).__name__}")
    properties = schema["properties"]
    for field in arguments:
        if field not in properties:
            allowed = ", ".join(properties) or "none"
            label = shown(str(field)[:80])
            raise ToolError(f"{label}: unknown field for {name} (allowed: {allowed})", label)
    for field in schema["required"]:
        if field not in arguments:
            raise ToolError(f"{field}: required by {name}", field)
    _check_shape(arguments)
    for field, value in arguments.items():
        _check_value(field, value, properties[field])
    return dict(arguments)


def _parse(text: str) -> Any:
    """A call's JSON text, refused (ToolError) when over MAX_ARGUMENTS_CHARS, not JSON, too deep for the
    parser, or holding a number past Python's digit limit."""
    if len(text) > MAX_ARGUMENTS_CHARS:
        raise ToolError(f"arguments: {len(text)} characters, over the {MAX_ARGUMENTS_CHARS} limit")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolError(f"arguments: not valid JSON ({exc.msg} at char {exc.pos})") from None
    except RecursionError:
        raise ToolError(f"arguments: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # int("9" * 5000): past sys.get_int_max_str_digits
        raise ToolError(f"arguments: not valid JSON ({one_line(exc)[:80]})") from None


TtlRule = Callable[[float | None], float | None]  # requested ttl (seconds; None: not given) -> stored ttl


@dataclass(frozen=True)
class _Agent:
    caller: Caller  # whose memories the tools reach
    ttl_rule: TtlRule | None = None  # the host's rule for the ttl of a non-pinned write (None: as asked)
    max_source: str = DEFAULT_SOURCE  # the most trusted source this caller may declare on a write

    @property
    def owner_id(self) -> str | None:
        return self.caller.owner_id

    @property
    def include_workspace(self) -> bool:
        return self.caller.include_workspace

    @property
    def team_id(self) -> str | None:
        return self.caller.team_id

    @property
    def default_scope(self) -> str:
        """Where a write without a scope goes (seed §6.10): workspace for the main agent, team for a team
        agent, session for a sub-agent."""
        if self.include_workspace:
            return "workspace"
        return "session" if self.team_id is None else "team"

    def owner_of(self, scope: str) -> str | None:
        """The owner a write of `scope` gets: this agent's session or team, never one the model names;
        refused when the agent has none."""
        if scope == "workspace":
            if not self.include_workspace:
                raise ToolError(
                    "scope: this agent does not write workspace memories (ask the main agent to promote)",
                    "scope",
                )
            return None
        owner = self.owner_id if scope == "session" else self.team_id
        if owner is None:
            missing = "no current session" if scope == "session" else "no team"
            raise ToolError(f"scope: this agent has {missing} to write a {scope} memory to", "scope")
        return owner


def _remember(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    scope = args.get("scope", agent.default_scope)
    owner_id = agent.owner_of(scope)
    source = args.get("source", min(DEFAULT_SOURCE, agent.max_source, key=SOURCES_BY_TRUST.index))
    if SOURCES_BY_TRUST.index(source) > SOURCES_BY_TRUST.index(agent.max_source):
        raise ToolError(
            f"source: {source!r} is more trusted than this caller may declare (at most {agent.max_source!r})",
            "source",
        )
    _merge_ttl_ms(args)
    if args.get("pin") and args.get("ttl") is not None:  # seed §6.3: pin means ttl omitted or null
        raise ToolError("ttl: a pinned memory is kept until forgotten; omit ttl or pass null", "ttl")
    options: dict[str, Any] = {"ttl": args["ttl"]} if "ttl" in args else {}
    explicit_null = "ttl" in args and args["ttl"] is None  # left for the engine to refuse: null needs pin
    if agent.ttl_rule is not None and not args.get("pin") and not explicit_null:
        # a ttl given is checked as the engine checks it (the same message when it is bad)
        requested = resolve_ttl(args["ttl"], False, engine.config) if "ttl" in args else None
        stored = agent.ttl_rule(requested)
        options = {} if stored is None else {"ttl": stored}
    view = engine.remember(
        args["content"],
        kind=args.get("kind", "fact"),
        pin=args.get("pin", False),
        tags=tuple(args.get("tags", ())),
        source=source,
        scope=scope,
        owner_id=owner_id,
        key=args.get("key"),
        supersedes=args.get("supersedes"),
        **options,
    )
    written = view.to_dict()
    result = {field: written[field] for field in REMEMBER_RESULT_FIELDS}
    # The seed's own names beside ours (§6.3: `{id, ttlMs, expiresAt}`), in milliseconds of the engine clock.
    result["ttlMs"] = _milliseconds(written["ttl"])
    result["expiresAt"] = _milliseconds(written["expires_at"])
    return result


def _milliseconds(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def _merge_ttl_ms(args: dict[str, Any]) -> None:
    """Fold the seed's `ttlMs` into `ttl` (seconds). Both given: refused unless they name the same shelf
    life, so a call never has a precedence rule to guess."""
    if "ttlMs" not in args:
        return
    ttl_ms = args.pop("ttlMs")
    seconds = None if ttl_ms is None else ttl_ms / 1000
    if "ttl" in args:
        given = args["ttl"]
        same = given is None and seconds is None
        if given is not None and seconds is not None:
            try:
                same = round(parse_duration(given, field="ttl") * 1000) == ttl_ms
            except ValueError as error:
                raise ToolError(one_line(error), "ttl") from None
        if not same:
            raise ToolError(
                f"ttlMs: {_brief(ttl_ms)} disagrees with ttl {_brief(given)}; give one of them", "ttlMs"
            )
    args["ttl"] = seconds


def _forget(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    forget_all = args.get("all", False)
    if not (forget_all or {"id", "query", "tags"} & args.keys()):
        raise ToolError("forget needs one of id, query, tags or all=true")
    if forget_all and not args.get("confirm"):
        raise ToolError("confirm: all=true forgets everything and needs confirm=true", "confirm")
    # Only what this agent could recall: "all" narrows to it, an id it cannot see forgets nothing.
    summary = engine.forget(
        args.get("id"),
        query=args.get("query"),
        tags=args.get("tags"),
        scope=args.get("scope"),
        all=forget_all,
        confirm=args.get("confirm", False),
        reason="manual",
        caller=agent.caller,
    )
    return summary.to_dict()


def _status(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    return engine.status(agent.caller).to_dict()


def _audit(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    entries = engine.audit(limit=args.get("limit", 10), caller=agent.caller)
    return {"entries": [entry.to_dict() for entry in entries]}


def _recall(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    matches = engine.recall(
        args["query"],
        owner_id=agent.owner_id,
        limit=args.get("limit", 5),
        include_workspace=agent.include_workspace,
        team_id=agent.team_id,
    )
    return {"count": len(matches), "items": [m.to_dict() for m in matches]}


def _restore(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    """The restored memory, or `{"rejected": reason}` when it cannot come back (seed §6.2: restorable mode
    off, an id the agent never could see or that was never forgotten, already restored, past its deadline)."""
    try:
        return engine.restore(args["id"], agent.caller).to_dict()
    except (NotRestorable, NotFound) as refusal:
        return {"rejected": one_line(refusal)}


def _preview(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    plan = engine.preview(
        args.get("budget_tokens"),
        owner_id=agent.owner_id,
        include_workspace=agent.include_workspace,
        query=args.get("query"),
        team_id=agent.team_id,
    )
    return plan.to_dict()


_HANDLERS: dict[str, Callable[[Amnesia, dict[str, Any], _Agent], dict[str, Any]]] = {
    "amnesia_remember": _remember,
    "amnesia_forget": _forget,
    "amnesia_status": _status,
    "amnesia_audit": _audit,
    "amnesia_recall": _recall,
    "amnesia_restore": _restore,
    "amnesia_preview": _preview,
}


def call_tool(
    engine: Amnesia,
    name: str,
    arguments: str | Mapping[str, Any] | None = None,
    *,
    owner_id: str | None = None,
    include_workspace: bool = True,
    ttl_rule: TtlRule | None = None,
    team_id: str | None = None,
    max_source: str = DEFAULT_SOURCE,
) -> dict[str, Any]:
    """Run one tool call and return its JSON-able result or error object (never raises for bad input).
    The caller is `amnesia.caller.Caller(owner_id, include_workspace, team_id)`. `ttl_rule` turns the ttl
    the model asked for on a non-pinned `amnesia_remember` (seconds, None when it gave none) into the ttl
    stored (None: the engine's default). `max_source` is the most trusted `source` the caller may declare on
    `amnesia_remember` (`tool`, the default, or `user` for a host writing the user's words; `auto` makes every
    write of the caller untrusted); a less trusted one is always allowed."""
    try:
        args = validate_arguments(name, arguments)
        agent = _Agent(Caller(owner_id, include_workspace, team_id), ttl_rule, max_source)
        return _HANDLERS[name](engine, args, agent)
    except ToolError as exc:
        return exc.to_dict()
    except (AmnesiaError, ValueError) as exc:
        # Engine refusals (capacity, secrets, not found, bad durations) are one-line messages by contract.
        return {"error": one_line(exc)}


def dispatch(
    engine: Amnesia,
    name: str,
    arguments: str | Mapping[str, Any] | None = None,
    *,
    owner_id: str | None = None,
    include_workspace: bool = True,
    ttl_rule: TtlRule | None = None,
    team_id: str | None = None,
) -> str:
    """Run one tool call (`call_tool`); returns the compact JSON text to put in the tool message for the
    model."""
    return to_json(
        call_tool(
            engine,
            name,
            arguments,
            owner_id=owner_id,
            include_workspace=include_workspace,
            ttl_rule=ttl_rule,
            team_id=team_id,
        )
    )


def to_json(result: Mapping[str, Any]) -> str:
    """A tool result (or error object) as the compact JSON text a model reads."""
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
