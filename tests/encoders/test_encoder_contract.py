"""Every encoder kind passes the one contract (tests/helpers/encoder_contract.py)."""

import pytest

from relkt.encoders import build_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from tests.helpers.encoder_contract import run_encoder_contract
from tests.helpers.tiny_bert import tiny_bert
from tests.helpers.tiny_muse import make_tiny_muse, tiny_muse_encoder


def make(kind, tmp_path):
    if kind == "ngram":
        return NgramEncoder(dim=8, num_buckets=128)
    if kind == "bert":
        return tiny_bert()
    if kind == "muse":
        return tiny_muse_encoder()
    return build_encoder(f"hub:{make_tiny_muse(tmp_path / 'muse')}")


@pytest.mark.parametrize("kind", ["ngram", "bert", "muse", "hub"])
def test_every_kind_keeps_the_encoder_contract(kind, tmp_path):
    run_encoder_contract(make(kind, tmp_path), tmp_path)
