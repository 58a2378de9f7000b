"""TripletNegatives: anchors, rounds that keep an anchor's last negatives when it finds none, and the state a
checkpoint carries."""

from types import SimpleNamespace

import numpy as np
import pytest

from relkt.data import Candidate, LareqaPool, Question
from relkt.mining import TripletNegatives

MINING = SimpleNamespace(
    bm25_epochs=1,
    online_epochs=1,
    bm25_k1=1.5,
    bm25_b=0.75,
    bm25_top_start=0,
    bm25_top_end=5,
    bm25_negatives=1,
    hard=1,
    semi_hard=1,
    pick="random",
    remine_every=0,
    encode_batch_size=8,
)
TRIPLET = SimpleNamespace(margin=0.2, distance="cosine", positives_per_question=0)


def pool() -> LareqaPool:
    # Two questions; q0's gold is c0, q1's gold is c1 and c2 (two anchors). c3 shares q0's words.
    cands = [
        Candidate(f"c{i}", "en", text, text, "a", i, 0, len(text))
        for i, text in enumerate(["cats purr", "dogs bark", "dogs run", "why do cats purr loudly"])
    ]
    questions = [
        Question("q0", "en", "why do cats purr", "a", 0, 0),
        Question("q1", "en", "what do dogs do", "a", 1, 0),
    ]
    return LareqaPool(questions, cands, [np.array([0]), np.array([1, 2])])


def test_anchors_rounds_and_checkpoint_state():
    p = pool()
    t = TripletNegatives(p, p.candidate_texts(), TRIPLET, MINING, seed=0)
    assert t.anchor_q.tolist() == [0, 1, 1] and t.anchor_pos.tolist() == [0, 1, 2] and t.n_slots == 2
    report = t.bm25_round(np.random.default_rng(0))
    assert report["source"] == "bm25" and report["anchors"] == 3
    for a, gold in enumerate([{0}, {1, 2}, {1, 2}]):  # a negative is never one of the anchor's gold answers
        assert not set(t.negatives[a][t.negatives[a] >= 0].tolist()) & gold
    # A round that finds nothing for anchor 0 leaves its negatives as they were.
    before = t.negatives.copy()
    new = np.full_like(t.negatives, -1)
    new[1:, 0] = 3
    report = t._merge(new, "online")
    assert report["anchors_without_new_negative"] == 1 and t.negatives[0].tolist() == before[0].tolist()
    t.shuffle_epoch(0)
    texts = t.triplet_texts(t.epoch_pairs[:1])
    assert set(texts) == {"anchor", "positive", "negative"}
    again = TripletNegatives(p, p.candidate_texts(), TRIPLET, MINING, seed=0)
    again.load_arrays(t.arrays())
    assert again.negatives.tolist() == t.negatives.tolist() and again.epoch_pairs.tolist() == t.epoch_pairs.tolist()


@pytest.mark.parametrize("pairing", ["any", "same", "cross"])
def test_pairing_picks_positives_in_the_question_language_or_the_others(tiny_data, pairing):
    """tiny_data: 6 question ids in en and de, each with its answer sentence in both. `any`: both answers (24
    anchors); `same` (X-X): the answer in the question's own language (12); `cross` (X-Y): the other one (12)."""
    from relkt.data import LareqaPool

    pool = LareqaPool.load(tiny_data, split="all")
    positives = TripletNegatives.positives(pool, 0, 0, pairing)
    c_langs = pool.candidate_langs
    pairs = [(q.lang, c_langs[j]) for q, g in zip(pool.questions, positives) for j in g]
    assert len(pairs) == {"any": 24, "same": 12, "cross": 12}[pairing]
    if pairing == "same":
        assert all(a == b for a, b in pairs)
    if pairing == "cross":
        assert all(a != b for a, b in pairs)
    one = TripletNegatives.positives(pool, 1, 0, pairing)  # one a question: its own language's, or for X-Y another's
    assert all(len(g) == 1 for g in one)
    if pairing == "cross":
        assert all(c_langs[g[0]] != q.lang for q, g in zip(pool.questions, one))


def test_a_pairing_that_leaves_no_anchor_is_one_clear_error(tiny_data, tmp_path):
    """X-Y pairing on one language: no question has an answer in another, so there is nothing to train on."""
    from relkt.data import LareqaPool
    from relkt.errors import DataError

    pool = LareqaPool.load(tiny_data, split="all", langs=["en"])
    triplet = SimpleNamespace(**vars(TRIPLET), pairing="cross")
    with pytest.raises(DataError, match=r"no training anchors: .* \(triplet.pairing: cross\)"):
        TripletNegatives(pool, pool.candidate_texts(), triplet, MINING, seed=0)
