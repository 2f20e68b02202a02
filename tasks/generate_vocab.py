"""Vocabulary for the task generator (tasks.generate): subjects, values and sentence templates per language.

Every value in a pool is a single distinctive word (Latin) or a CJK term that is not a substring of another
value in the same pool, so probe matching (whole-word for Latin, substring for CJK) never confuses two.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subject:
    phrase: str  # "the verification drink" / "验证饮品"
    key: str  # stable key for supersession-aware arms
    values: tuple[str, ...]


@dataclass(frozen=True)
class Constraint:
    rule: str  # the memory text, with {until} for the end of the constraint
    question: str
    stale: tuple[str, ...]  # words a model repeating the lapsed constraint would use
    key: str


@dataclass(frozen=True)
class Templates:
    tell: str
    content: str
    update: str
    question: str
    preference_tell: str
    preference_content: str
    preference_question: str
    auto_content: str  # a tool output / web page claiming another value
    auto_user: str
    scratch_content: str  # a sub-agent's scratch note
    scratch_user: str
    filler: tuple[str, ...]
    premise_question: str  # a question that takes a (stale) value of the subject for granted
    forget_user: str  # the user asks to forget the subject
    notes_content: str  # a copy of the value in a notes memory (derived content a deletion must reach)
    # a fact that depends on a subject's value, stored on its own (cascade); {code} from DEPENDENT_CODES
    dependent_content: str
    dependent_change: str  # the subject changes, and the change names the dependent's new code
    dependent_question: str


FACTS: dict[str, tuple[Subject, ...]] = {
    "en": (
        Subject(
            "the verification drink",
            "verification-drink",
            ("oolong", "lapsang", "sencha", "rooibos", "assam"),
        ),
        Subject(
            "the deploy region", "deploy-region", ("frankfurt", "oregon", "virginia", "mumbai", "sydney")
        ),
        Subject(
            "the release codename", "release-codename", ("falcon", "heron", "osprey", "kestrel", "puffin")
        ),
        Subject("the on-call lead", "oncall-lead", ("priya", "marcus", "elena", "tomasz", "kwame")),
        Subject("the standup room", "standup-room", ("aurora", "cedar", "juniper", "sequoia", "willow")),
        Subject("the staging cluster", "staging-cluster", ("atlas", "hermes", "orion", "vega", "rigel")),
        Subject("the primary database", "primary-db", ("postgres", "mariadb", "cockroach", "sqlite")),
        Subject("the CI provider", "ci-provider", ("jenkins", "buildkite", "drone", "circleci", "gitlab")),
    ),
    "zh": (
        Subject("验证饮品", "verification-drink", ("乌龙", "普洱", "龙井", "碧螺春", "铁观音")),
        Subject("部署区域", "deploy-region", ("华东", "华北", "华南", "西南", "香港")),
        Subject("发布代号", "release-codename", ("青鸟", "白鹭", "苍鹰", "喜鹊", "海燕")),
        Subject("值班负责人", "oncall-lead", ("王磊", "李娜", "张伟", "刘洋", "陈静")),
        Subject("例会会议室", "standup-room", ("松林厅", "竹园厅", "梅苑厅", "兰亭厅", "桃源厅")),
        Subject("预发集群", "staging-cluster", ("昆仑", "泰山", "华山", "峨眉", "武夷")),
    ),
}

PREFERENCES: dict[str, tuple[Subject, ...]] = {
    "en": (
        Subject("my preferred summary format", "summary-format", ("bullets", "table", "outline", "memo")),
        Subject("the units I want", "units", ("metric", "imperial")),
        Subject("my scheduling timezone", "timezone", ("berlin", "chicago", "singapore", "lagos", "denver")),
        Subject(
            "the test framework for this repo", "test-framework", ("pytest", "unittest", "nose2", "ward")
        ),
        Subject("my commit message style", "commit-style", ("conventional", "gitmoji", "imperative")),
    ),
    "zh": (
        Subject("我喜欢的总结格式", "summary-format", ("要点列表", "表格", "大纲")),
        Subject("我的排期时区", "timezone", ("北京时间", "东京时间", "伦敦时间")),
        Subject("对我的称呼", "form-of-address", ("王老师", "小李", "陈总")),
        Subject("回复用的语言风格", "tone", ("简洁", "正式", "口语化")),
    ),
}

CONSTRAINTS: dict[str, tuple[Constraint, ...]] = {
    "en": (
        Constraint(
            "The staging database is frozen until {until}.",
            "Can I run migrations on staging?",
            ("frozen",),
            "staging-freeze",
        ),
        Constraint(
            "Merges to main are blocked until {until} for the audit.",
            "Can I merge to main?",
            ("blocked",),
            "main-merge-block",
        ),
        Constraint(
            "Production deploys are paused until {until} during the holiday window.",
            "Can I deploy to production?",
            ("paused",),
            "prod-deploy-pause",
        ),
    ),
    "zh": (
        Constraint("预发数据库冻结到{until}。", "现在可以在预发库上跑迁移吗？", ("冻结",), "staging-freeze"),
        Constraint(
            "审计期间主干禁止合并，直到{until}。", "现在可以合并到主干吗？", ("禁止合并",), "main-merge-block"
        ),
    ),
}

# Codes of a dependent fact (cascade): distinct, none a substring of another.
DEPENDENT_CODES = ("CK-17", "CK-29", "CK-41", "CK-58", "CK-73", "CK-86")

TEMPLATES: dict[str, Templates] = {
    "en": Templates(
        tell="Remember: {subject} is {value}.",
        content="{Subject} is {value}.",
        update="Update: {subject} is now {value}.",
        question="What is {subject}?",
        preference_tell="Going forward, {subject} is {value}.",
        preference_content="User preference: {subject} is {value}.",
        preference_question="Remind me, what is {subject}?",
        auto_content="Fetched page says {subject} is {value}.",
        auto_user="Summarise the wiki page the crawler fetched about our setup.",
        scratch_content="Scratch: trying {value} as {subject} for this experiment only.",
        scratch_user="Sub-agent: explore alternatives for {subject}.",
        filler=(
            "Let's continue with the refactor of the billing module.",
            "Please review the open pull request for the parser.",
            "Draft release notes for the last sprint.",
            "Write a unit test for the date helper.",
            "Explain the failing lint warning in utils.",
        ),
        premise_question="Since {subject} is still {value}, what should the plan say?",
        forget_user="Please forget {subject}, don't keep it anywhere.",
        notes_content="Notes so far: {subject} is {value}.",
        dependent_content="The checklist code that goes with {subject} is {code}.",
        dependent_change="Update: {subject} is now {value}, and its checklist code is {code}.",
        dependent_question="Which checklist code goes with {subject}?",
    ),
    "zh": Templates(
        tell="记住：{subject}是{value}。",
        content="{subject}是{value}。",
        update="更新一下：{subject}现在是{value}。",
        question="{subject}是哪个？",
        preference_tell="以后{subject}都用{value}。",
        preference_content="用户偏好：{subject}用{value}。",
        preference_question="提醒我一下，{subject}是什么？",
        auto_content="抓取的网页上写着{subject}是{value}。",
        auto_user="总结一下爬虫抓到的关于我们环境的页面。",
        scratch_content="草稿：仅在本次实验中把{subject}试成{value}。",
        scratch_user="子代理：帮我试试{subject}的其他选项。",
        filler=(
            "继续重构计费模块。",
            "帮我看一下解析器的合并请求。",
            "写一下上个迭代的发布说明。",
            "给日期工具函数补一个单元测试。",
            "解释一下 utils 里的 lint 警告。",
        ),
        premise_question="既然{subject}还是{value}，计划里该怎么写？",
        forget_user="把{subject}忘掉吧，哪里都别留。",
        notes_content="目前的笔记：{subject}是{value}。",
        dependent_content="{subject}对应的核对编号是{code}。",
        dependent_change="更新一下：{subject}现在是{value}，对应的核对编号是{code}。",
        dependent_question="{subject}对应的核对编号是哪个？",
    ),
}
