"""Read MLQA's folder (`dev-context-XX-question-YY.json` or `test-...`): SQuAD JSON whose context and question
languages may differ, as one language data per language: its questions come from the files asking in it, its candidate
sentences from the files whose context is in it.

MLQA names articles in each context's own language; a question id is shared by its translations, so the articles are
linked through the ids and take the English title where there is one (else the smallest title of the group): the
article split then keeps a question's translations together.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from relkt.data.records import LanguageData
from relkt.data.squad_reader import read_squad_file
from relkt.errors import DataError

MLQA_NAME = re.compile(r"^(dev|test)-context-([a-z]{2,3})-question-([a-z]{2,3})\.json$")


def mlqa_files(directory: Path) -> dict[tuple[str, str], Path]:
    """(context language, question language) -> file; both MLQA splits in one folder is an error."""
    found = {p: MLQA_NAME.match(p.name) for p in sorted(directory.glob("*.json"))}
    found = {p: m for p, m in found.items() if m}
    splits = sorted({m.group(1) for m in found.values()})
    if len(splits) > 1:
        raise DataError(f"{directory}: holds both MLQA dev- and test- files; point at a folder of one split")
    return {(m.group(2), m.group(3)): p for p, m in found.items()}


def read_mlqa_folder(directory: str | Path, langs: list[str] | None = None) -> dict[str, LanguageData]:
    """The languages `langs` (all when None) of an MLQA folder: questions in L, and sentences of contexts in L."""
    directory = Path(directory)
    files = mlqa_files(directory)
    if not files:
        raise DataError(f"{directory}: no MLQA files (dev-context-XX-question-YY.json)")
    wanted = set(langs) if langs else {x for pair in files for x in pair}
    parsed = {pair: read_squad_file(path, pair[0]) for pair, path in files.items() if wanted & set(pair)}
    title_of = _linked_titles(parsed)
    out: dict[str, LanguageData] = {}
    for (context, question), data in sorted(parsed.items()):
        if context in wanted:
            target = out.setdefault(context, LanguageData(lang=context, path=data.path))
            if not target.candidates:  # every file of one context language holds the same contexts
                target.candidates = [replace(c, article=title_of[context, c.article]) for c in data.candidates]
            target.answer_sentence.update(data.answer_sentence)
        if question in wanted:
            target = out.setdefault(question, LanguageData(lang=question, path=data.path))
            have = {q.qas_id for q in target.questions}
            target.questions.extend(
                replace(q, lang=question, article=title_of[context, q.article])
                for q in data.questions
                if q.qas_id not in have
            )
    return {lang: out[lang] for lang in sorted(out)}


def _linked_titles(parsed: dict[tuple[str, str], LanguageData]) -> dict[tuple[str, str], str]:
    """(context language, title) -> the article's common name, linking titles that share a question id."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    first: dict[str, tuple[str, str]] = {}
    for (context, _), data in parsed.items():
        for q in data.questions:
            node = (context, q.article)
            a, b = find(first.setdefault(q.qas_id, node)), find(node)
            if a != b:
                parent[max(a, b)] = min(a, b)
        for c in data.candidates:
            find((context, c.article))
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for node in parent:
        groups.setdefault(find(node), []).append(node)
    names = {}
    for members in groups.values():
        english = sorted(title for lang, title in members if lang == "en")
        name = english[0] if english else min(title for _, title in members)
        names.update({node: name for node in members})
    return names
