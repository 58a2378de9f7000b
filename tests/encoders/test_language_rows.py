import numpy as np
import pytest

from relkt.encoders.language_rows import language_rows, row_counts
from relkt.errors import ConfigError
from tests.helpers.tiny_muse import WORDS, tiny_muse_encoder


def test_rows_the_new_language_reads_and_the_others_rarely_do():
    encoder = tiny_muse_encoder()
    thai = [" ".join(WORDS["th"][:7]), " ".join(WORDS["th"][7:])]
    # The other languages' texts, one of them quoting a Thai word once (as an English article quotes a Greek name).
    others = [" ".join(WORDS[lang]) for lang in ("en", "de", "zh")] + ["the word " + WORDS["th"][0]]
    own, other = row_counts(encoder, thai), row_counts(encoder, others)
    assert sum(own.values()) == int(
        encoder.preprocess(thai)["padding_mask"].numpy().sum()
    )  # every position, no padding
    quoted = {r for r in own if other[r] == 1}
    assert quoted  # the quoted word's rows

    only_thai = language_rows(encoder, thai, others, max_other_count=1)
    assert set(only_thai) == {r for r in own if other[r] == 0} and not quoted & set(only_thai)
    assert encoder.bos_id not in only_thai and encoder.eos_id not in only_thai  # every text reads <s> and </s>
    # A higher bar lets rows the others read rarely join.
    loose = language_rows(encoder, thai, others, max_other_count=2)
    assert set(loose) == set(only_thai) | quoted
    assert np.all(np.diff(loose) > 0)
    # Each quoted row is read once by the others and a few times by Thai (its pieces recur in other Thai words). A
    # ratio above what Thai reads keeps them frozen, as a name that parallel text spells on both sides; a ratio at
    # the fewest Thai reads lets them all in. Rows only Thai reads pass any ratio.
    assert {other[r] for r in quoted} == {1}
    fewest, most = min(own[r] for r in quoted), max(own[r] for r in quoted)
    assert set(language_rows(encoder, thai, others, max_other_count=2, min_own_ratio=most + 0.5)) == set(only_thai)
    assert set(language_rows(encoder, thai, others, max_other_count=2, min_own_ratio=fewest)) == set(loose)
    assert set(language_rows(encoder, thai, others, max_other_count=1, min_own_ratio=1000.0)) == set(only_thai)


def test_bad_input_fails_clearly():
    encoder = tiny_muse_encoder()
    with pytest.raises(ConfigError, match="max_other_count must be >= 1"):
        language_rows(encoder, ["a"], ["b"], max_other_count=0)
    with pytest.raises(ConfigError, match="no text in the new languages"):
        language_rows(encoder, [], ["b"])
    for ratio in (-1.0, float("nan")):
        with pytest.raises(ConfigError, match="min_own_ratio must be a finite number >= 0"):
            language_rows(encoder, ["a"], ["b"], min_own_ratio=ratio)
