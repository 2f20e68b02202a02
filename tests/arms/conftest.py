"""Fixtures for the arm tests: `arm_driver(arm, workdir, ...)` builds an ArmDriver, which drives one arm
through sessions and turns the way the runner does (arms/base.py call order), collecting the records the arm
logs, so that arm tests read like small task scripts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from amnesia.clock import SimulatedClock
from arms.base import Arm, ArmContext, MemoryContext, SessionInfo
from runners.replay import tool_event_messages
from tasks.spec import ForgetSpec, RememberSpec, ToolEventSpec


class ArmDriver:
    """One arm, a simulated clock and the records the arm logged (as dicts with `type` and `sim_time`)."""

    def __init__(
        self, arm: Arm, workdir: Path, *, budget_tokens: int = 2000, seed: int = 7, model: Any = None
    ):
        self.arm = arm
        self.clock = SimulatedClock(0.0)
        self.records: list[dict[str, Any]] = []
        self.ctx = ArmContext(
            task_id="t/1",
            seed=seed,
            clock=self.clock,
            log=lambda record: self.records.append(
                {"type": record.TYPE, "sim_time": self.clock.now(), **record.fields()}
            ),
            workdir=workdir,
            budget_tokens=budget_tokens,
            model=model,
        )
        self.session: SessionInfo | None = None
        self.history: list[dict[str, Any]] = []
        self._count = 0
        arm.start_task(self.ctx)

    def start(self, at: float, agent: str = "main") -> SessionInfo:
        """Move the clock to `at` and start the next session for `agent`."""
        self.clock.set(at)
        self.arm.advance_clock(at)
        self.session = SessionInfo(index=self._count, session_id=f"s{self._count}", agent=agent, at=at)  # type: ignore[arg-type]
        self._count += 1
        self.history = []
        self.arm.start_session(self.session)
        return self.session

    def turn(
        self,
        user: str,
        *,
        remember: tuple[RememberSpec, ...] = (),
        forget: tuple[ForgetSpec, ...] = (),
        tool_events: tuple[ToolEventSpec, ...] = (),
        answer: str = "OK.",
    ) -> MemoryContext:
        """One user turn: its forgets, then its writes, then its tool events, then the memory context and the
        scripted answer (the history gets the arm's extra messages and the tool messages as the runner
        builds them)."""
        self.arm.observe_user_turn(user)
        for spec in forget:
            self.arm.forget(spec)
        for spec in remember:
            self.arm.remember(spec)
        for event in tool_events:
            self.arm.observe_tool_event(event)
        context = self.arm.memory_context(user, list(self.history))
        self.arm.observe_answer(user, answer, context)
        tool_messages = list(tool_event_messages(tool_events, f"event-{len(self.history)}"))
        self.history += [
            *context.messages,  # an arm's extra messages stay in the conversation, as the runner keeps them
            {"role": "user", "content": user},
            *tool_messages,
            {"role": "assistant", "content": answer},
        ]
        return context

    def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        """Call one of the arm's model tools the way the runner's tool loop does; the parsed JSON result."""
        return json.loads(self.arm.dispatch_tool(name, json.dumps(arguments)))

    def end(self) -> None:
        """End the current session."""
        assert self.session is not None
        self.arm.end_session(self.session)
        self.session = None

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The logged records of one type, in order."""
        return [r for r in self.records if r["type"] == kind]


@pytest.fixture(scope="session")
def arm_driver() -> Callable[..., ArmDriver]:
    """`arm_driver(arm, workdir, *, budget_tokens=2000, seed=7, model=None)`: an ArmDriver with the task
    started. Session-scoped (it only builds drivers) so that hypothesis tests may use it."""
    return ArmDriver
