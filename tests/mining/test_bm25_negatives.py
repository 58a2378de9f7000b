import numpy as np

from relkt.mining import Bm25Index, bm25_negatives, bm25_tokenize


def test_tokenizer_handles_scripts_without_spaces():
    assert bm25_tokenize("Where does the Rhine flow?") == ["where", "does", "the", "rhine", "flow"]
    # Chinese: characters and character bigrams, digits stay a word.
    assert bm25_tokenize("防守 308分") == ["防", "守", "防守", "308", "分"]
    thai = bm25_tokenize("แม่น้ำ")
    assert "แ" in thai and "แม" in thai and len(thai) == 6 + 5


def test_ranks_by_bm25_and_skips_gold_in_any_language():
    docs = [
        "the cat sleeps all day",
        "dogs hunt mice",
        "the river flows into the sea",
        "cats hunt mice at night",
        "狗 狩猎 老鼠",
    ]
    index = Bm25Index(docs)
    top = index.top(["do cats hunt mice?", "狗 狩猎", "zzz unknown"], 4)
    assert top.shape == (3, 4)
    assert top[0, 0] == 3 and top[0, 1] == 1  # "cats hunt mice" shares 3 terms, "dogs hunt mice" 2
    assert top[1, 0] == 4
    # Gold of query 0: candidate 3 (its answer) and 1 (say, its translation): both excluded.
    gold = np.array([[3, 1], [4, -1], [0, -1]])
    negatives = bm25_negatives(top, gold, n_negatives=2)
    assert negatives[0].tolist() == [t for t in top[0] if t not in (3, 1)][:2]
    assert 4 not in negatives[1]
    # A window starting at rank 2 and a seeded random pick stay inside the window and off gold.
    picked = bm25_negatives(top, gold, n_negatives=1, top_start=2, rng=np.random.default_rng(0))
    for row, p, g in zip(top, picked[:, 0], gold):
        assert p in row[2:] and p not in g


def test_too_few_eligible_pads_with_minus_one():
    top = np.array([[0, 1]])
    assert bm25_negatives(top, np.array([[0]]), n_negatives=3).tolist() == [[1, -1, -1]]


def test_compiled_retrieval_gives_the_same_scores_at_every_rank():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    docs = [" ".join(rng.choice(words, size=rng.integers(3, 12))) for _ in range(300)]
    queries = [" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(50)] + ["zzz unknown"]
    index = Bm25Index(docs)
    loop_docs, loop_scores = index.scored_top(queries, 10, compiled=False)
    fast_docs, fast_scores = index.scored_top(queries, 10, compiled=True)
    assert fast_docs.shape == loop_docs.shape == (51, 10)
    np.testing.assert_allclose(fast_scores, loop_scores, rtol=1e-6)
    assert (np.diff(fast_scores, axis=1) <= 1e-6).all()
    # Where a rank's score is unique among the row's first 11 (the 11th: a tie across the cut), both name one document.
    _, eleven = index.scored_top(queries, 11, compiled=False)
    unique = 0
    for row in range(len(queries)):
        for r, s in enumerate(loop_scores[row]):
            if np.isclose(eleven[row], s, rtol=1e-6).sum() == 1:
                assert fast_docs[row, r] == loop_docs[row, r]
                unique += 1
    assert unique > 100
    # The size switch: a pool this small takes the loop.
    np.testing.assert_array_equal(index.top(queries, 10), loop_docs)
