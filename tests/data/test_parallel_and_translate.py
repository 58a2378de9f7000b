import json
import sys
import types

import pytest

from relkt.data import LareqaPool
from relkt.data.parallel import parallel_from_pool, parallel_from_translation
from relkt.data.translate import ArgosTranslator, CachedTranslator, TranslationError


def test_parallel_pairs_from_shared_qas_ids(tiny_data):
    pool = LareqaPool.load(tiny_data)
    ex = parallel_from_pool(pool, ["de"], document="en")
    assert len(ex) == 6 and set(ex.lang) == {"de"}
    i = ex.qas_id.index("c2")
    assert (ex.q_source[i], ex.q_target[i]) == ("What do cats hunt?", "Was jagen Katzen?")
    assert ex.d_teacher[i] == ex.d_student[i] == "They hunt mice at night."
    par = parallel_from_pool(pool, ["de", "en"], document="parallel")
    i = par.qas_id.index("c2")
    assert par.d_teacher[i] == "They hunt mice at night." and par.d_student[i] == "Sie jagen nachts Mäuse."
    assert par.lang.count("en") == 6  # English itself may be a student language: q_x = q_en


class FakeBackend:
    def __init__(self):
        self.calls = []

    def translate(self, texts, source, target):
        self.calls.append(list(texts))
        return [f"[{target}] {t}" for t in texts]


def test_translation_is_cached_and_reused(tiny_data, tmp_path):
    pool = LareqaPool.load(tiny_data, langs=["en"])
    backend = FakeBackend()
    cache = tmp_path / "translations.json"
    ex = parallel_from_translation(pool, ["th"], CachedTranslator(backend, cache))
    assert len(ex) == 6 and ex.q_target[0] == f"[th] {ex.q_source[0]}" and ex.d_student == ex.d_teacher
    assert len(backend.calls) == 1 and len(json.loads(cache.read_text())) == 6
    again = FakeBackend()
    parallel_from_translation(pool, ["th"], CachedTranslator(again, cache))
    assert again.calls == []  # everything came from the cache file


def test_missing_argostranslate_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "argostranslate", None)
    with pytest.raises(TranslationError, match="requirements-translate.txt"):
        ArgosTranslator()


def test_missing_language_pair_is_a_clear_error(monkeypatch):
    # A stand-in for argostranslate with only en->de installed; relkt must not call any package index.
    to_de = types.SimpleNamespace(to_lang=types.SimpleNamespace(code="de"))
    en = types.SimpleNamespace(code="en", translations_from=[to_de])
    translate_mod = types.SimpleNamespace(get_installed_languages=lambda: [en], translate=lambda t, s, d: "übersetzt")
    package = types.ModuleType("argostranslate")
    package.translate = translate_mod
    monkeypatch.setitem(sys.modules, "argostranslate", package)
    monkeypatch.setitem(sys.modules, "argostranslate.translate", translate_mod)
    argos = ArgosTranslator()
    assert argos.translate(["hello"], "en", "de") == ["übersetzt"]
    with pytest.raises(TranslationError, match=r"no en->th package installed \(installed: en->de\)"):
        argos.translate(["hello"], "en", "th")


