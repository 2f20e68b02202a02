"""Credentials are refused with the rule's name and never echoed."""

from __future__ import annotations

import pytest

from amnesia import Amnesia, SecretRefused, SimulatedClock
from amnesia.safety import find_secret_rule

SECRETS = [
    ("my key is sk-proj-abcdefghijklmnopqrstuvwx1234", "api-key"),
    ("AWS: AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "private-key"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefghijkl", "bearer-token"),
    ("the wifi password is hunter2!", "password"),
    ("服务器密码是 Tr0ub4dor&3", "password"),
    ("use token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github-token"),
    ("card 4111 1111 1111 1111 exp 12/29", "payment-card"),
    ("your verification code is 482913", "one-time-code"),
    ("api_key = 9f8e7d6c5b4a39281706", "api-key"),
]
SAFE = [
    "The verification drink is oolong.",
    "Rotate the API keys every quarter.",
    "The password policy requires 12 characters.",
    "Order number 1234 5678 shipped.",
    "验证饮品已更换为 oolong",
]


@pytest.mark.parametrize(("text", "rule"), SECRETS)
def test_credentials_are_refused_naming_the_rule_not_the_secret(text: str, rule: str):
    engine = Amnesia(clock=SimulatedClock(0))
    with pytest.raises(SecretRefused) as error:
        engine.remember(text)
    assert error.value.rule == rule and rule in str(error.value)
    for token in text.split():
        if len(token) >= 6 and token != rule:
            assert token not in str(error.value)
    assert engine.plugs() == [] and engine.audit() == []


@pytest.mark.parametrize("text", SAFE)
def test_ordinary_memories_pass(text: str):
    assert find_secret_rule(text) is None
