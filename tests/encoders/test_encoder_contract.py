"""Every encoder kind passes the one contract (tests/helpers/encoder_contract.py)."""

import pytest

from tests.helpers.encoder_contract import make_encoder, run_encoder_contract


@pytest.mark.parametrize("kind", ["ngram", "bert", "muse", "hub"])
def test_every_kind_keeps_the_encoder_contract(kind, tmp_path):
    run_encoder_contract(make_encoder(kind, tmp_path), tmp_path)
