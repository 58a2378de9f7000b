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
