import numpy as np
import pytest
import tensorflow as tf

from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder
from relkt.encoders.sentencepiece_extension import extend_sentencepiece_vocabulary, missing_characters
from relkt.errors import ConfigError
from tests.helpers.tiny_muse import tiny_muse_encoder, training_lines

# Greek: no character of it is in the tiny model (trained on en/de/th/zh words), so each word is one <unk> run.
GREEK = ["γάτα σκύλος ποτάμι ψωμί", "πού είναι η γάτα", "ο σκύλος κοιμάται τη νύχτα", "γάτα γάτα σκύλος"] * 5
READABLE = training_lines(n=30, seed=3)


def ids_of(enc, texts):
    f = enc.preprocess(texts)
    return [row[m].tolist() for row, m in zip(f["token_ids"].numpy(), f["padding_mask"].numpy())]


def test_characters_no_piece_contains_are_found_in_frequency_order():
    enc = tiny_muse_encoder()
    unreadable, partial = missing_characters(enc.tokenizer.proto, ["γγγ α", "cat"])
    assert unreadable == ["γ", "α"] and partial == []  # γ 3 times, α once; "cat" is readable


def test_extension_reads_the_new_script_keeps_old_ids_rows_and_embeddings():
    base = tiny_muse_encoder()
    ext, info = extend_sentencepiece_vocabulary(base, GREEK + READABLE, seed=0)
    n_chars = len(set("".join(GREEK).replace(" ", "")))
    assert len(info.tokens) == n_chars and info.first_id == base.vocabulary_size and info.learned_pieces == 0
    # Before: Greek words are <unk> (id 0); after: none is.
    assert any(0 in row[1:-1] for row in ids_of(base, GREEK)) and not any(0 in row[1:-1] for row in ids_of(ext, GREEK))
    # Text the base could read keeps its ids and its embedding; the table keeps its rows, also the 3 rows no piece
    # reaches, and the new pieces' ids (from the base's piece count on) read rows after them.
    assert ids_of(ext, READABLE) == ids_of(base, READABLE)
    np.testing.assert_allclose(ext.encode(READABLE), base.encode(READABLE), atol=1e-6)
    old, new = base.token_embedding.embeddings.numpy(), ext.token_embedding.embeddings.numpy()
    assert new.shape == (len(old) + n_chars, old.shape[1])
    np.testing.assert_array_equal(new[: len(old)], old)
    pieces = base.tokenizer.vocabulary_size()
    assert (ext.added_pieces_start, ext.added_rows_start) == (pieces, len(old))
    greek_ids = [i for row in ids_of(ext, GREEK) for i in row if i >= pieces]
    assert greek_ids and min(greek_ids) >= len(old)  # read from the new rows, never the unreachable ones


def test_learned_pieces_shorten_the_new_script_and_the_extension_survives_export(tmp_path):
    base = tiny_muse_encoder()
    chars, _ = extend_sentencepiece_vocabulary(base, GREEK + READABLE, seed=0)
    words, info = extend_sentencepiece_vocabulary(base, GREEK + READABLE, seed=0, pieces=60)
    assert info.learned_pieces > 0 and all(len(t) > 1 for t in info.tokens[-info.learned_pieces :])
    assert all(any(c in "".join(GREEK) for c in t) for t in info.tokens[-info.learned_pieces :])  # Greek pieces only
    assert sum(map(len, ids_of(words, GREEK))) < sum(map(len, ids_of(chars, GREEK)))
    assert ids_of(words, READABLE) == ids_of(base, READABLE)
    again, _ = extend_sentencepiece_vocabulary(base, GREEK + READABLE, seed=0, pieces=60)
    assert again.tokenizer.proto == words.tokenizer.proto  # deterministic: a resumed run rebuilds the same vocabulary

    out = export_encoder(words, tmp_path / "student")
    rebuilt = build_encoder(f"muse:{out}")
    assert (rebuilt.added_pieces_start, rebuilt.vocabulary_size) == (words.added_pieces_start, words.vocabulary_size)
    np.testing.assert_allclose(rebuilt.encode(GREEK[:4]), words.encode(GREEK[:4]), atol=1e-6)
    with pytest.raises(ConfigError, match="extended already"):
        extend_sentencepiece_vocabulary(rebuilt, GREEK)


def test_new_rows_train(tmp_path):
    import keras

    ext, info = extend_sentencepiece_vocabulary(tiny_muse_encoder(), GREEK, seed=0)
    before = ext.token_embedding.embeddings.numpy()[info.first_id :].copy()
    f = ext.preprocess(["γάτα", "cat"])
    opt = keras.optimizers.Adam(0.05)
    with tf.GradientTape() as tape:
        e = ext(f, training=True)
        loss = -tf.reduce_sum(e[0] * e[1])
    opt.apply_gradients(zip(tape.gradient(loss, ext.trainable_weights), ext.trainable_weights))
    assert not np.allclose(ext.token_embedding.embeddings.numpy()[info.first_id :], before)


