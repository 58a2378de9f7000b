import unicodedata

import keras
import numpy as np
import pytest

from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from relkt.encoders.registry import extend_encoder_vocabulary
from relkt.encoders.script_split_tokenizer import ScriptSplitTokenizer, script_pattern
from relkt.encoders.vocab_extension import extend_vocabulary, learn_script_pieces, missing_pieces
from relkt.errors import ConfigError
from tests.helpers.tiny_bert import VOCAB, tiny_bert

ENGLISH = ["the cat sleeps at night", "the river flows into the sea."]  # all in the tiny vocabulary
THAI = ["แมวนอนตอนกลางคืนที่บ้าน", "แม่น้ำไหลไปที่ไหน"]  # spaceless: one whitespace "word" each
CHINESE = ["猫在睡觉", "河流向哪里"]
OTHER = ["katzen schlafen"]  # Latin letters absent from the tiny vocabulary as pieces


def unk_count(tokenizer, texts):
    return int((np.concatenate([np.asarray(t) for t in tokenizer(texts)]) == tokenizer.token_to_id("[UNK]")).sum())


def test_missing_pieces_are_first_chars_and_continuations():
    tok = ScriptSplitTokenizer(vocabulary=VOCAB, lowercase=True, strip_accents=True)
    # "katzen" is not a word of the vocabulary: WordPiece needs "k" to start it and "##a", "##t", ... to go on.
    assert missing_pieces(tok, ["katzen"]) == sorted(["k", "##a", "##t", "##z", "##e", "##n"], key=lambda t: (1, t))
    # A word the vocabulary has needs nothing; min_count drops rare pieces ("k" occurs once, "##a" twice).
    assert missing_pieces(tok, ["the cat"]) == []
    assert missing_pieces(tok, ["katzen kanal"], min_count=2) == ["##a", "##n", "k"]


def test_extension_grows_embeddings_keeps_old_ids_and_uses_new_ones():
    base = tiny_bert()
    texts = ENGLISH + THAI + CHINESE + OTHER
    before = base.encode(texts)
    old_ids = [np.asarray(t).tolist() for t in base.tokenizer(ENGLISH)]
    assert unk_count(base.tokenizer, THAI + CHINESE + OTHER) > 0
    student, ext = extend_vocabulary(base, texts, init="mean")
    n_old, n_new = len(VOCAB), len(ext.tokens)
    assert ext.first_id == n_old and n_new > 0
    table = student.backbone.token_embedding.embeddings.numpy()
    assert table.shape == (n_old + n_new, 16)
    np.testing.assert_array_equal(table[:n_old], base.backbone.token_embedding.embeddings.numpy())
    np.testing.assert_allclose(table[n_old:], np.repeat(table[:n_old].mean(0, keepdims=True), n_new, 0), rtol=1e-6)
    # Old words keep their ids and the English embeddings are unchanged; the new scripts use only new ids.
    assert [np.asarray(t).tolist() for t in student.tokenizer(ENGLISH)] == old_ids
    np.testing.assert_array_equal(student.encode(ENGLISH), before[:2])
    assert unk_count(student.tokenizer, THAI + CHINESE + OTHER) == 0
    thai_ids = np.asarray(student.tokenizer(THAI[:1])[0])
    # One piece per character; accent stripping (as the teacher's tokenizer does) drops the vowel/tone marks.
    letters = [c for c in THAI[0] if unicodedata.category(c) != "Mn"]
    assert len(thai_ids) == len(letters) and (thai_ids >= n_old).all()
    # Every other weight is copied.
    for w, w0 in zip(student.backbone.weights[1:], base.backbone.weights[1:]):
        np.testing.assert_array_equal(w.numpy(), w0.numpy())
    # init="random" (the default): distinct rows around the mean with the old rows' spread, fixed by the seed.
    rand, _ = extend_vocabulary(base, texts, seed=3)
    new_rows = rand.backbone.token_embedding.embeddings.numpy()[n_old:]
    assert len(np.unique(new_rows.round(6), axis=0)) == n_new
    np.testing.assert_array_equal(
        new_rows, extend_vocabulary(base, texts, seed=3)[0].backbone.token_embedding.embeddings.numpy()[n_old:]
    )
    assert 0.3 < new_rows.std() / table[:n_old].std() < 3
    # init="unk" starts new rows at [UNK]'s row.
    unk_student, _ = extend_vocabulary(base, THAI, init="unk")
    np.testing.assert_array_equal(
        unk_student.backbone.token_embedding.embeddings.numpy()[-1], table[VOCAB.index("[UNK]")]
    )


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_extended_student_round_trips_through_config_keras_file_and_exports(tmp_path):
    student, ext = extend_vocabulary(tiny_bert(), ENGLISH + THAI + CHINESE)
    texts = ENGLISH + THAI + CHINESE
    expected = student.encode(texts)
    # get_config / from_config (the checkpointed structure), and the .keras format
    clone = student.__class__.from_config(student.get_config())
    clone.set_weights(student.get_weights())
    np.testing.assert_allclose(clone.encode(texts), expected, atol=1e-6)
    student.save(tmp_path / "student.keras")
    loaded = keras.saving.load_model(tmp_path / "student.keras")
    assert loaded.tokenizer.split_pattern == ext.split_pattern
    np.testing.assert_allclose(loaded.encode(texts), expected, atol=1e-6)
    # The hub-compatible export tokenizes in-graph with the extended vocabulary; bert: rebuilds a trainable copy.
    export = export_encoder(student, tmp_path / "export")
    assert (export / "vocab.txt").read_text(encoding="utf-8").splitlines()[-len(ext.tokens) :] == ext.tokens
    np.testing.assert_allclose(build_encoder(f"hub:{export}", trainable=False).encode(texts), expected, atol=1e-5)
    rebuilt = build_encoder(f"bert:{export}")
    assert rebuilt.tokenizer.split_pattern == ext.split_pattern and rebuilt.trainable
    np.testing.assert_allclose(rebuilt.encode(texts), expected, atol=1e-5)


