"""Language-aware ranking on 3-language toy pools worked out by hand: a pool parallel in every language gains, a pool
where a language holds no answer loses; the raw ranking is unchanged; a cross-fitted setting is chosen on the other
half only."""

from __future__ import annotations

import numpy as np
import pytest

from relkt.metrics import language_aware_ranking as lar
from relkt.metrics.language_aware_ranking import GRID, LanguageAwareRanking, RankSetting, setting_ap
from relkt.metrics.ranking import gold_ranks

TOPICS, LANGS = 4, ("en", "de", "fr")


def toy_pool(pull: float, parallel: bool):
    """Questions of TOPICS topics; a candidate scores 0.8 for its topic plus pull^2 for its question's language. When
    not parallel, fr holds no answer: a sentence near each topic (0.75) that is nobody's gold."""
    d = TOPICS + len(LANGS) + TOPICS
    topic, lang = np.eye(d)[:TOPICS], {x: np.eye(d)[TOPICS + i] for i, x in enumerate(LANGS)}
    q, c, c_langs, where = [], [], [], {}
    for x in LANGS if parallel else ("en", "de"):
        q += [topic[t] + pull * lang[x] for t in range(TOPICS)]
    for x in LANGS:
        for t in range(TOPICS):
            if parallel or x != "fr":
                where[(x, t)] = len(c)
                c.append(0.8 * topic[t] + pull * lang[x])
            else:
                c.append(0.75 * topic[t] + pull * lang[x] + 0.3 * np.eye(d)[TOPICS + len(LANGS) + t])
            c_langs.append(x)
    gold = [np.array(sorted(where[(x, i % TOPICS)] for x in LANGS if (x, i % TOPICS) in where)) for i in range(len(q))]
    return np.array(q, np.float32), np.array(c, np.float32), np.array(c_langs), gold


def test_csls_by_hand_on_one_block():
    q = np.array([[1.0, 0.0]], np.float32)
    c = np.array([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8]], np.float32)
    ranking = LanguageAwareRanking(q, c, np.array(["en", "en", "en"]), RankSetting("csls", 1))
    s = (q @ c.T)[0]  # 0.9, 0.5, 0.2; one question, so each candidate's nearest question is it: r_c = s
    expected = 2 * s - s.max() - s
    np.testing.assert_allclose(ranking(q @ c.T, 0)[0], expected, atol=1e-6)
    margin = LanguageAwareRanking(q, c, np.array(["en"] * 3), RankSetting("margin", 1))
    np.testing.assert_allclose(margin(q @ c.T, 0)[0], s / ((s.max() + s) / 2), atol=1e-6)


def test_centring_by_hand_works_within_each_language():
    q = np.array([[1.0, 0.0]], np.float32)
    c = np.array([[0.9, 0.0], [0.1, 0.0], [0.4, 0.0], [0.2, 0.0]], np.float32)
    ranking = LanguageAwareRanking(q, c, np.array(["en", "en", "de", "de"]), RankSetting("center"))
    np.testing.assert_allclose(ranking(q @ c.T, 0)[0], [0.4, -0.4, 0.1, -0.1], atol=1e-6)


def test_it_helps_a_pool_parallel_in_every_language():
    q, c, langs, gold = toy_pool(pull=1.0, parallel=True)  # own-language wrong answers (1.0) above golds (0.8)
    raw = setting_ap(q, c, gold, langs, RankSetting()).mean()
    assert raw == pytest.approx(19 / 30)  # own gold 1st, the other two after the 3 wrong own: (1 + 2/5 + 3/6) / 3
    for name in ("center", "csls:1", "margin:1"):
        assert setting_ap(q, c, gold, langs, RankSetting.parse(name)).mean() == pytest.approx(1.0)


def test_it_hurts_a_pool_where_a_language_holds_no_answer():
    q, c, langs, gold = toy_pool(pull=0.6, parallel=False)
    assert setting_ap(q, c, gold, langs, RankSetting()).mean() == pytest.approx(1.0)  # golds first: 1.16, 0.8
    # csls:2 lifts each language's block by its neighbourhood: fr's near sentence (0.375 for an English question)
    # passes the German gold (0.22), below the English one (0.58)
    assert setting_ap(q, c, gold, langs, RankSetting("csls", 2)).mean() == pytest.approx(5 / 6)