def fake_apertium(folder, body: str):
    """An `apertium` command on PATH for the wrapper's plumbing: a shell script standing in for the engine."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "apertium"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


def test_apertium_wrapper_maps_codes_keeps_one_text_per_line_and_names_errors(tmp_path, monkeypatch):
    from relkt.data.translate import ApertiumTranslator

    # The stand-in echoes its mode, then each input line upper-cased: one output line per text.
    fake_apertium(tmp_path / "bin", 'mode="$2"\nwhile IFS= read -r line; do echo "$mode:$line" | tr a-z A-Z; done\n')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    out = ApertiumTranslator().translate(["where is it?", "two\nlines"], "en", "es")
    assert out == ["ENG-SPA:WHERE IS IT?", "ENG-SPA:TWO LINES"]
    fake_apertium(tmp_path / "bin", 'echo "Error: Mode $2 does not exist." >&2\nexit 1\n')
    with pytest.raises(
        TranslationError, match="apertium has no en->de pair \\(eng-deu\\): Error: Mode eng-deu does not exist"
    ):
        ApertiumTranslator().translate(["x"], "en", "de")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(TranslationError, match="apt-get install apertium apertium-eng-spa"):
        ApertiumTranslator()


@pytest.mark.slow
def test_apertium_translates_english_to_spanish_for_real_and_caches(tmp_path):
    import shutil

    from relkt.data.translate import ApertiumTranslator

    if shutil.which("apertium") is None:
        pytest.skip("apertium is not on PATH (apt-get install apertium apertium-eng-spa)")
    cached = CachedTranslator(ApertiumTranslator(), tmp_path / "cache.json")
    out = cached.translate(["Where is the river?", "Who wrote the book?"], "en", "es")
    assert out[0].endswith("río?") and "libro" in out[1]  # real Spanish from the rule-based engine
    cached.backend = None  # a second call is served from the cache, without the engine
    assert CachedTranslator(None, tmp_path / "cache.json").translate(["Who wrote the book?"], "en", "es") == [out[1]]


def test_a_student_gets_code_switched_questions_in_a_language_it_has_no_data_for(tmp_path):
    """data.code_switch_langs: every English training question, switched from the dictionary, paired with its
    English question and answer; a language with neither QA data nor pairs is then a student language."""
    from relkt.config import StudentConfig, load_config
    from relkt.data.parallel import student_examples
    from relkt.data.selection import student_pool
    from tests.helpers.data import SYNTH_WORDS, make_synthetic_lareqa

    data = make_synthetic_lareqa(tmp_path / "synthetic", n_articles=6, langs=("en", "de"))
    names = tmp_path / "names"
    names.mkdir()
    (names / "fi.tsv").write_text("source\ten\txx\n" + "".join(f"d\t{w}\t{w}-fi\n" for w in SYNTH_WORDS))
    sets = [f"data.data_dir={data}", "data.student_langs=[fi]", "data.code_switch_langs=[fi]"]
    sets += [f"data.code_switch_dir={names}", "data.code_switch_ratio=1.0"]
    config = load_config(StudentConfig, None, sets)
    pool, qa_langs, langs, _ = student_pool(config.data, 0)
    examples = student_examples(pool, qa_langs, config.data, "en", tmp_path, seed=0)
    fi = [i for i, lang in enumerate(examples.lang) if lang == "fi"]
    english = [q.text for q in pool.questions if q.lang == "en"]
    assert langs == ["fi"] and len(fi) == len(english) > 0
    for i in fi:  # each synthetic question is 3 dictionary words and "?": all switched at ratio 1
        assert examples.q_target[i] == " ".join(f"{w}-fi" for w in examples.q_source[i].rstrip("?").split()) + "?"
        assert examples.d_student[i] == examples.d_teacher[i] != ""


def test_pairs_from_several_folders_and_a_scored_question_refused_in_training(tmp_path):
    """corpus_dir gives its share and the dev slice; a question folder (data.more_pairs) gives its `train` rows
    alone; a corpus pair that holds a question kept for scoring stops the run at start, naming the file and line."""
    from relkt.config import StudentConfig, load_config
    from relkt.data.parallel import corpus_examples
    from relkt.errors import DataError

    corpus, questions = tmp_path / "corpus", tmp_path / "questions"
    corpus.mkdir()
    questions.mkdir()
    (corpus / "fi.tsv").write_text("source\ten\txx\n" + "".join(f"t\tA {i}.\tYksi {i}.\n" for i in range(6)))
    (questions / "fi.tsv").write_text(
        "id\tsplit\txx\ten\n1\ttrain\tMissä?\tWhere?\n2\ttrain\tKuka?\tWho?\n\t\tMikä?\tWhat?\n"
    )
    sets = [f"data.corpus_dir={corpus}", f"data.more_pairs={{{questions}: 0}}", "data.corpus_dev_pairs=2"]
    config = load_config(StudentConfig, None, sets)
    examples, dev = corpus_examples(config.data, ["en", "fi"], 0)
    assert len(dev["fi"]) == 2 and sum(q.startswith("Yksi") for q in examples.q_target) == 4
    assert sorted(q for q in examples.q_target if not q.startswith("Yksi")) == ["Kuka?", "Missä?"]  # not "Mikä?"
    lines = (corpus / "fi.tsv").read_text().splitlines(keepends=True)
    (corpus / "fi.tsv").write_text(lines[0] + "t\tWhat?\tMikä?\n" + "".join(lines[1:]))  # a row that trains
    with pytest.raises(DataError, match=r"holds 'Mikä\?', a question kept for scoring at .*questions/fi\.tsv:4"):
        corpus_examples(config.data, ["en", "fi"], 0)


def test_question_shaped_pairs_kept_alone_or_weighted(tmp_path):
    from relkt.config import StudentConfig, load_config
    from relkt.data.parallel import corpus_examples

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rows = ["t\tWhere is it?\tMissä se on?", "t\tIt is here.\tSe on täällä.", "t\tWho? \tKuka?", "t\tNo.\tEi."]
    (corpus / "fi.tsv").write_text("source\ten\txx\n" + "\n".join(rows) + "\n")

    def targets(*sets):
        config = load_config(StudentConfig, None, [f"data.corpus_dir={corpus}", "data.corpus_dev_pairs=0", *sets])
        return sorted(corpus_examples(config.data, ["en", "fi"], 0)[0].q_target)

    assert targets() == ["Ei.", "Kuka?", "Missä se on?", "Se on täällä."]
    assert targets("data.corpus_questions=only") == ["Kuka?", "Missä se on?"]  # "Who? " stripped
    assert targets("data.corpus_question_repeat=2") == [
        "Ei.",
        "Kuka?",
        "Kuka?",
        "Missä se on?",
        "Missä se on?",
        "Se on täällä.",
    ]
    # A share is drawn from the questions alone: 1 of the 2
    assert len(targets("data.corpus_questions=only", "data.corpus_pairs_per_lang=1")) == 1


def test_a_language_weight_repeats_its_pairs_alone(tmp_path):
    """data.corpus_lang_repeat: {fi: 3} trains each fi pair three times (times the question weight); sv's once."""
    from relkt.config import StudentConfig, load_config
    from relkt.data.parallel import corpus_examples
    from relkt.errors import ConfigError

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "fi.tsv").write_text("source\ten\txx\nt\tWho?\tKuka?\nt\tNo.\tEi.\n")
    (corpus / "sv.tsv").write_text("source\ten\txx\nt\tNo.\tNej.\n")

    def targets(*sets):
        config = load_config(StudentConfig, None, [f"data.corpus_dir={corpus}", "data.corpus_dev_pairs=0", *sets])
        return sorted(corpus_examples(config.data, ["en", "fi", "sv"], 0)[0].q_target)

    assert targets("data.corpus_lang_repeat={fi: 3}") == ["Ei."] * 3 + ["Kuka?"] * 3 + ["Nej."]
    # 3 x 2 for the question-shaped pair
    assert targets("data.corpus_lang_repeat={fi: 3}", "data.corpus_question_repeat=2").count("Kuka?") == 6
    for bad, match in [("{fi: 0}", r"corpus_lang_repeat\.fi: .* >= 1, got 0"), ("{en: 2}", "source language")]:
        with pytest.raises(ConfigError, match=match):
            load_config(StudentConfig, None, [f"data.corpus_lang_repeat={bad}"])


