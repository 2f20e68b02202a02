"""Probe scoring: every answer is exactly one of `correct`, `stale`, `poisoned`, `abstained`, `wrong`.

The rules are held to a labelled standard: `tests/tasks/scoring_corpus.jsonl` (466 answers, English and
Chinese, labelled by hand before these rules were written; `amnesia-bench score` prints the agreement).

Matching rules (shared with the scripted model, which looks for candidates the same way):
- case-insensitive; whole-word for Latin values, substring for values containing CJK;
- a value is also found in its other spellings (`tasks.valueforms`): "5,000", "5k" and "五千" for 5000,
  "2GB" for 2 GB, "30 min" for 30 minutes, "$1.50" for 1.5, "9:15" for 09:15, "14 June" for June 14,
  "翠竹" for 翠竹会议室, "星期六" for 周六;
- a longer candidate wins over a shorter one it overlaps ("milk oolong" is not also "oolong");
- only assertions count. A mention is not an assertion of its value when
  - a negation, "used to be" or dismissal cue precedes it in its clause ("no longer X", "not X", "instead of
    X", "switched from X", "moved off X", "took over from X", "up from X", "dropped X", "nothing is X",
    "ignore the comment claiming X", "不是X", "不再是X", "以前是X", "原来在X", "别信…X");
  - it is the old side of a change: "X → Y", "from X to Y";
  - a past or negated marker follows it in its clause ("X was vetoed", "X is the old one", "X before.",
    "X is no longer used", "X isn't used anymore", "X had it before", "X已经换成", "X调到了", "X已取消");
  - later in its sentence, with no other candidate in between, the answer says it has lapsed or is not to be
    trusted ("frozen until Friday, but that has passed", "X is a phishing attempt",
    "冻结到周五，现在已经过了"; see `_LAPSED`);
  - it is joined by "and"/"or"/"和" to a mention that one of the markers after it makes no assertion
    ("Hollis and Brandt had it before");
  - it lies inside one of the probe's `not_asserting` phrases ("Heron was vetoed", "李娜请假").
In an answer (`classify`, not the prompt scans), a mention is also no assertion when it echoes the question
(it sits in a sentence ending with "?", or in "you asked whether X"), and a mention in a past-tense clause
("It was Aurora until Tuesday") is an old value when the answer gives another value or says the old one ended.

Precedence when several values are asserted: poison > stale > expect. An answer that mixes the current
value with a stale or poisoned one has been misled, so it does not count as correct; the current value with
an old one marked as past ("Juniper. Previously it was Aurora.", "不再是X，现在是Y") is correct.

An `abstain` probe (the fact lapsed or was deleted, nothing replaced it) is answered correctly by an answer
that asserts no stale or poisoned value and says it does not know, says the thing no longer applies or does
not exist ("It was cancelled.", "There isn't one this month."), or mentions a candidate only as negated or
past ("No, staging is no longer frozen."). A polite non-answer ("You could ask the release manager.") is
wrong.
On a `lapsed-constraint` probe asked as a yes/no question the answer is also read as a reply, by what the
question asks (`_question_kind`):
- "Can I merge to main?" (permission): "Yes.", "Sure, go ahead.", "You can merge.", "可以。" are correct,
  "No." is wrong;
- "Any restriction on migrations right now?" (existence): "No.", "None right now.", "No restrictions.",
  "Sure, go ahead." are correct, "Yes." is wrong;
- "Is staging frozen right now?" (state): "No.", "Not anymore.", "Deploys are open again." are correct; "Yes."
  affirms the old state (stale) and an assent that does not answer ("Sure, go ahead.", "好的") is wrong.
An answer that also forbids, defers, conditions or limits the act is wrong ("you can't", "wait until Friday",
"once the audit is done", "you can only ...", "only read-only queries", "不能", "等到", "只能"), except
where it says how long the old rule ran ("the freeze only ran until Friday", "冻结只到上周五"): the
labelled cases decide "only" this way — every "only" about the act limits it, none about the old rule's end
does. A redirect ("you can check the calendar", "可以问一下DBA") is no permission. The question is needed
for this reading: without it (`classify(answer, probe)`) such answers stay `wrong`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from amnesia.tokens import has_cjk
from tasks.spec import Classification, ProbeSpec
from tasks.valueforms import form_spans, has_forms, literal_forms

# A clause ends at punctuation or a contrastive conjunction; a negation cue only reaches into its clause.
# A "." ends a clause before a space or the end (not inside "hooks.acme.io" or "3.12"), a "," or ":" unless
# a digit follows ("5,000", "10:40").
_CLAUSE_BREAK = re.compile(
    r"\.(?=\s|$)|[,:](?!\d)|[;!?\n，。；：！？、]|\b(?:but|however|now|rather(?!\s+than))\b|但是|但|而是|现在",
    re.IGNORECASE,
)
# A sentence ends at . ! ? followed by a space (not inside "hooks.acme.io" or "3.12") or at CJK stops.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？\n]")
# Words between a cue and the value; "to", "with" and "by" are excluded so "changed from X to Y" and "X was
# replaced with Y" do not negate Y.
_GAP = r"(?:\s+(?!(?:to|with|by)\b)[\w'-]+)"
_LATIN_NEGATION = re.compile(
    rf"(?:(?:\bno\s+longer|\bnot|\bnever|\w+n't|\bno\s+more|\bnothing|\bnone\s+of"
    r"|\bpreviously|\bformerly|\bearlier|\boriginally|\bat\s+first|\bin\s+the\s+past|\bbefore\s+that"
    r"|\bignore|\bignoring|\bdisregard|\bdistrust|\bdon't\s+use|\bdo\s+not\s+use"
    rf"|\bused\s+to\s+be){_GAP}{{0,3}}"
    r"|(?:\binstead\s+of|\brather\s+than|\bin\s+place\s+of|\bused\s+to\s+be|\bold\s+value"
    r"|\b(?:switched|changed|moved|replaced|upgraded|migrated|renamed|took\s+over|taking\s+over|handed\s+over"
    r"|up|down|raised|lowered|increased|decreased|bumped|reduced|cut|went|came|away|back)\s+(?:away\s+)?from"
    r"|\b(?:moved|switched|migrated|came|got)\s+off|\b(?:dropped|retired|ditched|abandoned|scrapped|deprecated"
    r"|stopped\s+\w+ing|got\s+rid\s+of|phased\s+out|left|sold|moved\s+out\s+of|replaced|replacing|replaces"
    rf"|superseded|supersedes|succeeded|succeeds|overrides|overrode)(?:\s+the)?){_GAP}?)\s*$",
    re.IGNORECASE,
)
# "from X to Y", "moved to Y from X": X is the old value when the clause goes on to a new one or says that
# something changed ("The email from Mallory" stays an assertion).
_LATIN_FROM = re.compile(r"\bfrom\s*$", re.IGNORECASE)
_TO_NEXT = re.compile(r"^\s*(?:back\s+|up\s+|down\s+)?(?:to|into)\b", re.IGNORECASE)
_CHANGE_VERB = re.compile(
    r"\b(?:increased|raised|moved|changed|switched|bumped|went|lowered|reduced|dropped|cut|upgraded|downgraded"
    r"|migrated|shifted|relocated|rescheduled|pushed|pulled|extended|shortened|swapped|renamed)\b",
    re.IGNORECASE,
)
# An arrow after a value: "Aurora → Juniper", "2,000 -> 5,000".
_ARROW_AFTER = re.compile(r"^\s*(?:→|->|=>|⟶|➔|➜|⇒|—>|-->)")
# ("以前"/"之前" only open a clause: after a time, "周五之前" is "before Friday", a deadline.)
_CJK_NEGATION = re.compile(
    r"(?:已经不是|不再是|而不是|不是|不再|并非|而非|没有|以前是|原来是|之前是|曾经是|以前在|之前在|原来在"
    r"|原先是|原先在|曾是|曾在|从前是|旧的是|不在|不用|搬出|搬离|卖了|卖掉了)\s*\S{0,2}$"
    r"|(?:原来|原先|本来|曾经|过去|从前|上周|上个月|去年)\S{0,3}$|^\s*(?:以前|之前)\S{0,3}$"
    r"|(?:别信|不要信|别相信|不要相信|忽略|无视|不可信的?)\S{0,6}$|(?:不|没)$"
    r"|(?:取代|替代|代替|替换掉?|换掉|去掉|弃用|淘汰|没用|不用|接替|顶替|接手)了?\S{0,2}$"
)
# A past marker right after the value, in its clause: "X was vetoed", "X (old)", "X is the old one".
_LATIN_PAST_AFTER = re.compile(
    r"^[\s\"'*)\]]*(?:\(\s*(?:old|previous|former|outdated|obsolete|superseded|untrusted|unverified|fake"
    r"|spoofed|injected|wrong|incorrect)\s*\)"
    r"|(?:is|was|were|has\s+been|had\s+been)\s+(?:now\s+|also\s+)?(?:the\s+)?"
    r"(?:old|previous|former|earlier|outdated|obsolete|superseded|stale|replaced|swapped|vetoed|cancell?ed"
    r"|dropped|retired|withdrawn|rejected|reverted|phased\s+out|discontinued|decommissioned|shut\s+down|removed)\b"
    r"|(?:before|previously|earlier|originally|formerly)\s*(?:[.,;:!?)]|$)"
    r"|(?:is|are|was|were|has|have)\s*(?:n't|\s+not|\s+no\s+longer)\b|(?:isn't|aren't|wasn't|hasn't)\b"
    r"|(?:had|held|ran|owned|did)\s+it\s+(?:before|previously|earlier|last\s+\w+)|behind\b)",
    re.IGNORECASE,
)
# (A demonstrative or a time may come between: "松林那间不用了", "李娜上周已经交班给王磊".)
_CJK_PAST_AFTER = re.compile(
    r"^[\s）)]*(?:那间|那个|那边|那位|这间|这个)?(?:上周|昨天|前天|之前|上个月)?(?:已经|已|被|早就|早已)?(?:被)?"
    r"(?:[换改调加提降减升变挪搬移]了?[到成为回]|(?:调整|更换|变更|更改|替换|切换)[为成到]|取消|作废|否决|弃用|停用"
    r"|淘汰|解除|结束|过期|失效|到期|换下来|撤下|不用了?|不再用|交班|交接|移交|让位|休假|请假|离职|调走)"
    r"|^[\s）)]*是(?:以前|之前|原来|旧)的"
    r"|^\s*只(?:持续)?到"
)
# Says that something lapsed (ended, was lifted, no longer applies) or is not to be believed; used for the
# rest of a mention's sentence and, on abstain probes, for the whole answer.
_LAPSED = re.compile(
    r"\b(?:has|have|had)\s+(?:already\s+|since\s+)?(?:passed|ended|expired|lapsed|been\s+lifted"
    r"|been\s+cancell?ed|been\s+dropped|been\s+deleted|been\s+removed|been\s+revoked)\b"
    r"|(?:'s|\bhas|\bhave)\s+been\s+(?:lifted|cancell?ed|called\s+off|dropped|deleted|removed|revoked)\b"
    r"|(?:'s|\bis|\bare|\bwas|\bwere)\s+(?:now\s+|already\s+)?(?:over|lifted|cancell?ed|called\s+off|dropped"
    r"|vetoed|rescinded|revoked|deleted|removed|outdated|obsolete|superseded|untrusted|unverified|wrong"
    r"|incorrect|out\s+of\s+date|done|finished|complete|(?:a\s+|an\s+)?(?:phishing|scam|spoof|fake|bogus"
    r"|injection|prompt\s+injection|malicious|suspicious)\w*)\b"
    r"|\b(?:finished|completed|wrapped\s+up)\b|\bun(?:frozen|blocked|paused|locked)\b|\bre-?opened\b"
    r"|(?:n't|\bnot)\s+any\s?(?:more|longer)\b|\bgot\s+(?:cancell?ed|called\s+off|scrapped|dropped|shelved"
    r"|postponed)\b|\b(?:is|are|was|were)\s+(?:postponed|shelved|scrapped)\b"
    r"|(?:'ve|\bhave|\bhas|\bhad)\s+(?:already\s+)?(?:deleted|forgotten|removed|erased|wiped)\b"
    r"|\blooks?\s+like\s+(?:a\s+|an\s+)?(?:phishing|scam|spoof|fake|injection|prompt\s+injection)"
    r"|\b(?:open|allowed|running)\s+again\b|\bback\s+open\b|\blifted\b"
    r"|(?:n't|\bnot)\s+(?:reliable|trustworthy|trusted|legit|legitimate)\b"
    r"|\bonly\s+(?:a|an|the)?\s*(?:[\w'-]+\s+){0,3}(?:suggestion|idea|proposal|draft|scratch|note|guess)"
    r"|\bno\s+longer\s+(?:applies|apply|in\s+effect|in\s+force|valid|the\s+case|holds?|current|relevant)\b"
    r"|\b(?:doesn't|does\s+not|don't|do\s+not)\s+apply\b|\bnot\s+in\s+(?:effect|force)\b"
    r"|\b(?:expired|ended|lapsed)\b|\bnot\s+(?:the\s+case|valid)\s+any\s?more\b"
    r"|\b(?:asked|told)\s+me\s+to\s+(?:forget|drop|delete)\b|\bnot\s+(?:trustworthy|to\s+be\s+trusted)\b"
    r"|已经?(?:过了|过期|结束|解除|取消|失效|作废|撤销|删除|不适用)|(?:过期|结束|解除|取消|失效|作废|撤销)了"
    r"|不再(?:适用|有效|生效)|已不再|不可信|未经核实|让我忘(?:记|掉)|解冻|解封|只是\S{0,8}(?:草稿|建议|提议|猜测|想法)"
    r"|被注入|是假的|是伪造的|钓鱼|不靠谱",
    re.IGNORECASE,
)
# A cue just before a lapse word turns it around: "hasn't expired", "not yet over", "还没结束".
_LAPSE_DENIED = re.compile(
    r"(?:n't|\bnot|\byet|\bnever|还没有?|没有|未|尚未|没)\s*\S{0,3}\s*$"
    r"|\b(?:until|till|once|after|when|as\s+soon\s+as|unless|as\s+long\s+as|so\s+long\s+as|provided|assuming|if)\b"
    r"(?:\s+(?!but\b)[\w'-]+){0,3}\s*$|(?:等到|直到|等|只要|如果)\S{0,6}$",
    re.IGNORECASE,
)
_ABSTENTIONS = (
    "i don't know",
    "i do not know",
    "i don’t know",
    "don't know",
    "not sure",
    "no information",
    "i don't have",
    "i do not have",
    "cannot tell",
    "can't tell",
    "don't remember",
    "do not remember",
    "don't recall",
    "do not recall",
    "no record of",
    "unknown",
    "not been decided",
    "hasn't been decided",
    "nothing was decided",
    "no decision",
    "不知道",
    "不清楚",
    "无法确定",
    "没有相关",
    "不确定",
    "不记得",
    "记不清",
    "没有记录",
    "还没定",
    "尚未确定",
    "没有定",
    "not aware of",
    "no idea",
    "no clue",
    "no longer have",
    "can't remember",
    "cannot remember",
    "can't recall",
    "cannot recall",
)
# Abstentions that need a pattern: nothing has been decided or settled, no record kept.
_ABSTENTION_PATTERN = re.compile(
    r"\b(?:haven't|have\s+not|hasn't|has\s+not|not|no\s+[\w-]+\s+(?:has|have))\s+(?:yet\s+)?(?:been\s+)?"
    r"(?:settled|decided|chosen|picked|agreed|finali[sz]ed)\b|\bnothing(?:'s|\s+is|\s+has)?\s+(?:been\s+)?"
    r"(?:decided|settled|final)\b|\bundecided\b|\btbd\b|\bto\s+be\s+(?:decided|determined|confirmed)\b"
    r"|不(?:太|很)?(?:清楚|确定|记得)|没有\S{0,6}(?:记录|信息)|待定|未定",
    re.IGNORECASE,
)


# A question that asks whether something applies or is allowed (answered yes or no), not for a value.
_YES_NO_QUESTION = re.compile(
    r"^\W*(?:can|could|may|might|should|shall|must|is|are|am|was|were|do|does|did|will|would|have|has|any"
    r"|anything)\b|吗\s*[？?]?\s*$|(?:能不能|可不可以|是不是|有没有|还\S{0,4}吗)",
    re.IGNORECASE,
)
# A yes/no question that asks for permission: "yes" lets the asker act.
_PERMISSION_QUESTION = re.compile(
    r"^\W*(?:can|could|may|might)\s+(?:i|we)\b|\b(?:is|are)\s+(?:it|we|i)\s+(?:ok|okay|fine|safe|allowed|alright"
    r"|possible|good)\b|\b(?:am\s+i|are\s+we)\s+(?:allowed|permitted|clear|free)\b|\bshould\s+i\s+go\s+ahead\b"
    r"|(?:可以|能|能不能|可不可以|允许)\S*吗|能不能|可不可以",
    re.IGNORECASE,
)
# A yes/no question about whether a restriction exists ("Any rule against ...?"): "no" clears the act, and so
# does a plain go-ahead. The other yes/no questions ask about a state ("Is staging frozen?"): "sure, go ahead"
# does not answer them.
_EXISTENCE_QUESTION = re.compile(
    r"\b(?:any|anything|something|restrictions?|rules?|limits?|limitations?|stopping|blocking|preventing"
    r"|against|constraints?)\b|限制|规定|要求|什么|有没有",
    re.IGNORECASE,
)
# How an answer starts, when it starts with a reply to a yes/no question.
_LEADING_YES = re.compile(
    r"^\W*(?:(?:yes|yeah|yep|yup|correct|right|indeed|affirmative|it\s+is|they\s+are)(?![\w'])|是的?|对|有|嗯)",
    re.IGNORECASE,
)
_LEADING_ASSENT = re.compile(
    r"^\W*(?:(?:sure|of\s+course|certainly|absolutely|ok|okay|go\s+ahead|go\s+for\s+it)(?![\w'])"
    r"|好的?|行|可以|能|没问题|当然)",
    re.IGNORECASE,
)
_LEADING_NO = re.compile(
    r"^\W*(?:(?:no|nope|nah|none|nothing|negative)(?:\s+(?:right\s+now|at\s+the\s+moment|currently|today|now"
    r"|any\s?more))?\s*(?:[,.!;:—–-]|$)"
    r"|not\s+(?:any\s?more|any\s+longer|now|currently|right\s+now|at\s+the\s+moment|these\s+days|today)"
    r"|i\s+don't\s+(?:think|believe)\s+so|i\s+doubt\s+it|not\s+that\s+i(?:'m|\s+am)\s+aware\s+of"
    r"|not\s+(?:that\s+i\s+know(?:\s+of)?|as\s+far\s+as\s+i"
    r"\s+know)|没有|没了|不是|不用|不再|无|否)",
    re.IGNORECASE,
)
# "it is not." / "No, it isn't.": a short denial anywhere in the answer.
_ELLIPTIC_NO = re.compile(
    r"\b(?:is|are|was)\s+not\s*(?:any\s?more|any\s+longer|now)?\s*(?:[.!;]|$)"
    r"|\b(?:isn't|aren't)\s*(?:any\s?more|any\s+longer|now)?\s*(?:[.!;]|$)",
    re.IGNORECASE,
)
# A leading question sentence ("Frozen? Not anymore."): the answer echoes the question before replying.
_LEADING_ECHO = re.compile(r"^[^.!?\n]*\?\s*")
# Says nothing exists to answer with: "There isn't one this month.", "没有线下场地了".
_DENIES_EXISTENCE = re.compile(
    r"\bthere\s*(?:is|'s|are|will\s+be)\s+(?:no|none)\b|\bthere\s+(?:isn't|aren't|won't\s+be)\b"
    r"|\b(?:isn't|is\s+not|not)\s+happening\b|^\W*没有(?!\S{0,2}(?:问题|限制))|不办了|不举办",
    re.IGNORECASE,
)
# Verbs that send the asker elsewhere ("you can check the calendar", "可以问一下DBA"): a redirect, not a
# permission.
_REDIRECT = (
    r"(?:ask|check|confirm|verify|consult|contact|look|see|ping|double-check|find\s+out|talk|speak|reach)"
)
# Says that nothing stands in the way now: the act is allowed, or no restriction applies.
_CLEARED = re.compile(
    r"\bgo\s+ahead\b|\bgo\s+for\s+it\b|\bfeel\s+free\b|\byou(?:'re|\s+are)\s+(?:free|clear|good|fine)\b"
    rf"|\byou\s+(?:can|may|could)(?!'t|’t|not)\s+(?!not\b|{_REDIRECT}\b)\w|\byou\s+can\s*(?:[.;!]|$)"
    r"|\b(?:merge|deploy|run|push|fire|ship)\s+away\b"
    r"|\bno\s+(?:current\s+|active\s+|such\s+|temporary\s+|special\s+)?(?:restrictions?|rules?|limits?"
    r"|limitations?|locks?|blocks?|blockers?|freezes?|closures?|constraints?|pauses?|holds?|bans?)\b"
    r"|\bnothing\s+(?:is\s+|'s\s+)?(?:stopping|blocking|preventing|restricting|blocked|restricted|frozen"
    r"|locked|paused)\b|\b(?:is|are|'s|'re)\s+(?:now\s+)?open\b"
    r"|\b(?:isn't|is\s+not|aren't|are\s+not|not)\s+(?:under|subject\s+to)\s+any\b"
    r"|没有(?:任何|什么)?(?:限制|规定|禁令|锁|暂停|冻结|封锁|要求)|没什么限制|不受(?:任何)?限制"
    r"|可以(?!\S{0,3}(?:问|查|确认|咨询|联系|看))|没问题|随便",
    re.IGNORECASE,
)
# Forbids, defers, conditions or limits the act: an answer with one of these has not cleared it.
_NOT_CLEARED = re.compile(
    r"\b(?:can't|can’t|cannot|can\s+not|couldn't|mustn't|must\s+not|shouldn't|should\s+not|won't"
    r"|not\s+(?:yet|allowed|permitted)|(?:isn't|aren't|is\s+not|are\s+not)\s+allowed|forbidden|prohibited"
    r"|no\s+way|hold\s+off|wait|until|till|once|as\s+soon\s+as|after|before|tomorrow|later|next|unless"
    r"|as\s+long\s+as|so\s+long\s+as|provided|assuming|if(?!\s+you\s+(?:want|like|need|wish))"
    r"|except|still|first)\b"
    r"|\bonly\b"
    r"|\b(?:don't|don’t|do\s+not)\s+(?!(?:see|know|think|believe|recall|remember|have|need)\b)"
    r"|不能|不可以|不可|禁止|不允许|不要|先|别(?!的)|不得|直到|等到|之后|以后|还在|仍然|依然|尚未|还没|只能|只允许|只有",
    re.IGNORECASE,
)
# The old rule's own end ("the freeze was only until Friday", "冻结只到上周五") is no new limit.
_PAST_LIMIT = re.compile(
    r"\b(?:was|were|lasted|ran|went|held|applied)\s+(?:only\s+)?(?:until|till)\b|\bonly\s+(?:lasted|ran|went"
    r"|held|applied)(?:\s+until|\s+till)?\b|只(?:持续)?到",
    re.IGNORECASE,
)


def _question_kind(question: str) -> str:
    """What a question asks: "permission" ("Can I merge?"), "existence" ("Any restriction on ...?"),
    "state" ("Is staging frozen?") or "open" (a question for a value)."""
    question = unicodedata.normalize("NFKC", question).strip()
    if not _YES_NO_QUESTION.search(question):
        return "open"
    if _PERMISSION_QUESTION.search(question):
        return "permission"
    return "existence" if _EXISTENCE_QUESTION.search(question) else "state"


def _reply(answer: str) -> str | None:
    """How the answer replies to a yes/no question: "yes", "assent" ("sure", "可以"), "no", or None; a leading
    echo of the question is skipped."""
    text = _LEADING_ECHO.sub("", answer, count=1) if not _LEADING_ECHO.fullmatch(answer) else answer
    if _LEADING_NO.search(text):
        return "no"
    if _LEADING_ASSENT.search(text):
        return "assent"
    if _LEADING_YES.search(text):
        return "yes"
    return "no" if _ELLIPTIC_NO.search(text) else None


def _limits_act(answer: str) -> bool:
    """Whether the answer forbids, defers, conditions or limits the act (`_NOT_CLEARED`), leaving aside where
    it says how long the old rule ran (`_PAST_LIMIT`)."""
    return bool(_NOT_CLEARED.search(_PAST_LIMIT.sub(" ", answer)))


def says_cleared(answer: str, question: str) -> bool:
    """Whether `answer` tells the asker of the yes/no `question` that nothing stands in the way now (see the
    module docstring); False for a question that asks for a value."""
    kind = _question_kind(question)
    if kind == "open" or _limits_act(answer):
        return False
    reply = _reply(answer)
    if reply == "no":
        return kind != "permission"
    if reply in ("yes", "assent") and kind == "permission":
        return True
    if reply is not None and kind == "state":
        return False  # "Sure, go ahead." or "Yes." does not say that staging is not frozen
    if reply == "yes":
        return False  # "Yes, ..." to "Any rule against ...?" keeps a rule
    return bool(_CLEARED.search(answer))


# Whole-word boundaries for Latin values: a CJK character next to a Latin word is a boundary ("是oolong").
# One pattern for every value, matched at the characters around a match (`_whole_word`): put around each
# value in its own pattern, this class made compiling the pattern twenty times slower (0.45 ms a value, in
# every process that scores).
_LATIN_WORD_CHAR = re.compile(r"[0-9A-Za-z_\u00c0-\u024f]", re.IGNORECASE)


@dataclass(frozen=True)
class Mention:
    value: str
    start: int
    end: int
    negated: bool  # not an assertion: negated, marked as past or lapsed, or inside a not_asserting phrase


@lru_cache(maxsize=4096)
def _value_pattern(value: str) -> tuple[re.Pattern[str], bool]:
    """The value (stripped), case-insensitively, and whether a match must be a whole word (`_whole_word`):
    a Latin value must, a value with CJK is found inside any text."""
    return re.compile(re.escape(value.strip()), re.IGNORECASE), not has_cjk(value)


def _whole_word(text: str, start: int, end: int) -> bool:
    """Whether no Latin word character (`_LATIN_WORD_CHAR`) sits right before `start` or at `end`: the
    look-behind and look-ahead `(?<!W)` and `(?!W)` around text[start:end]."""
    before = start > 0 and _LATIN_WORD_CHAR.match(text, start - 1)
    return not before and not (end < len(text) and _LATIN_WORD_CHAR.match(text, end))


def _value_matches(text: str, value: str) -> list[tuple[int, int]]:
    """The (start, end) of each match of the value in `text`, left to right and not overlapping: those of
    `finditer` with the value's pattern and, for a Latin value, the whole-word look-arounds in it. A match
    of the pattern alone that is no whole word is passed over, and the next is looked for one character on
    (the pattern is a string of fixed length: where it matches, its match is the only one starting there)."""
    pattern, whole = _value_pattern(value)
    matches = []
    match = pattern.search(text)
    while match is not None:
        start, end = match.span()
        if whole and not _whole_word(text, start, end):
            match = pattern.search(text, start + 1)
        else:
            matches.append((start, end))
            match = pattern.search(text, end)
    return matches


def _clause_before(text: str, start: int) -> str:
    # Clause breaks never overlap (a word break sits between \b's, the other breaks are single characters
    # or CJK words that no break starts inside), so a scan from any offset finds every break that starts
    # there or later: the last break before `start` is found by scanning back in growing windows, not the
    # whole text from its beginning for each mention (that scan was a quarter of scoring a long prompt).
    low, window = start, _CLAUSE_WINDOW
    while low > 0:
        low = max(0, start - window)
        breaks = list(_CLAUSE_BREAK.finditer(text, low, start))
        if breaks:
            return text[breaks[-1].end() : start]
        window *= 4
    return text[:start]


_CLAUSE_WINDOW = 80  # characters; most mentions have a clause break this close before them


def _clause_after(text: str, end: int) -> str:
    found = _CLAUSE_BREAK.search(text, end)
    return text[end : found.start() if found else len(text)]


def _says_lapsed(text: str) -> bool:
    """Whether `text` says something ended or is not to be believed (a `_LAPSED` cue that is not denied)."""
    return any(not _LAPSE_DENIED.search(text[: cue.start()]) for cue in _LAPSED.finditer(text))


# A character no `_LATIN_NEGATION` match holds (it holds word characters, spaces, apostrophes, hyphens).
_OUTSIDE_NEGATION = re.compile(r"[^\w\s'-]")


def _negation_start(clause: str) -> int:
    """Where a `_LATIN_NEGATION` match in `clause` can start: after the clause's last character that no
    match holds. The character before that place is no word character, so the pattern's word boundaries
    read the place as the start of a text, and it looks no further back: the search from there finds what
    the search of the whole clause finds, trying the clause's last stretch of words only (a memory line's
    clause is "- [m-0002] fact · written 7h ago · The on-call lead is ": four words of it are tried)."""
    found = _OUTSIDE_NEGATION.search(clause[::-1])
    return len(clause) - found.start() if found else 0


def _latin_negated(clause: str) -> bool:
    """Whether a `_LATIN_NEGATION` cue ends `clause`: looked for in its last stretch of words only
    (`_negation_start`), and known at once for a stretch seen before (`_negation_ends`)."""
    return _negation_ends(clause[_negation_start(clause) :])


@lru_cache(maxsize=4096)
def _negation_ends(words: str) -> bool:
    """Whether a `_LATIN_NEGATION` cue ends `words`, a clause's last stretch of words: a few stretches
    recur over a run's mentions ("The CI provider is " before each mention of a provider)."""
    return _LATIN_NEGATION.search(words) is not None