def test_script_split_tokenizer_config_round_trip():
    tok = ScriptSplitTokenizer(vocabulary=VOCAB, lowercase=True, strip_accents=True, split_pattern=r"[\p{Thai}]")
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(tok))
    assert isinstance(again, ScriptSplitTokenizer) and again.get_config() == tok.get_config()


def test_extension_needs_a_bert_encoder_and_a_known_init():
    with pytest.raises(ConfigError, match="needs a bert: student"):
        extend_vocabulary(NgramEncoder(dim=8, num_buckets=64), THAI)
    with pytest.raises(ConfigError, match="valid: random, mean, unk"):
        extend_vocabulary(tiny_bert(), THAI, init="zeros")


# Three synthetic Thai "words" (cat, sleep, night), every pair of them written without a space, in three orders:
# each word occurs 18 times, each pair 3 times, so BPE's first nine merges build exactly the three words.
THAI_WORDS = ["แมว", "นอน", "กลางคืน"]
THAI_RUNS = [" ".join(a + b for a in THAI_WORDS for b in THAI_WORDS[k:] + THAI_WORDS[:k]) for k in range(3)]


def test_script_pattern_cuts_the_longest_known_piece_first():
    pattern = script_pattern(["Thai"], ["แม", "แมว", "นอ"])
    assert pattern.startswith("แมว|")  # longest first, then same length by text, then one character
    tok = ScriptSplitTokenizer(
        vocabulary=VOCAB + ["แมว", "แม", "นอ", "น"], lowercase=True, strip_accents=True, split_pattern=pattern
    )
    # "แมวนอน": "แมว" beats "แม"; "นอ" then leaves "น" as a character.
    assert [tok.id_to_token(int(i)) for i in np.asarray(tok(["แมวนอน"])[0])] == ["แมว", "นอ", "น"]
    assert script_pattern([], ["แมว"]) == ""