def test_the_raw_ranking_is_what_it_was_without_an_adjuster():
    q, c, langs, gold = toy_pool(pull=1.0, parallel=True)
    none = LanguageAwareRanking(q, c, langs, RankSetting())
    np.testing.assert_array_equal(gold_ranks(q, c, gold), gold_ranks(q, c, gold, adjust=none))


def test_cross_fitting_chooses_each_half_on_the_other(monkeypatch):
    halves = np.array([0, 0, 1, 1])
    ap = {"none": np.array([1.0, 1.0, 0.0, 0.0]), "center": np.array([0.0, 0.0, 1.0, 1.0])}
    monkeypatch.setattr(lar, "settings_ap", lambda q, c, g, langs, grid: {s.name: ap[s.name] for s in grid})
    grid = (RankSetting(), RankSetting("center"))
    settings, record = lar.crossfit_settings(None, None, None, None, halves, grid)
    assert [s.name for s in settings] == ["center", "center", "none", "none"]
    assert record["half_0"]["chosen"] == "center" and record["half_1"]["chosen"] == "none"


def test_choosing_keeps_none_on_a_tie():
    q, c, langs, gold = toy_pool(pull=0.6, parallel=True)  # raw is perfect already: nothing to gain
    best, maps = lar.choose_setting(q, c, gold, langs, GRID)
    assert best == RankSetting() and maps["none"] == pytest.approx(1.0)


def test_settings_are_parsed_or_refused():
    assert RankSetting.parse("csls:5") == RankSetting("csls", 5)
    assert RankSetting.parse("margin").k == 10
    for bad in ("csls:0", "nearest:3", "center:4"):
        with pytest.raises(ValueError):
            RankSetting.parse(bad)


def test_article_halves_keep_a_questions_translations_together():
    halves = lar.article_halves(["a", "b", "a", "c"], ["X", "Y", "X-translated", "Z"])
    assert halves[0] == halves[2] and len(set(halves.tolist())) == 2


def test_knn_by_hand_subtracts_the_questions_own_neighbourhood_in_each_language():
    q = np.array([[1.0, 0.0]], np.float32)
    c = np.array([[0.9, 0.0], [0.5, 0.0], [0.1, 0.0], [0.4, 0.0], [0.2, 0.0]], np.float32)
    ranking = LanguageAwareRanking(q, c, np.array(["en", "en", "en", "de", "de"]), RankSetting("knn", 2))
    # en: its two best 0.9, 0.5 -> 0.7; de: 0.4, 0.2 -> 0.3
    np.testing.assert_allclose(ranking(q @ c.T, 0)[0], [0.2, -0.2, -0.6, 0.1, -0.1], atol=1e-6)


def test_one_pass_over_the_grid_ranks_as_each_setting_alone():
    """settings_ap shares each block's scores and neighbourhoods among the settings: every setting's AP is the one its
    own adjuster gives, with languages interleaved (index columns) and several blocks of questions."""
    from relkt.metrics.ranking import per_question_metrics

    rng = np.random.default_rng(3)
    q, c = rng.normal(size=(37, 6)).astype(np.float32), rng.normal(size=(29, 6)).astype(np.float32)
    langs = np.array(["en", "de", "fr"])[rng.integers(0, 3, size=29)]
    gold = [rng.choice(29, size=rng.integers(1, 4), replace=False) for _ in range(37)]
    grid = tuple(RankSetting.parse(name) for name in ("none", "center", "knn:2", "csls:3", "margin:50"))
    together = lar.settings_ap(q, c, gold, langs, grid)
    for s in grid:
        alone = LanguageAwareRanking(q, c, langs, s)
        ranks = gold_ranks(q, c, gold, chunk_size=5, adjust=alone)
        np.testing.assert_allclose(together[s.name], per_question_metrics(ranks, (1,), ())["AP"], rtol=1e-6)
    assert together["none"].mean() != pytest.approx(together["csls:3"].mean())  # the settings do rank differently


def test_the_k_best_means_match_a_sort_whatever_ks_come_with_them():
    scores = np.random.default_rng(4).normal(size=(7, 12)).astype(np.float32)
    best_first = -np.sort(-scores, axis=1)
    many = lar._top_means(scores, (1, 3, 12, 50))
    for k in (1, 3, 12, 50):
        np.testing.assert_allclose(many[k], best_first[:, : min(k, 12)].mean(axis=1), rtol=1e-5)
        np.testing.assert_array_equal(many[k], lar._top_mean(scores, k))  # alone: the very same numbers