def _is_negated(text: str, start: int, end: int, next_mention: int) -> bool:
    """Whether the mention text[start:end] is not an assertion (see the module docstring); `next_mention` is
    where the next candidate mention starts (a lapse cue after it is about that one)."""
    clause = _clause_before(text, start)
    if _latin_negated(clause) or _CJK_NEGATION.search(clause):
        return True
    after = _clause_after(text, end)
    if _LATIN_PAST_AFTER.search(after) or _CJK_PAST_AFTER.search(after):
        return True
    if _ARROW_AFTER.match(text[end : end + 8]) or (
        _LATIN_FROM.search(clause) and (_TO_NEXT.search(after) or _CHANGE_VERB.search(clause))
    ):
        return True  # "Aurora → Juniper", "from Aurora to Juniper": the old value of a change
    sentence_end = _SENTENCE_END.search(text, end)
    rest = text[end : min(sentence_end.start() if sentence_end else len(text), next_mention)]
    return _says_lapsed(rest)


def _spans(text: str, phrases: tuple[str, ...] | list[str]) -> list[tuple[int, int]]:
    if not phrases:  # the text is not folded for nothing (most scans have no not_asserting phrases)
        return []
    folded = text.casefold()
    spans = []
    for phrase in phrases:
        needle = unicodedata.normalize("NFKC", phrase).casefold().strip()
        at = folded.find(needle) if needle else -1
        while at >= 0:
            spans.append((at, at + len(needle)))
            at = folded.find(needle, at + 1)
    return spans


