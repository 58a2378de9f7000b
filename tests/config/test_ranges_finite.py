"""Every float setting is finite (NaN passes every comparison, so a range alone would take it) and every count >= 0."""

import pytest

from relkt.config import TeacherConfig, load_config
from relkt.errors import ConfigError


@pytest.mark.parametrize(
    "override, message",
    [
        ("mining.bm25_k1=.nan", r"mining\.bm25_k1: nan is not a finite number"),
        ("data.split_fractions=[.nan,0.1,0.2]", r"data\.split_fractions: \[nan, 0\.1, 0\.2\] is not a finite number"),
        ("in_batch.scale=.inf", r"in_batch\.scale: inf is not a finite number"),
        ("mining.bm25_negatives=-1", r"mining\.bm25_negatives: -1 is out of range"),
        ("mining.hard=-2", r"mining\.hard: -2 is out of range"),
        ("mining.bm25_negatives=0", r"BM25 epochs need bm25_negatives >= 1"),
    ],
)
def test_a_value_that_cannot_mean_anything_is_refused(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TeacherConfig, None, [override])