def test_min_count_drops_rare_characters():
    # GREEK repeats each sentence 5 times: "ψ" (only in the first) occurs 5 times, "γ" far more.
    ext, info = extend_sentencepiece_vocabulary(tiny_muse_encoder(), GREEK, min_count=6)
    assert "γ" in info.tokens and "ψ" not in info.tokens


def test_piece_scripts_give_a_script_the_base_spells_word_pieces_that_start_at_their_spelling():
    base = tiny_muse_encoder()
    thai = [line for i, line in enumerate(READABLE) if i % 4 == 2]  # training_lines cycles en, de, th, zh
    other = [line for i, line in enumerate(READABLE) if i % 4 != 2]
    # The base reads all of it, so without piece_scripts nothing is learned or added.
    plain, info = extend_sentencepiece_vocabulary(base, READABLE, pieces=60)
    assert info.tokens == [] and ids_of(plain, READABLE) == ids_of(base, READABLE)

    ext, info = extend_sentencepiece_vocabulary(base, READABLE, init="compose", pieces=60, piece_scripts=["Thai"])
    assert info.learned_pieces == len(info.tokens) > 0
    assert all(any("\u0e00" <= c <= "\u0e7f" for c in t) for t in info.tokens)  # each holds a Thai character
    assert ids_of(ext, other) == ids_of(base, other)  # text without Thai keeps its ids
    new_ids = {i for row in ids_of(ext, thai) for i in row if i >= ext.added_pieces_start}
    assert new_ids and sum(map(len, ids_of(ext, thai))) < sum(map(len, ids_of(base, thai)))
    # compose: a new word piece "▁w" starts as the mean of the base rows the base spells the word "w" with.
    old, new = base.token_embedding.embeddings.numpy(), ext.token_embedding.embeddings.numpy()
    words = [(k, t) for k, t in enumerate(info.tokens) if t.startswith("\u2581") and len(t) > 2]
    assert words
    for k, token in words:
        spelling = ids_of(base, [token[1:]])[0][1:-1]  # without <s> and </s>
        np.testing.assert_allclose(new[len(old) + k], old[spelling].mean(axis=0), rtol=1e-6, atol=1e-7)


def test_compose_starts_an_unreadable_character_at_unk_and_bad_piece_scripts_are_refused():
    base = tiny_muse_encoder()
    ext, info = extend_sentencepiece_vocabulary(base, GREEK, init="compose")
    old = base.token_embedding.embeddings.numpy()
    np.testing.assert_array_equal(
        ext.token_embedding.embeddings.numpy()[len(old) :], np.repeat(old[base.unk_id][None], len(info.tokens), axis=0)
    )
    with pytest.raises(ConfigError, match="pieces > 0"):
        extend_sentencepiece_vocabulary(base, READABLE, piece_scripts=["Thai"])
    with pytest.raises(ConfigError, match="script names"):
        extend_sentencepiece_vocabulary(base, READABLE, pieces=60, piece_scripts=["Klingonish"])


def test_piece_chars_give_words_holding_those_letters_pieces_and_leave_other_text_alone():
    base = tiny_muse_encoder()
    # The tiny model reads "ß" (German "fließt"), so without piece_chars no piece of it is learned; with it, every
    # kept piece holds a ß, text without one keeps its ids, and text with one is read through new pieces, shorter.
    sharp = [line for line in READABLE if "ß" in line]
    other = [line for line in READABLE if "ß" not in line]
    assert sharp and other
    plain, info = extend_sentencepiece_vocabulary(base, READABLE, pieces=60)
    assert info.tokens == []
    ext, info = extend_sentencepiece_vocabulary(base, READABLE, pieces=60, piece_chars="ß")
    assert info.learned_pieces == len(info.tokens) > 0 and all("ß" in t for t in info.tokens)
    assert ids_of(ext, other) == ids_of(base, other)
    assert any(i >= ext.added_pieces_start for row in ids_of(ext, sharp) for i in row)
    assert sum(map(len, ids_of(ext, sharp))) < sum(map(len, ids_of(base, sharp)))
    with pytest.raises(ConfigError, match="pieces > 0"):
        extend_sentencepiece_vocabulary(base, READABLE, piece_chars="ß")
    with pytest.raises(ConfigError, match="letters only, no spaces"):
        extend_sentencepiece_vocabulary(base, READABLE, pieces=60, piece_chars="ß ä")
