import numpy as np
import pytest

from relkt.analysis import (
    gap_to_english,
    language_id_probe,
    limit_to_one_target,
    mcnemar,
    monolingual_pool,
    paired_bootstrap,
    pca_2d,
    remove_one_target,
    top_k_language_distribution,
)
from relkt.analysis.tokenizer_audit import audit_tokenizer
from relkt.data import Candidate, LareqaPool, Question


def hand_pool():
    """One English question; candidates c0 (en, gold), c1 (de, gold), c2 (en), c3 (de).
    1-D embeddings: question [1]; candidates scored 0.8, 0.6, 0.9, 0.7 -> order c2, c0, c3, c1."""
    q = [Question("q", "en", "q?", "A", 0, 0)]
    cands = [
        Candidate(f"{lang}:{i}", lang, f"s{i}", "ctx", "A", 0, 0, 1) for i, lang in enumerate(["en", "de", "en", "de"])
    ]
    pool = LareqaPool(q, cands, [np.array([0, 1])])
    return pool, np.array([[1.0]], np.float32), np.array([[0.8], [0.6], [0.9], [0.7]], np.float32)


def test_limit_to_one_target_by_hand():
    # Full ranks: c0 = 2, c1 = 4. Only the en target kept: c0 still rank 2 -> 1/2.
    # Only the de target kept: c1 moves up past the removed c0 -> rank 3 -> 1/3.
    pool, q, c = hand_pool()
    langs, m = limit_to_one_target(q, c, pool)
    assert langs == ["de", "en"]
    assert m[1, 1] == pytest.approx(1 / 2) and m[1, 0] == pytest.approx(1 / 3)
    assert np.isnan(m[0]).all()  # no German questions


def test_remove_one_target_by_hand():
    # Without the same-language (en) target: c1 alone at rank 3 -> AP 1/3.
    # Without the other (de) target: c0 alone at rank 2 -> AP 1/2. Relative delta (1/3 - 1/2) / (1/2) = -1/3.
    pool, q, c = hand_pool()
    r = remove_one_target(q, c, pool)["all"]
    assert r["mAP"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert r["mAP_without_same_language"] == pytest.approx(1 / 3)
    assert r["mAP_without_other_language"] == pytest.approx(1 / 2)
    assert r["relative_delta"] == pytest.approx(-1 / 3)


def test_monolingual_pool_by_hand():
    # English-only pool {c0, c2}: c0 second -> AP 1/2.
    pool, q, c = hand_pool()
    assert monolingual_pool(q, c, pool) == {"en": pytest.approx(0.5)}


def axis_embeddings(pool, key):
    """Embed every text on a one-hot axis chosen by `key(record)`."""
    keys = sorted({key(r) for r in pool.questions} | {key(r) for r in pool.candidates})
    eye = np.eye(len(keys), dtype=np.float32)
    return (
        np.stack([eye[keys.index(key(r))] for r in pool.questions]),
        np.stack([eye[keys.index(key(r))] for r in pool.candidates]),
    )


def qas_key(pool):
    """Perfect alignment: a candidate sits on the axis of the question it answers (any language)."""
    owner = {}
    for q, g in zip(pool.questions, pool.gold):
        for j in g:
            owner[pool.candidates[j].cid] = q.qas_id
    return lambda r: getattr(r, "qas_id", None) or owner[r.cid]


def test_perfect_alignment_has_no_language_bias(tiny_data):
    pool = LareqaPool.load(tiny_data)
    q, c = axis_embeddings(pool, qas_key(pool))
    _, heat = limit_to_one_target(q, c, pool)
    np.testing.assert_allclose(heat, 1.0)  # every target first once the others are gone
    bias = remove_one_target(q, c, pool)
    assert bias["all"]["relative_delta"] == 0.0 and bias["all"]["n_questions"] == 12


def test_language_only_encoder_retrieves_its_own_language():
    pool, _, _ = hand_pool()
    q, c = axis_embeddings(pool, lambda r: r.lang)
    langs, dist = top_k_language_distribution(q, c, pool, k=2)
    # The English question's top 2 are the two English candidates (score 1 vs 0).
    assert langs == ["de", "en"] and dist[1].tolist() == [0.0, 1.0]
    labels = np.array([x.lang for x in pool.candidates] * 10)
    assert language_id_probe(np.tile(c, (10, 1)), labels) == 1.0


def test_probe_is_at_chance_on_noise_and_pca_shape():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 8))
    labels = rng.integers(0, 2, 400)
    assert 0.3 < language_id_probe(x, labels) < 0.7
    assert pca_2d(x).shape == (400, 2)


