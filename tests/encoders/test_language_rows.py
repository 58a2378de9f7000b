import numpy as np
import pytest

from relkt.encoders.language_rows import language_rows, row_counts
from relkt.errors import ConfigError
from tests.encoders.tiny_muse import WORDS, tiny_muse_encoder


def test_rows_the_new_language_reads_and_the_others_rarely_do():
    encoder = tiny_muse_encoder()
    thai = [" ".join(WORDS["th"][:7]), " ".join(WORDS["th"][7:])]
    # The other languages' texts, one of them quoting a Thai word once (as an English article quotes a Greek name).
    others = [" ".join(WORDS[lang]) for lang in ("en", "de", "zh")] + ["the word " + WORDS["th"][0]]
    own, other = row_counts(encoder, thai), row_counts(encoder, others)
    assert sum(own.values()) == int(encoder.preprocess(thai)["padding_mask"].numpy().sum())  # every position, no padding
    quoted = {r for r in own if other[r] == 1}
    assert quoted  # the quoted word's rows

    only_thai = language_rows(encoder, thai, others, max_other_count=1)
    assert set(only_thai) == {r for r in own if other[r] == 0} and not quoted & set(only_thai)
    assert encoder.bos_id not in only_thai and encoder.eos_id not in only_thai  # every text reads <s> and </s>
    # A higher bar lets rows the others read rarely join.
    loose = language_rows(encoder, thai, others, max_other_count=2)
    assert set(loose) == set(only_thai) | quoted
    assert np.all(np.diff(loose) > 0)


def test_bad_input_fails_clearly():
    encoder = tiny_muse_encoder()
    with pytest.raises(ConfigError, match="max_other_count must be >= 1"):
        language_rows(encoder, ["a"], ["b"], max_other_count=0)
    with pytest.raises(ConfigError, match="no text in the new languages"):
        language_rows(encoder, [], ["b"])