def test_learned_pieces_are_multi_character_deterministic_and_only_from_the_scripts():
    tok = ScriptSplitTokenizer(vocabulary=VOCAB, lowercase=True, strip_accents=True)
    pieces = learn_script_pieces(tok, THAI_RUNS + ENGLISH + CHINESE, ["Thai"], 9)
    # Nine merges: the three words (accent-stripped, as the split sees them: "กลางคืน" loses its vowel mark) and
    # the steps to them; only Thai (no English, no ideographs), every piece multi-character.
    assert pieces == ["กล", "คน", "นอ", "มว", "าง", "นอน", "แมว", "กลาง", "กลางคน"]
    assert len(learn_script_pieces(tok, THAI_RUNS, ["Thai"], 20)) == 20  # later merges join the words
    assert learn_script_pieces(tok, THAI_RUNS + ENGLISH, ["Thai"], 20) == learn_script_pieces(
        tok, THAI_RUNS + ENGLISH, ["Thai"], 20
    )
    assert learn_script_pieces(tok, THAI_RUNS, ["Thai"], 0) == []
    assert learn_script_pieces(tok, ENGLISH, ["Thai"], 20) == []  # no text in the script: nothing to learn


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_extension_with_pieces_reads_thai_in_fewer_tokens_and_round_trips(tmp_path):
    base = tiny_bert(max_length=32)
    texts = ENGLISH + THAI_RUNS + CHINESE
    chars, by_char = extend_vocabulary(base, texts)
    student, ext = extend_vocabulary(base, texts, pieces=9)
    # Of BPE's nine pieces, the greedy cut of these texts makes only the three words: the other six stay out
    # of the split, so every piece it can cut is a token with a trained row.
    assert ext.learned_pieces == 3 and ext.split_pattern.startswith("กลางคน|นอน|แมว|[")
    assert {"แมว", "นอน", "กลางคน"} <= set(ext.tokens)  # whole pieces, added as word-initial tokens
    n_old = len(VOCAB)
    assert [np.asarray(t).tolist() for t in student.tokenizer(ENGLISH)] == [
        np.asarray(t).tolist() for t in base.tokenizer(ENGLISH)
    ]
    ids = np.asarray(student.tokenizer(["แมวนอนกลางคืน แมว"])[0])
    # Four pieces ("แมว", "นอน", "กลางคน", "แมว") against 15 letters (accent stripping drops คืน's vowel mark).
    assert [student.tokenizer.id_to_token(int(i)) for i in ids] == ["แมว", "นอน", "กลางคน", "แมว"] and (
        ids >= n_old
    ).all()
    assert len(np.asarray(chars.tokenizer(["แมวนอนกลางคืน แมว"])[0])) == 15
    assert unk_count(student.tokenizer, texts) == 0
    # The pieces live in the split pattern, so the .keras file and the hub export tokenize the same way.
    expected = student.encode(texts)
    student.save(tmp_path / "student.keras")
    loaded = keras.saving.load_model(tmp_path / "student.keras")
    np.testing.assert_allclose(loaded.encode(texts), expected, atol=1e-6)
    export = export_encoder(student, tmp_path / "export")
    np.testing.assert_allclose(build_encoder(f"hub:{export}", trainable=False).encode(texts), expected, atol=1e-5)
    assert build_encoder(f"bert:{export}").tokenizer.split_pattern == ext.split_pattern


def test_pieces_keep_their_characters_and_han_can_be_cut_into_words(tmp_path):
    base = tiny_bert(max_length=32)
    # A letter order training never had still reads without [UNK]: every character of a piece is a token too.
    student, _ = extend_vocabulary(base, ENGLISH + THAI_RUNS, pieces=9)
    assert unk_count(student.tokenizer, ["วมแ นนอ"]) == 0
    # With "Han" among split_scripts, Chinese is cut into learned words instead of one ideograph per token.
    chinese = ["中国大学在北京", "北京大学是中国的大学", "中国人在北京上大学"] * 3
    by_char, _ = extend_vocabulary(base, ENGLISH + chinese, pieces=4)
    by_word, ext = extend_vocabulary(base, ENGLISH + chinese, split_scripts=["Han"], pieces=4)
    assert by_char.tokenizer.split_on_cjk and not by_word.tokenizer.split_on_cjk and ext.learned_pieces == 4

    def pieces(encoder, text):
        return [encoder.tokenizer.id_to_token(int(i)) for i in np.asarray(encoder.tokenizer([text])[0])]

    assert pieces(by_char, "北京大学在中国") == ["北", "京", "大", "学", "在", "中", "国"]
    # "在" was only ever seen inside the piece "在北京": it still reads alone.
    assert pieces(by_word, "北京大学在中国") == ["北京", "大学", "在", "中国"]
    assert [np.asarray(t).tolist() for t in by_word.tokenizer(ENGLISH)] == [
        np.asarray(t).tolist() for t in base.tokenizer(ENGLISH)
    ]
    # The split (and the switched-off CJK split) survive the config, the .keras file and the export.
    clone = ScriptSplitTokenizer.from_config(by_word.tokenizer.get_config())
    assert not clone.split_on_cjk
    export = export_encoder(by_word, tmp_path / "export")
    rebuilt = build_encoder(f"bert:{export}")
    assert pieces(rebuilt, "北京大学在中国") == ["北京", "大学", "在", "中国"]
    np.testing.assert_allclose(
        build_encoder(f"hub:{export}", trainable=False).encode(chinese[:3]), by_word.encode(chinese[:3]), atol=1e-5
    )


def test_piece_scripts_and_compose_are_refused_for_a_bert_student():
    with pytest.raises(ConfigError, match="for `muse` students"):
        extend_encoder_vocabulary(tiny_bert(), ["γάτα"], pieces=5, piece_scripts=["Greek"])
    with pytest.raises(ConfigError, match="for `muse` students"):
        extend_encoder_vocabulary(tiny_bert(), ["γάτα"], pieces=5, piece_chars="γ")
    with pytest.raises(ConfigError, match="compose: muse only"):
        extend_encoder_vocabulary(tiny_bert(), ["γάτα"], init="compose")
