from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia.relevance import RelevanceIndex, terms
from arms.bm25 import BM25Index
from arms.textnorm import content_terms, dice, jaccard, stem, tokenize


def test_conservative_stemmer_edge_cases():
    assert stem("uses") == "use"
    assert stem("studies") == "study"
    assert stem("classes") == "class"
    assert stem("boxes") == "box"
    for untouched in ("class", "basis", "status", "analysis", "bus", "gas", "is", "was"):
        assert stem(untouched) == untouched
    assert stem("v3s") == "v3s"  # not purely alphabetic: left alone


def test_cjk_gets_unigrams_and_bigrams():
    assert tokenize("记忆系统") == ["记", "忆", "系", "统", "记忆", "忆系", "系统"]
    assert tokenize("Deploy Uses 记") == ["deploy", "use", "记"]


def test_cjk_bigram_ranks_the_real_phrase_above_a_shared_character():
    index = BM25Index()
    index.add("phrase", "记忆需要遗忘")
    index.add("char-only", "记录日志和笔记")
    index.add("unrelated", "部署脚本在这里")
    scores = index.scores("记忆")
    assert scores["phrase"] > scores["char-only"] > 0
    assert "unrelated" not in scores
    assert index.scores("记")["char-only"] > 0  # one-character queries still recall


def test_bm25_stems_query_and_documents_alike():
    index = BM25Index()
    index.add(1, "The studies use a cache")
    index.add(2, "Completely different words")
    assert set(index.scores("study uses")) == {1}


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet="ab cd记忆x", max_size=12), min_size=1, max_size=8), st.text(max_size=8))
def test_bm25_remove_restores_the_index(texts, query):
    index = BM25Index()
    for i, text in enumerate(texts):
        index.add(i, text)
    before = index.scores(query)
    assert all(score > 0 for score in before.values())
    index.add("extra", "ab cd extra")
    index.remove("extra")
    assert index.scores(query) == before
    for i in range(len(texts)):
        index.remove(i)
    assert len(index) == 0 and index.scores(query) == {}


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_similarities_are_symmetric_and_bounded(left, right):
    a, b = content_terms(left), content_terms(right)
    for measure in (jaccard, dice):
        assert measure(a, b) == measure(b, a)
        assert 0.0 <= measure(a, b) <= 1.0
    assert dice(a, a) == 1.0


_WORDS = st.sampled_from(
    ["oolong", "tea", "the", "deploy", "deploys", "rota", "记忆", "遗忘", "a", "room", "x1"]
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(_WORDS, max_size=10).map(" ".join), min_size=1, max_size=12),
    st.lists(_WORDS, min_size=1, max_size=8).map(" ".join),
    st.sets(st.integers(0, 11)),
)
def test_bm25_is_the_engine_index_bit_for_bit(texts, query, removed):
    """The arms' BM25 and the engine's relevance index are one implementation: with the engine's terms, the
    keyed index scores every document exactly as the engine's index does (after replacements and removals,
    whose slots are reused)."""
    keyed = BM25Index(tokenizer=terms)
    for i in range(len(texts)):
        keyed.add(i, "placeholder words")  # replaced below: the first text leaves no trace
    for i, text in enumerate(texts):
        keyed.add(i, text)
    kept = [i for i in range(len(texts)) if i not in removed]
    for i in removed:
        keyed.remove(i)
    keyed.add("late", texts[0])  # takes a freed slot when there is one
    engine = RelevanceIndex()
    documents = [*(texts[i] for i in kept), texts[0]]
    for slot, text in enumerate(documents):
        engine.add(slot, text)
    expected = engine.bm25(terms(query), len(documents))
    scores = keyed.scores(query)
    assert scores == {d: float(expected[s]) for s, d in enumerate([*kept, "late"]) if expected[s] > 0}
    assert len(keyed) == len(kept) + 1 and "late" in keyed and all(i not in keyed for i in removed)
