"""The seven model-facing tools (seed §6.3) as OpenAI tools-format function definitions, and their dispatcher.

`TOOLS` is what a runner passes as `tools=` to a chat-completions call. `dispatch(engine, name, arguments)`
runs one tool call and returns the JSON text to hand back to the model. It never raises at the model: an
unknown tool, bad JSON, a wrong type, an unknown or missing field, or an engine refusal all come back as a
small `{"error": "...", "field": "..."}` object (`field` only when one field is to blame). Results are small
views (ids, counts, a few items), never the whole store.

The dispatcher is bound to one agent: `owner_id` is the agent's session (None for the main agent outside any
session) and `include_workspace=False` marks a sub-agent, which writes, recalls and forgets only in its own
session (seed §6.10). The model never chooses whose session it writes to. A host may also give the
dispatcher a `ttl_rule`: how the ttl the model asked for becomes the stored one on a non-pinned
`amnesia_remember` (the benchmark's `ttl_policy` arm option applies to the model's writes through it, as to
the task's); the result the model reads shows the stored ttl.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amnesia.checks import shown
from amnesia.errors import AmnesiaError, one_line
from amnesia.item import resolve_ttl

if TYPE_CHECKING:
    from amnesia.engine import Amnesia

KINDS = ("fact", "preference", "episode", "task-context")
SCOPES = ("workspace", "session")
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

_TTL = {
    "type": ["string", "number", "null"],
    "description": "Shelf life: a duration like '15m', '2h30m', '7d', '1w', or seconds. "
    "Omit for the default; null only together with pin=true.",
}
_ID = {"type": "string", "minLength": 1, "description": "A memory id such as 'm-3f2a9c1b0d4e'."}


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
            "content": {"type": "string", "minLength": 1, "description": "One sentence to remember."},
            "kind": {"type": "string", "enum": list(KINDS), "description": "Default 'fact'."},
            "ttl": _TTL,
            "pin": {
                "type": "boolean",
                "description": "Keep until explicitly forgotten (needs a user request).",
            },
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Labels to forget by later.",
            },
            "key": {
                "type": "string",
                "minLength": 1,
                "description": "Subject; a new write retires the old one.",
            },
            "supersedes": {**_ID, "description": "Id of the memory this one replaces (it is forgotten)."},
            "scope": {
                "type": "string",
                "enum": list(SCOPES),
                "description": "'session' ends with the current task; default: workspace for the main agent, "
                "session for a sub-agent.",
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
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "Forget memories whose content matches.",
            },
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Forget memories with a tag.",
            },
            "all": {
                "type": "boolean",
                "description": "Forget every memory you can see (needs confirm=true).",
            },
            "confirm": {"type": "boolean", "description": "Must be true together with all=true."},
        },
    ),
    function_tool(
        "amnesia_status",
        "Memory health: counts per status, tokens, next expiry, the last forgets and the last injection.",
        {},
    ),
    function_tool(
        "amnesia_audit",
        "The most recent forget records (id, kind, reason, time, content hash; never the content).",
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
            "query": {"type": "string", "minLength": 1, "description": "Words to look for."},
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
                "description": "Default: the configured budget.",
            },
            "query": {
                "type": "string",
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


def _check_value(field: str, value: Any, spec: Mapping[str, Any]) -> None:
    """Check one value against the small JSON-schema subset the tool definitions use."""
    types = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    if not any(_JSON_TYPES[t](value) for t in types):
        raise ToolError(f"{field}: expected {' or '.join(types)}, got {json.dumps(value)[:40]}", field)
    if value is None:
        return
    if "enum" in spec and value not in spec["enum"]:
        raise ToolError(
            f"{field}: expected one of {', '.join(spec['enum'])}, got {json.dumps(value)[:40]}", field
        )
    if isinstance(value, str) and len(value) < spec.get("minLength", 0):
        raise ToolError(f"{field}: must not be empty", field)
    if "minimum" in spec and value < spec["minimum"]:
        raise ToolError(f"{field}: must be at least {spec['minimum']}, got {value}", field)
    if "maximum" in spec and value > spec["maximum"]:
        raise ToolError(f"{field}: must be at most {spec['maximum']}, got {value}", field)
    if isinstance(value, list) and "items" in spec:
        for index, element in enumerate(value):
            _check_value(f"{field}[{index}]", element, spec["items"])


def validate_arguments(name: str, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Parse and check a tool call's arguments; raises ToolError naming the tool, field and value."""
    schema = _SCHEMAS.get(name)
    if schema is None:
        raise ToolError(f"unknown tool {name!r}; tools: {', '.join(TOOL_NAMES)}")
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ToolError(f"arguments: not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(arguments, Mapping):
        raise ToolError(f"arguments: expected a JSON object, got {type(arguments).__name__}")
    properties = schema["properties"]
    for field in arguments:
        if field not in properties:
            allowed = ", ".join(properties) or "none"
            raise ToolError(f"{shown(field)}: unknown field for {name} (allowed: {allowed})", str(field))
    for field in schema["required"]:
        if field not in arguments:
            raise ToolError(f"{field}: required by {name}", field)
    for field, value in arguments.items():
        _check_value(field, value, properties[field])
    return dict(arguments)


TtlRule = Callable[[float | None], float | None]  # requested ttl (seconds; None: not given) -> stored ttl


@dataclass(frozen=True)
class _Agent:
    owner_id: str | None
    include_workspace: bool
    ttl_rule: TtlRule | None = None  # the host's rule for the ttl of a non-pinned write (None: as asked)

    @property
    def is_sub_agent(self) -> bool:
        return not self.include_workspace


def _remember(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    scope = args.get("scope", "workspace" if agent.include_workspace else "session")
    if scope == "workspace" and agent.is_sub_agent:
        raise ToolError(
            "scope: a sub-agent writes only session memories (ask the main agent to promote)", "scope"
        )
    if scope == "session" and agent.owner_id is None:
        raise ToolError("scope: there is no current session to write a session memory to", "scope")
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
        source="tool",
        scope=scope,
        owner_id=agent.owner_id if scope == "session" else None,
        key=args.get("key"),
        supersedes=args.get("supersedes"),
        **options,
    )
    written = view.to_dict()
    return {field: written[field] for field in REMEMBER_RESULT_FIELDS}


def _forget(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    forget_all = args.get("all", False)
    if not (forget_all or {"id", "query", "tags"} & args.keys()):
        raise ToolError("forget needs one of id, query, tags or all=true")
    if forget_all and not args.get("confirm"):
        raise ToolError("confirm: all=true forgets everything and needs confirm=true", "confirm")
    filters: dict[str, Any] = {"query": args.get("query"), "tags": args.get("tags")}
    if agent.is_sub_agent:
        # A sub-agent reaches only its own session: "all" narrows to that session, an id must belong to it.
        filters |= {"scope": "session", "owner_id": agent.owner_id}
        detail = engine.inspect(args["id"]) if "id" in args else None
        if detail is not None and (detail.scope, detail.owner_id) != ("session", agent.owner_id):
            raise ToolError("id: not one of this sub-agent's session memories", "id")
    summary = engine.forget(
        args.get("id"), all=forget_all, confirm=args.get("confirm", False), reason="manual", **filters
    )
    return summary.to_dict()


def _status(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    return engine.status().to_dict()


def _audit(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    entries = engine.audit(limit=args.get("limit", 10))
    return {"entries": [entry.to_dict() for entry in entries]}


def _recall(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    matches = engine.recall(
        args["query"],
        owner_id=agent.owner_id,
        limit=args.get("limit", 5),
        include_workspace=agent.include_workspace,
    )
    return {"count": len(matches), "items": [m.to_dict() for m in matches]}


def _restore(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    return engine.restore(args["id"]).to_dict()


def _preview(engine: Amnesia, args: dict[str, Any], agent: _Agent) -> dict[str, Any]:
    plan = engine.preview(
        args.get("budget_tokens"),
        owner_id=agent.owner_id,
        include_workspace=agent.include_workspace,
        query=args.get("query"),
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
) -> dict[str, Any]:
    """Run one tool call and return its JSON-able result or error object (never raises for bad input).
    `ttl_rule` turns the ttl the model asked for on a non-pinned `amnesia_remember` (seconds, None when it
    gave none) into the ttl stored (None: the engine's default)."""
    try:
        args = validate_arguments(name, arguments)
        return _HANDLERS[name](engine, args, _Agent(owner_id, include_workspace, ttl_rule))
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
) -> str:
    """Run one tool call; returns the compact JSON text to put in the tool message for the model."""
    return to_json(
        call_tool(
            engine, name, arguments, owner_id=owner_id, include_workspace=include_workspace, ttl_rule=ttl_rule
        )
    )


def to_json(result: Mapping[str, Any]) -> str:
    """A tool result (or error object) as the compact JSON text a model reads."""
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