def test_a_held_out_source_never_trains_a_student(tmp_path):
    """data.corpus_held_out_sources: every pair of that source is out of training; corpus_dev_pairs of them are dev."""
    from relkt.config import StudentConfig, load_config
    from relkt.data.parallel import corpus_examples

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rows = [f"tatoeba\tA {i}.\tYksi {i}.\n" for i in range(6)] + [f"news\tNews {i}.\tUutinen {i}.\n" for i in range(5)]
    (corpus / "fi.tsv").write_text("source\ten\txx\n" + "".join(rows))
    sets = [f"data.corpus_dir={corpus}", "data.corpus_dev_pairs=3", "data.corpus_held_out_sources=[news]"]
    examples, dev = corpus_examples(load_config(StudentConfig, None, sets).data, ["en", "fi"], 0)
    assert sorted(examples.q_target) == sorted(f"Yksi {i}." for i in range(6))  # no news pair trains
    assert len(dev["fi"]) == 3 and set(dev["fi"].source) == {"news"}


def test_romanized_questions_train_beside_the_script(tmp_path):
    """data.romanize_langs: each Bengali pair once more in Latin letters (anyascii), same English target; a text
    already in plain Latin letters (this fi pair) adds nothing."""
    from relkt.config import StudentConfig, load_config
    from relkt.data.parallel import corpus_examples
    from relkt.data.romanize import romanize

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "bn.tsv").write_text("source\ten\txx\nt\tDhaka is the capital.\tঢাকা রাজধানী\n", encoding="utf-8")
    (corpus / "fi.tsv").write_text("source\ten\txx\nt\tHelsinki is the capital.\tHelsinki on kaupunki.\n")
    sets = [f"data.corpus_dir={corpus}", "data.corpus_dev_pairs=0", "data.romanize_langs=[bn, fi]"]
    examples, _ = corpus_examples(load_config(StudentConfig, None, sets).data, ["en", "bn", "fi"], 0)
    assert romanize("ঢাকা রাজধানী") == "dhaka rajdhani"
    rows = sorted(zip(examples.lang, examples.q_target, examples.q_source))
    assert rows == [
        ("bn", "dhaka rajdhani", "Dhaka is the capital."),
        ("bn", "ঢাকা রাজধানী", "Dhaka is the capital."),
        ("fi", "Helsinki on kaupunki.", "Helsinki is the capital."),
    ]