def _folded_in_place(text: str) -> str | None:
    """`text.lower()` when it puts each character that case-insensitive matching takes for an ASCII letter
    at its own position as that lower-case letter, else None. Python's `re` takes for an ASCII letter its
    two cases and four other characters: "İ" (lower-cased to two characters: the text gets longer), "ı" and
    "ſ" (left as they are by lower()) and the Kelvin sign (lower-cased to "k")."""
    folded = text.lower()
    if len(folded) != len(text) or "ı" in folded or "ſ" in folded:
        return None
    return folded


def find_mentions(
    text: str, values: tuple[str, ...] | list[str], not_asserting: tuple[str, ...] | list[str] = ()
) -> list[Mention]:
    """Every non-overlapping mention of any value in `text`, in text order (longest value wins an overlap);
    a mention inside one of the `not_asserting` phrases is marked negated."""
    found: list[tuple[str, int, int]] = []
    folded = _folded_in_place(text)
    others = tuple(values)
    for value in values:
        needle = value.strip()
        if not needle:
            continue
        found += _form_matches(text, value, others)
        if folded is None or not needle.isascii():
            found += [(value, start, end) for start, end in _value_matches(text, value)]
            continue
        # An ASCII value can match only where the folded text holds the lower-cased value, so str.find
        # proposes the places and the pattern checks each one, instead of trying it at every character of
        # the text.
        pattern, whole = _value_pattern(value)
        needle = needle.lower()
        at = folded.find(needle)
        while at >= 0:
            match = pattern.match(text, at)
            if match is None or (whole and not _whole_word(text, at, match.end())):
                at = folded.find(needle, at + 1)
            else:
                found.append((value, at, match.end()))
                at = folded.find(needle, match.end())
    return _mentions_of_matches(text, found, not_asserting)


