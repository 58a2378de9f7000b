"""Code-switched questions: question-shaped text in a student language made without a translator.

A source-language (English) question has a share of its words and names replaced by their dictionary translations
into language X; words with no entry stay English. Each switched question is a student input paired with the
teacher's English question and answer, as a machine-translated one is (`relkt.data.parallel.parallel_from_translation`
reads a `CodeSwitcher` as it reads a translator). The technique: CoSDA-ML (Qin et al., IJCAI 2020, multilingual
code-switching data augmentation), carried to cross-lingual retrieval by Litschko et al. (Findings of ACL 2023); names
switched as EntityCS does with entities (Whitehouse et al., Findings of EMNLP 2022).

The dictionary is a folder of pair files (`source, en, xx`, e.g. ../shared/data/names: MUSE's bilingual word
dictionaries, name transliterations, country names), its rows filtered by `source`. An English entry of several
words (a name: "New York") is matched before its single words, longest first. Rows whose English side is not plain
words (MUSE's "#the" -> "#nó" tag rows, "U.S.") are left out.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from relkt.data.parallel_corpus import read_pairs
from relkt.errors import DataError

WORD = re.compile(r"\w+(?:['’]\w+)*")
MAX_ENTRY_WORDS = 4  # longer English entries (titles, sentences) are not switched


@dataclass(frozen=True)
class BilingualDictionary:
    """English word sequences (lowercased) -> their translations into `lang`, in file order."""

    lang: str
    entries: dict[tuple[str, ...], tuple[str, ...]]

    @classmethod
    def read(cls, folder: str | Path, lang: str, sources: Iterable[str] | None = None) -> BilingualDictionary:
        """`folder/{lang}.tsv`, read strictly (a broken line is one error naming file and line), its rows with a
        `source` in `sources` (None = all; an empty list names none and is an error); a source no row has is an error
        (a misspelt name would switch nothing)."""
        pairs = read_pairs(folder, lang, max_bad_share=0.0)
        if sources is not None and not list(sources):
            raise ValueError("sources: an empty list names no source; pass None for every one")
        wanted = set(sources or ())
        unknown = sorted(wanted - set(pairs.source))
        if unknown:
            raise DataError(
                f"{Path(folder) / f'{lang}.tsv'}: no row with source {', '.join(unknown)} (it has "
                f"{', '.join(sorted(set(pairs.source)))})"
            )
        grouped: dict[tuple[str, ...], list[str]] = {}
        for en, xx, source in zip(pairs.en, pairs.xx, pairs.source):
            words = tuple(w.lower() for w in WORD.findall(en))
            whole = " ".join(WORD.findall(en)) == en and not xx.startswith("#")  # not MUSE's "#the" tag rows
            if whole and (sources is None or source in wanted) and 0 < len(words) <= MAX_ENTRY_WORDS:
                grouped.setdefault(words, [])
                if xx not in grouped[words]:
                    grouped[words].append(xx)
        return cls(lang, {k: tuple(v) for k, v in grouped.items()})


class CodeSwitcher:
    """Switches English text into a mix with language X. At each word, left to right, the longest dictionary entry
    starting there is looked up; a found entry is switched with probability `ratio` (one uniform draw per found
    entry, in order), to one of its translations (one integer draw, when it has several), and the words it covers
    are passed either way. The draws come from a generator seeded by (seed, language, text), so a text is switched
    the same way in every run and whatever else is switched beside it."""

    def __init__(self, folder: str | Path, ratio: float, seed: int = 0, sources: Sequence[str] | None = None):
        if not 0 < ratio <= 1:
            raise ValueError(f"ratio must be in (0, 1], got {ratio}")
        self.folder, self.ratio, self.seed = Path(folder), ratio, seed
        self.sources = None if sources is None else tuple(sources)  # None: every source
        self._dictionaries: dict[str, BilingualDictionary] = {}

    def dictionary(self, lang: str) -> BilingualDictionary:
        if lang not in self._dictionaries:
            self._dictionaries[lang] = BilingualDictionary.read(self.folder, lang, self.sources)
        return self._dictionaries[lang]

    def switch(self, text: str, lang: str) -> str:
        entries = self.dictionary(lang).entries
        rng = np.random.default_rng([self.seed, zlib.crc32(lang.encode()), zlib.crc32(text.encode())])
        words = list(WORD.finditer(text))
        out, at, i = [], 0, 0
        while i < len(words):
            for n in range(min(MAX_ENTRY_WORDS, len(words) - i), 0, -1):
                translations = entries.get(tuple(m.group().lower() for m in words[i : i + n]))
                if translations is not None:
                    break
            if translations is None:
                i += 1
                continue
            if rng.random() < self.ratio:
                pick = translations[int(rng.integers(len(translations)))] if len(translations) > 1 else translations[0]
                out += [text[at : words[i].start()], pick]
                at = words[i + n - 1].end()
            i += n
        return "".join(out) + text[at:]

    def translate(self, texts: Sequence[str], source_lang: str, lang: str) -> list[str]:
        """The translator interface (relkt.data.translate): `texts` switched into `lang` (English sources only)."""
        if source_lang != "en":
            raise DataError(f"code switching reads English-X dictionaries; the source language is {source_lang}")
        return [self.switch(t, lang) for t in texts]