def test_mcnemar_by_hand():
    # 2 questions only A gets right, 8 only B, 10 both: exact test, p = 2 * P(X <= 2 | n=10, 1/2)
    # = 2 * (1 + 10 + 45) / 1024 = 0.109375.
    a = np.array([1, 1] + [0] * 8 + [1] * 10, bool)
    b = np.array([0, 0] + [1] * 8 + [1] * 10, bool)
    r = mcnemar(a, b)
    assert (r["only_a"], r["only_b"], r["method"]) == (2, 8, "exact")
    assert r["p_value"] == pytest.approx(0.109375)
    # 10 vs 40 discordant: chi2 = (|10 - 40| - 1)^2 / 50 = 16.82 -> p < 0.001.
    a = np.array([1] * 10 + [0] * 40, bool)
    r = mcnemar(a, ~a)
    assert r["method"] == "chi2" and r["statistic"] == pytest.approx(16.82) and r["p_value"] < 1e-3
    assert mcnemar(a, a)["p_value"] == 1.0


def test_paired_bootstrap():
    a = np.linspace(0, 1, 50)
    same = paired_bootstrap(a, a)
    assert same["delta"] == 0 and same["low"] == same["high"] == 0 and not same["significant"]
    better = paired_bootstrap(a, a + 0.1 + 0.01 * np.sin(np.arange(50)))
    assert better["significant"] and better["low"] > 0.08


def test_tokenizer_audit_counts_unknown_pieces():
    from tests.helpers.tiny_bert import tiny_bert

    tok = tiny_bert().tokenizer
    # "the cat" -> 2 known pieces; "zzz cat" -> [UNK] cat; "猫" -> [UNK] (CJK split, not in vocab).
    # 5 pieces, 2 unknown -> 0.4; 2 of 3 texts have one; 5 pieces / 5 whitespace words = 1.
    r = audit_tokenizer(tok, ["the cat", "zzz cat", "猫"])
    assert r["unk_rate"] == pytest.approx(0.4) and r["texts_with_unk"] == pytest.approx(2 / 3)
    assert r["pieces_per_word"] == pytest.approx(1.0)
    # With max_length 3 only one piece fits beside [CLS] and [SEP]: the two 2-piece texts are cut.
    assert r["pieces_per_text"] == pytest.approx(5 / 3) and "texts_cut" not in r
    assert audit_tokenizer(tok, ["the cat", "zzz cat", "猫"], max_length=3)["texts_cut"] == pytest.approx(2 / 3)


def test_gap_to_english_by_hand():
    # Four questions, asked in English and German (stored in another order), plus a German one with no English
    # original (q9, left out). English gets q0, q1, q2; German gets q2, q3. Only English: q0, q1; only German: q3.
    # German P@1 2/4 = 0.5, English originals 3/4 = 0.75, gap 0.25; McNemar exact on 2 / 1: p = 1.0.
    lang = np.array(["en", "en", "en", "en", "de", "de", "de", "de", "de"])
    qas_id = np.array(["q0", "q1", "q2", "q3", "q3", "q2", "q1", "q0", "q9"])
    hit = np.array([1, 1, 1, 0, 1, 1, 0, 0, 1], float)
    r = gap_to_english(lang, qas_id, hit)
    assert set(r) == {"de"}
    assert r["de"] == {
        "P@1": 0.5,
        "english_P@1": 0.75,
        "gap": 0.25,
        "only_english": 2,
        "only_x": 1,
        "p_value": pytest.approx(1.0),
        "n_questions": 4,
    }
    with pytest.raises(ValueError, match="no English questions"):
        gap_to_english(lang[4:], qas_id[4:], hit[4:])


def test_proportion_difference_matches_newcombes_worked_example():
    """Newcombe (1998), Table II, example (a): 56/70 against 48/80, difference 0.2, hybrid score interval
    0.0524 to 0.3339; and (d) 0/10 against 0/20: 0, -0.1611 to 0.2775."""
    from relkt.analysis import proportion_difference

    r = proportion_difference(48, 80, 56, 70)
    assert r["difference"] == pytest.approx(0.2) and (round(r["low"], 4), round(r["high"], 4)) == (0.0524, 0.3339)
    r = proportion_difference(0, 20, 0, 10)
    assert (round(r["low"], 4), round(r["high"], 4)) == (-0.1611, 0.2775)
    with pytest.raises(ValueError):
        proportion_difference(3, 2, 1, 1)
