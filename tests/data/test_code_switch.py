"""Code-switched questions, worked out by hand on a tiny dictionary."""

import zlib

import numpy as np
import pytest

from relkt.data.code_switch import BilingualDictionary, CodeSwitcher
from relkt.errors import DataError

DICTIONARY = (
    "source\ten\txx\n"
    "muse-dict\twhere\tmissä\n"
    "muse-dict\tis\ton\n"
    "muse-dict\tcat\tkissa\n"
    "muse-dict\tnew\tuusi\n"
    "muse-dict\t#the\t#se\n"
    "countries\tNew York\tNew York -kaupunki\n"
)
QUESTION = "Where is the cat in New York?"


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "fi.tsv").write_text(DICTIONARY, encoding="utf-8")
    return tmp_path


def test_every_entry_switched_at_ratio_one_longest_entry_first(folder):
    # where -> missä, is -> on, "the" has no entry ("#the" is a tag row, left out), cat -> kissa, "in" none;
    # "New York" (2 words) before "new".
    assert CodeSwitcher(folder, ratio=1.0).switch(QUESTION, "fi") == "missä on the kissa in New York -kaupunki?"
    # Only MUSE's words: "New York" is no entry, "new" is, "York" none.
    words_only = CodeSwitcher(folder, ratio=1.0, sources=["muse-dict"])
    assert words_only.switch(QUESTION, "fi") == "missä on the kissa in uusi York?"


def test_at_a_ratio_each_found_entry_switches_on_its_own_draw(folder):
    # The four found entries (where, is, cat, New York; one translation each) take one uniform draw each, in order,
    # from the generator seeded by (seed 8, "fi", the text); an entry switches when its draw is below 0.5.
    draws = np.random.default_rng([8, zlib.crc32(b"fi"), zlib.crc32(QUESTION.encode())]).random(4)
    assert draws.round(3).tolist() == [0.039, 0.82, 0.869, 0.157]  # so: where and New York switch, is and cat not
    switched = CodeSwitcher(folder, ratio=0.5, seed=8).switch(QUESTION, "fi")
    assert switched == "missä is the cat in New York -kaupunki?"
    # The same text switches the same way beside any other text, in any run.
    assert CodeSwitcher(folder, 0.5, 8).translate(["Where?", QUESTION], "en", "fi")[1] == switched


def test_a_broken_dictionary_line_or_an_unknown_source_is_one_clear_error(folder, tmp_path):
    (folder / "fi.tsv").write_text(DICTIONARY + "muse-dict\tdog\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"fi\.tsv:8: 2 columns, expected 3"):
        CodeSwitcher(folder, 1.0).switch(QUESTION, "fi")
    (folder / "fi.tsv").write_text(DICTIONARY, encoding="utf-8")
    with pytest.raises(DataError, match="no row with source wd-names"):
        BilingualDictionary.read(folder, "fi", ["wd-names"])
