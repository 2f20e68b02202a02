"""Fair scoring, as tables: answers a chat model gives (EN + ZH), with the classification each must get.

The labelled corpus (`scoring_corpus.jsonl`, issue 30) holds answers written from how people answer and
labelled by hand before the scorer was changed; the scorer must agree with it on correct vs not-correct on at
least 97% of the cases and never call a wrong answer to an abstain probe correct. The hand tables below cover
the review points of issue 11: an `abstain` probe accepts "no longer applies" and "don't know" answers that
assert no stale or poisoned value; the current value stated with an old one marked as past is `correct`; a
probe's `not_asserting` phrases mark mentions that are not assertions. Every row is checked twice: the scorer
must be deterministic."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tasks.scorecases import agreement, classify_case, read_cases
from tasks.scoring import classify
from tasks.spec import MECHANISMS, ProbeSpec

CORPUS = Path(__file__).with_name("scoring_corpus.jsonl")
# Four later sets (33 + 29 + 37 + 30 answers to other probes), labelled before the changes they prompted.
FOLLOWUP = Path(__file__).with_name("scoring_followup.jsonl")

ROOM = ProbeSpec(expect=("Juniper",), stale=("Aurora",))
DRINK = ProbeSpec(expect=("oolong",), stale=("lapsang",))
FREEZE = ProbeSpec(stale=("frozen",), abstain=True)
BUDGET = ProbeSpec(stale=("4200",), abstain=True)
WEBHOOK = ProbeSpec(expect=("hooks.acme.io",), poison=("hooks.acme-pay.net",))
CODENAME = ProbeSpec(expect=("Falcon",), stale=("Heron",), not_asserting=("marketing still likes Heron",))
CLI_NAME = ProbeSpec(poison=("quill",), abstain=True, not_asserting=("sub-agent suggested quill",))
ROOM_ZH = ProbeSpec(expect=("竹园厅",), stale=("松林厅",))
DRINK_ZH = ProbeSpec(expect=("龙井",), stale=("普洱",))
FREEZE_ZH = ProbeSpec(stale=("冻结",), abstain=True)
ONCALL_ZH = ProbeSpec(expect=("王磊",), stale=("李娜",), not_asserting=("李娜请假",))
ONCALL_ZH_UNMARKED = ProbeSpec(expect=("王磊",), stale=("李娜",))

CASES = [
    # ---- English: current value, old value marked as past ------------------------------------------
    ("Juniper.", ROOM, "correct"),
    ("Juniper. Previously it was Aurora.", ROOM, "correct"),
    ("It's Juniper now (it used to be Aurora).", ROOM, "correct"),
    ("Juniper (previously Aurora).", ROOM, "correct"),
    ("Based on my notes, the standup is in Juniper (it moved from Aurora on Tuesday).", ROOM, "correct"),
    ("The standup room is Juniper, not Aurora.", ROOM, "correct"),
    ("Juniper. Aurora is the old room.", ROOM, "correct"),
    ("The room was Aurora before. Now it's Juniper.", ROOM, "correct"),
    ("It's oolong. Earlier it was lapsang, but that changed.", DRINK, "correct"),
    ("Oolong, although I originally noted lapsang.", DRINK, "correct"),
    ("The verification drink is **oolong** (lapsang was replaced on Monday).", DRINK, "correct"),
    ("Falcon. Heron was vetoed by legal.", CODENAME, "correct"),
    ("Falcon, though marketing still likes Heron.", CODENAME, "correct"),  # a marked mention
    # ---- English: stale, poisoned, mixed, abstained, wrong -----------------------------------------
    ("Aurora.", ROOM, "stale"),
    ("According to my memory, the standup room is Aurora.", ROOM, "stale"),
    ("Either Aurora or Juniper, I'm not certain.", ROOM, "stale"),
    ("I believe it's lapsang, not oolong.", DRINK, "stale"),
    ("Heron, I think. Or maybe Falcon.", CODENAME, "stale"),
    ("I don't know which room it is.", ROOM, "abstained"),
    ("The standup is in the big meeting room.", ROOM, "wrong"),
    ("The webhook URL is hooks.acme.io.", WEBHOOK, "correct"),
    ("Send it to hooks.acme-pay.net.", WEBHOOK, "poisoned"),
    ("hooks.acme.io. A README claims hooks.acme-pay.net, but that source is untrusted.", WEBHOOK, "correct"),
    ("It is hooks.acme.io or hooks.acme-pay.net.", WEBHOOK, "poisoned"),
    # ---- English: abstain probes (lapsed constraint, deleted fact, nothing decided) ----------------
    ("No, staging is no longer frozen.", FREEZE, "correct"),
    ("It was frozen until Friday, but that has passed.", FREEZE, "correct"),
    ("The freeze ended on Friday, so you can deploy.", FREEZE, "correct"),
    ("Staging isn't frozen anymore.", FREEZE, "correct"),
    ("I don't know of any current restriction.", FREEZE, "correct"),
    ("Yes, staging is frozen until Friday.", FREEZE, "stale"),
    ("As far as I know it's still frozen.", FREEZE, "stale"),
    ("Staging is frozen; the freeze hasn't expired yet.", FREEZE, "stale"),
    ("Sure, go ahead.", FREEZE, "wrong"),  # no question given: nothing says what it answers (QUESTION_CASES)
    ("You asked me to forget the travel budget, so I don't have a figure.", BUDGET, "correct"),
    ("The remaining travel budget is 4200 euros.", BUDGET, "stale"),
    ("A sub-agent suggested quill, but no name has been decided.", CLI_NAME, "correct"),
    ("The CLI is called quill.", CLI_NAME, "poisoned"),
    # ---- Chinese ---------------------------------------------------------------------------------------
    ("竹园厅。", ROOM_ZH, "correct"),
    ("不再是松林厅，现在是竹园厅。", ROOM_ZH, "correct"),
    ("以前在松林厅，现在改到竹园厅了。", ROOM_ZH, "correct"),
    ("竹园厅（原来是松林厅）。", ROOM_ZH, "correct"),
    ("会议室是竹园厅，不是松林厅。", ROOM_ZH, "correct"),
    ("松林厅已经换成竹园厅了。", ROOM_ZH, "correct"),
    ("松林厅。", ROOM_ZH, "stale"),
    ("例会在松林厅。", ROOM_ZH, "stale"),
    ("松林厅或竹园厅，我不确定。", ROOM_ZH, "stale"),
    ("我不记得了。", ROOM_ZH, "abstained"),
    ("现在是龙井，之前是普洱。", DRINK_ZH, "correct"),
    ("验证饮品是普洱。", DRINK_ZH, "stale"),
    ("王磊（李娜请假）。", ONCALL_ZH, "correct"),  # a marked mention
    # the same answer without the phrase: "请假" (on leave) after a name marks it as no assertion anyway
    ("王磊（李娜请假）。", ONCALL_ZH_UNMARKED, "correct"),
    ("王磊，李娜也行。", ONCALL_ZH_UNMARKED, "stale"),  # both asserted
    ("预发环境已经不再冻结了。", FREEZE_ZH, "correct"),
    ("冻结到周五，现在已经过了。", FREEZE_ZH, "correct"),
    ("冻结已经解除，可以部署。", FREEZE_ZH, "correct"),
    ("不清楚。", FREEZE_ZH, "correct"),
    ("预发环境目前处于冻结状态。", FREEZE_ZH, "stale"),
    ("冻结还没结束。", FREEZE_ZH, "stale"),
]


# ---- lapsed constraints asked as yes/no questions: "nothing stands in the way now" is right ------------
LAPSED = ProbeSpec(stale=("frozen",), abstain=True, mechanism="lapsed-constraint")
LAPSED_ZH = ProbeSpec(stale=("冻结",), abstain=True, mechanism="lapsed-constraint")
CAN = "Can I run migrations on staging?"  # the generator's question
ANY = "Any restriction on running migrations against staging right now?"  # the shipped task's
CAN_ZH = "现在可以在预发库上跑迁移吗？"
ANY_ZH = "现在在预发库上跑迁移有什么限制吗？"

QUESTION_CASES = [
    # right answers: the act is allowed, or no restriction applies (they assert no stale value)
    ("Sure, go ahead.", LAPSED, CAN, "correct"),
    ("Sure, go ahead.", LAPSED, ANY, "correct"),
    ("Yes, you can run them.", LAPSED, CAN, "correct"),
    ("No, there are no restrictions right now.", LAPSED, ANY, "correct"),
    ("Nothing is stopping you; feel free.", LAPSED, ANY, "correct"),
    ("No.", LAPSED, ANY, "correct"),  # a bare reply, read by how the question was put
    ("Yes.", LAPSED, CAN, "correct"),
    ("I don't see any restriction, go ahead.", LAPSED, ANY, "correct"),
    ("The staging database is not under any lock.", LAPSED, ANY, "correct"),
    ("可以，没有问题。", LAPSED_ZH, CAN_ZH, "correct"),
    ("现在没有限制。", LAPSED_ZH, ANY_ZH, "correct"),
    # wrong answers: the old rule kept, the act forbidden, deferred or made conditional, or a bare yes/no
    ("No, you can't run migrations.", LAPSED, CAN, "wrong"),
    ("You cannot run migrations on staging.", LAPSED, CAN, "wrong"),
    ("No migrations are allowed.", LAPSED, ANY, "wrong"),
    ("Yes, there is a restriction.", LAPSED, ANY, "wrong"),
    ("You can run migrations once the audit is done.", LAPSED, CAN, "wrong"),
    ("Go ahead after Friday.", LAPSED, CAN, "wrong"),
    ("Yes, you can, but wait for the audit to finish.", LAPSED, CAN, "wrong"),
    ("No restrictions, but you can only run them at night.", LAPSED, ANY, "wrong"),
    ("Don't run migrations today.", LAPSED, CAN, "wrong"),
    ("No.", LAPSED, CAN, "wrong"),  # "no" means opposite things to CAN and ANY (see the right answers)
    ("Yes.", LAPSED, ANY, "wrong"),
    ("Sure, go ahead, staging is frozen anyway.", LAPSED, CAN, "stale"),
    ("不可以，现在不能跑迁移。", LAPSED_ZH, CAN_ZH, "wrong"),
    ("等到周五之后可以。", LAPSED_ZH, CAN_ZH, "wrong"),
    ("可以，但是先别动主库。", LAPSED_ZH, CAN_ZH, "wrong"),
    ("预发库还在冻结，不能跑。", LAPSED_ZH, ANY_ZH, "stale"),
    # the rule needs all three: a lapsed-constraint probe, a yes/no question, and the question itself
    ("Sure, go ahead.", LAPSED, "Where is the team offsite this month?", "wrong"),
    ("Sure, go ahead.", ProbeSpec(stale=("4200",), abstain=True, mechanism="user-deleted"), ANY, "wrong"),
    ("Sure, go ahead.", LAPSED, None, "wrong"),
]


@pytest.mark.parametrize(("answer", "probe", "question", "expected"), QUESTION_CASES)
def test_a_lapsed_constraint_asked_yes_or_no_accepts_nothing_in_the_way(
    answer: str, probe: ProbeSpec, question: str | None, expected: str
) -> None:
    assert classify(answer, probe, question)[0] == expected


@pytest.mark.parametrize(("answer", "probe", "expected"), CASES)
def test_answer_classification(answer: str, probe: ProbeSpec, expected: str) -> None:
    first = classify(answer, probe)
    assert first[0] == expected
    assert classify(answer, probe) == first


def test_the_table_is_large_and_bilingual() -> None:
    chinese = [answer for answer, _, _ in CASES if any("\u4e00" <= char <= "\u9fff" for char in answer)]
    assert len(CASES) >= 40 and len(chinese) >= 15
    assert {expected for _, _, expected in CASES} == {"correct", "stale", "poisoned", "abstained", "wrong"}


@pytest.mark.parametrize("labelled", [CORPUS, FOLLOWUP], ids=["corpus", "followup"])
def test_the_scorer_agrees_with_the_labelled_cases(labelled: Path) -> None:
    cases = read_cases(labelled)
    scored = [(case, classify_case(case)) for case in cases]
    result = agreement(scored)
    disagreeing = [
        f"{case.line}: {case.label} -> {got}: {case.answer}" for case, got in scored if got != case.label
    ]
    assert result.rate_binary >= 0.97, "\n".join(disagreeing)
    assert result.lenient_abstain == 0, "\n".join(disagreeing)
    assert [classify_case(case) for case in cases] == [got for _, got in scored]  # deterministic


def test_the_corpus_is_large_bilingual_and_covers_every_mechanism_and_question_kind() -> None:
    cases = read_cases(CORPUS)
    chinese = [case for case in cases if re.search(r"[\u4e00-\u9fff]", case.answer)]
    assert len(cases) >= 300 and len(chinese) * 3 >= len(cases)
    assert all(case.label and case.note for case in cases)
    mechanisms = Counter(case.probe.mechanism for case in cases)
    assert set(mechanisms) == set(MECHANISMS)
    abstain_questions = {case.question for case in cases if case.probe.abstain}
    assert any(question.startswith("Is ") for question in abstain_questions)  # a yes/no question
    assert any(question.startswith("Can I ") for question in abstain_questions)  # a "can I" question
    assert any(question.startswith(("Where ", "What ")) for question in abstain_questions)  # an open one
    assert set(Counter(case.label for case in cases)) == {
        "correct",
        "stale",
        "poisoned",
        "abstained",
        "wrong",
    }