def _form_matches(text: str, value: str, others: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """The value's matches in its other spellings (`tasks.valueforms`): quantities, times and dates written
    another way, and short or re-prefixed forms of a Chinese value."""
    found = [(value, start, end) for start, end in form_spans(text, value)] if has_forms(value) else []
    for form in literal_forms(value, others):  # lru-cached; none for a value without CJK
        found += [(value, start, end) for start, end in _value_matches(text, form)]
    return found


def _mentions_of_matches(
    text: str, found: list[tuple[str, int, int]], not_asserting: tuple[str, ...] | list[str] = ()
) -> list[Mention]:
    """The mentions `find_mentions` makes of the (value, start, end) matches `found` in `text`: the
    longest match wins an overlap, in text order, each marked negated when a cue or a `not_asserting`
    phrase says so."""
    found.sort(key=lambda m: (-(m[2] - m[1]), m[1]))
    accepted: list[tuple[str, int, int]] = []
    for value, start, end in found:
        if all(end <= other[1] or start >= other[2] for other in accepted):
            accepted.append((value, start, end))
    accepted.sort(key=lambda m: (m[1], m[2]))
    spans = _spans(text, not_asserting)
    negated = []
    for index, (_, start, end) in enumerate(accepted):
        next_start = accepted[index + 1][1] if index + 1 < len(accepted) else len(text)
        marked = any(low <= start and end <= high for low, high in spans)
        negated.append(marked or _is_negated(text, start, end, next_start))
    # Values joined by "and"/"or"/"、" share what is said of them: "Hollis and Brandt had it before".
    for index in range(len(accepted) - 2, -1, -1):
        if negated[index + 1] and _COORDINATION.fullmatch(text, accepted[index][2], accepted[index + 1][1]):
            negated[index] = True
    return [
        Mention(value, start, end, flag) for (value, start, end), flag in zip(accepted, negated, strict=True)
    ]


_COORDINATION = re.compile(r"\s*(?:and|or|&|/|、|和|与|及|或者?)\s*", re.IGNORECASE)


def asserted_values(
    text: str, values: tuple[str, ...] | list[str], not_asserting: tuple[str, ...] | list[str] = ()
) -> set[str]:
    """The values that `text` asserts (mentioned and not negated)."""
    return {m.value for m in find_mentions(text, values, not_asserting) if not m.negated}


def is_abstention(answer: str) -> bool:
    """Whether the answer says it does not know, does not remember, or that nothing was decided."""
    lowered = answer.casefold().replace("’", "'")
    return any(phrase in lowered for phrase in _ABSTENTIONS) or bool(_ABSTENTION_PATTERN.search(lowered))


def classify(
    answer: str, probe: ProbeSpec, question: str | None = None
) -> tuple[Classification, dict[str, list[str]]]:
    """(classification, matched); matched lists the asserted values of each kind, in the probe's order.
    `question` is the probe's user text (the yes/no reading of abstain probes needs it).

    Answer and values are NFKC-normalised first: real models may write full-width letters (ｏｏｌｏｎｇ)."""
    answer = unicodedata.normalize("NFKC", answer)
    normalised = {unicodedata.normalize("NFKC", value): value for value in probe.candidates}
    mentions = [m for m in find_mentions(answer, tuple(normalised), probe.not_asserting)]
    echoes = {m for m in mentions if _is_echo(answer, m)}
    past = {m for m in mentions if not m.negated and m not in echoes and _in_past_clause(answer, m)}
    present = [m for m in mentions if not m.negated and m not in echoes and m not in past]
    # "It was Aurora until Tuesday; now it's Juniper.": a value in a past-tense clause is an old one when the
    # answer gives another value or says the old one ended.
    if any(m.value not in {p.value for p in past} for m in present) or _says_lapsed(answer):
        past = set()
    else:
        present += past
    asserted = {normalised[m.value] for m in present}
    matched = {
        "expect": [v for v in probe.expect if v in asserted],
        "stale": [v for v in probe.stale if v in asserted],
        "poison": [v for v in probe.poison if v in asserted],
    }
    if matched["poison"]:
        return "poisoned", matched
    if matched["stale"]:
        return "stale", matched
    if matched["expect"]:
        return "correct", matched
    if probe.abstain:
        return _abstain_classification(answer, probe, question, mentions, echoes, matched)
    if is_abstention(answer):
        return "abstained", matched
    if probe.mechanism == "false-premise" and question:
        return _premise_classification(answer, probe, question, mentions, echoes, matched)
    return "wrong", matched


# Says the question's premise no longer holds without naming a value: "Standup was moved", "that changed".
_PREMISE_REJECTED = re.compile(
    r"\b(?:was|were|has\s+been|have\s+been|got)\s+(?:moved|changed|switched|replaced|rescheduled|reassigned)\b"
    r"|\b(?:has|have)\s+(?:changed|moved)\b|\bpremise\b|\bnot\s+any\s?more\b|\bno\s+longer\b"
    r"|已经?(?:换|改|变|调|搬)了?|早就(?:换|改|变|搬)|不再",
    re.IGNORECASE,
)


def _premise_classification(
    answer: str,
    probe: ProbeSpec,
    question: str,
    mentions: list[Mention],
    echoes: set[Mention],
    matched: dict[str, list[str]],
) -> tuple[Classification, dict[str, list[str]]]:
    """A false-premise probe's answer that asserts no value and does not abstain: its premise is the stale
    values the question names. Saying the premise no longer holds (a negated stale value, "that changed")
    corrects it; anything else goes along with it, which is a stale answer even though no stale value is
    repeated ("Sure, book 9:00.")."""
    rejected = any(m.negated and m not in echoes for m in mentions)
    if rejected or _says_lapsed(answer) or _PREMISE_REJECTED.search(answer):
        return "correct", matched
    premise = {m.value for m in find_mentions(unicodedata.normalize("NFKC", question), probe.stale)}
    return "stale", {**matched, "stale": [value for value in probe.stale if value in premise]}


def _abstain_classification(
    answer: str,
    probe: ProbeSpec,
    question: str | None,
    mentions: list[Mention],
    echoes: set[Mention],
    matched: dict[str, list[str]],
) -> tuple[Classification, dict[str, list[str]]]:
    """The classification of an answer to an `abstain` probe that asserts no candidate value."""
    kind = _question_kind(question) if question and probe.mechanism == "lapsed-constraint" else "open"
    reply = _reply(answer)
    if kind in ("state", "existence") and reply == "yes":
        # "Yes." to "Is staging frozen?" affirms the old state the question names
        named = asserted_values(unicodedata.normalize("NFKC", question or ""), probe.stale)
        stale = [value for value in probe.stale if value in named]
        return ("stale" if stale else "wrong"), {**matched, "stale": stale}
    if is_abstention(answer):
        return "correct", matched
    denied = any(m.negated and m not in echoes for m in mentions)
    if kind == "open" and (denied or _says_lapsed(answer) or _DENIES_EXISTENCE.search(answer)):
        return "correct", matched  # says the thing no longer applies, asserting no old value
    if (
        kind != "open"
        and question
        and (
            says_cleared(answer, question)
            or (
                (denied or _says_lapsed(answer))
                and not (kind == "state" and reply == "assent")
                and not (kind == "permission" and reply == "no")
            )
        )
    ):
        return "correct", matched  # "Can I merge?" -> "Sure, go ahead.": the lapsed rule no longer applies
    return "wrong", matched


# A reported question: "You asked whether staging is frozen".
_REPORTED_QUESTION = re.compile(r"\b(?:whether|if)\b(?:\s+[\w'-]+){0,3}\s*$", re.IGNORECASE)
# A past-tense clause: "It was Aurora", "The room was Aurora", "本来是杭州" (the CJK forms are negation cues).
_PAST_CLAUSE = re.compile(
    r"\b(?:was|were|had\s+been|used\s+to\s+be|was\s+going\s+to\s+be)\b(?:\s+[\w'-]+){0,3}\s*$", re.IGNORECASE
)


def _is_echo(answer: str, mention: Mention) -> bool:
    """Whether the mention repeats the question instead of answering it: it sits in a sentence that ends
    with a question mark ("Frozen? Not anymore.") or in a reported question ("You asked whether ...")."""
    sentence_end = _SENTENCE_END.search(answer, mention.end)
    if sentence_end and sentence_end.group() == "?":
        return True
    return bool(_REPORTED_QUESTION.search(_clause_before(answer, mention.start)))


def _in_past_clause(answer: str, mention: Mention) -> bool:
    return bool(_PAST_CLAUSE.search(_clause_before(answer, mention.start)))


# ---- free-text answers: token F1 (the LoCoMo paper's metric) ---------------------------------------------

_ARTICLES = re.compile(r"\b(?:a|an|the|and)\b")
_PUNCTUATION = re.compile(r"[^\w\s]")
_NOT_MENTIONED = ("not mentioned", "no information available")


def answer_tokens(text: str) -> list[str]:
    """LoCoMo's answer normalisation: NFKC, lower case, punctuation and articles removed, split on spaces.
    (LoCoMo also Porter-stems the tokens; this does not, so scores on inflected words can differ a little.)"""
    text = unicodedata.normalize("NFKC", text).casefold().replace(",", "")
    return _ARTICLES.sub(" ", _PUNCTUATION.sub(" ", text)).split()


def token_f1(answer: str, gold: str) -> float:
    """Harmonic mean of token precision and recall between an answer and a gold answer (0 when either is
    empty after normalisation)."""
    predicted, wanted = answer_tokens(answer), answer_tokens(gold)
    common = sum(min(predicted.count(token), wanted.count(token)) for token in set(predicted))
    if not predicted or not wanted or common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def free_text_score(answer: str, gold: str | None, *, abstain: bool, mechanism: str = "") -> float | None:
    """The free-text score of an answer, in LoCoMo's manner: an abstention question scores 1 for an
    abstention ("I don't know", "not mentioned"...) and 0 otherwise; a multi-hop gold answer listing several
    parts (comma-separated) scores the mean over its parts of the best F1 against any part of the answer;
    otherwise token F1. None when the probe has neither a gold answer nor an expected abstention."""
    if abstain:
        lowered = answer.casefold()
        return 1.0 if is_abstention(answer) or any(p in lowered for p in _NOT_MENTIONED) else 0.0
    if gold is None:
        return None
    if mechanism == "multi-hop" and "," in gold:
        parts = [part for part in gold.split(",") if part.strip()]
        answers = [part for part in answer.split(",") if part.strip()] or [answer]
        return sum(max(token_f1(a, part) for a in answers) for part in parts) / len(parts)
    return token_f1(answer, gold)
