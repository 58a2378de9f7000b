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
    """The languages `langs` (all when None) of an MLQA folder as one multilingual pool (LAReQA's MLQA-R).

    A language's candidates are the sentences of every context in L, from all the files whose context is in L
    (`dev-context-en-question-ar.json` holds only the English articles that have Arabic questions), each context
    once; its gold sentences come from every such file, by question id. A question in L is read from the file that
    asks it against L's own contexts where there is one, else from the first file asking in L.
    """
    directory = Path(directory)
    files = mlqa_files(directory)
    if not files:
        raise DataError(f"{directory}: no MLQA files (dev-context-XX-question-YY.json)")
    wanted = set(langs) if langs else {x for pair in files for x in pair}
    parsed = {pair: read_squad_file(path, pair[0]) for pair, path in files.items() if wanted & set(pair)}
    _refuse_unlinked_ids(parsed)
    title_of = _linked_titles(parsed)
    out: dict[str, LanguageData] = {}
    moved: dict[tuple[str, str], dict[int, int]] = {}  # file -> its candidate index -> the merged one
    for context in sorted({c for c, _ in parsed} & wanted):
        same = {pair: d for pair, d in parsed.items() if pair[0] == context}
        out[context], moved_here = _merge_contexts(context, same, title_of)
        moved.update(moved_here)
    for question in sorted({q for _, q in parsed} & wanted):
        # L's own file first, then the others in name order: its article and paragraph are then L's own
        pairs = sorted((pair for pair in parsed if pair[1] == question), key=lambda p: (p[0] != question, p))
        target = out.setdefault(question, LanguageData(lang=question, path=parsed[pairs[0]].path))
        have = {q.qas_id for q in target.questions}
        for pair in pairs:
            paragraph_of = _merged_paragraphs(parsed[pair], out.get(pair[0]), moved.get(pair))
            for q in parsed[pair].questions:
                if q.qas_id in have:
                    continue
                have.add(q.qas_id)
                article = title_of[pair[0], q.article]
                target.questions.append(
                    replace(q, lang=question, article=article, paragraph=paragraph_of.get(q.qas_id, q.paragraph))
                )
    return {lang: out[lang] for lang in sorted(out)}


def _refuse_unlinked_ids(parsed: dict[tuple[str, str], LanguageData]) -> None:
    """Every question of `dev-context-C-question-Q.json` is asked in Q's own file and in C's (MLQA's instances exist in
    both languages): ids that no longer link would read one question as two, its translations as strangers."""
    ids = {pair: {q.qas_id for q in data.questions} for pair, data in parsed.items()}
    for (context, question), here in sorted(ids.items()):
        for own in sorted({(question, question), (context, context)} - {(context, question)}):
            missing = sorted(here - ids.get(own, here))
            if missing:
                raise DataError(
                    f"{parsed[context, question].path}: {len(missing)} of its {len(here)} question ids (e.g. "
                    f"{missing[0]}) are not asked in {parsed[own].path.name}; MLQA links a question's translations "
                    "by id, and ids that no longer link would put one question in the pool twice"
                )


def _merge_contexts(
    lang: str, datas: dict[tuple[str, str], LanguageData], title_of: dict[tuple[str, str], str]
) -> tuple[LanguageData, dict[tuple[str, str], dict[int, int]]]:
    """One language's candidates from all its files, each (article, context) once, paragraphs renumbered per
    article in order of first appearance; every file's gold sentences moved to the merged indices."""
    merged = LanguageData(lang=lang, path=datas[min(datas)].path)
    numbers: dict[str, dict[str, int]] = {}  # article -> context -> its paragraph number
    articles: dict[str, int] = {}
    start_of: dict[tuple[str, str], int] = {}  # (article, context) -> merged index of its first sentence
    versions: dict[str, list[tuple[set[str], Path]]] = {}  # article -> each context's sentences and its file
    moved: dict[tuple[str, str], dict[int, int]] = {}
    for pair in sorted(datas):
        data = datas[pair]
        merged.split_by_relkt |= data.split_by_relkt
        paragraphs: dict[tuple[str, int], list[int]] = {}  # the file's (article, paragraph) -> its sentences
        for i, c in enumerate(data.candidates):
            paragraphs.setdefault((c.article, c.paragraph), []).append(i)
        index: dict[int, int] = {}
        for (title, _), rows in paragraphs.items():
            article, context = title_of[lang, title], data.candidates[rows[0]].context
            if (article, context) not in start_of:
                _refuse_a_second_version(article, {data.candidates[i].sentence for i in rows}, data.path, versions)
                p = numbers.setdefault(article, {}).setdefault(context, len(numbers[article]))
                a = articles.setdefault(article, len(articles))
                start_of[article, context] = len(merged.candidates)
                merged.candidates.extend(
                    replace(data.candidates[i], cid=f"{lang}:{a}.{p}.{j}", article=article, paragraph=p)
                    for j, i in enumerate(rows)
                )
            index.update((i, start_of[article, context] + j) for j, i in enumerate(rows))
        moved[pair] = index
        for qas_id, old in data.answer_sentence.items():
            merged.answer_sentence.setdefault(qas_id, index[old])
        merged.unmatched_answers.extend(x for x in data.unmatched_answers if x not in merged.unmatched_answers)
    return merged, moved


def _refuse_a_second_version(
    article: str, sentences: set[str], path: Path, versions: dict[str, list[tuple[set[str], Path]]]
) -> None:
    """A context of `article` that repeats most of an earlier one's sentences is a revised copy of the same paragraph
    (two files of one language disagree on its text): refused, never put in the pool twice. MLQA's own paragraphs
    share a heading-like sentence at most."""
    for seen, where in versions.setdefault(article, []):
        shared = len(seen & sentences)
        if shared >= 2 and 2 * shared > min(len(seen), len(sentences)):
            raise DataError(
                f"{path}: a paragraph of the article {article!r} is another version of one in {where.name} "
                f"({shared} of its sentences are the same, the rest differ); the files of one language must agree "
                "on each context's text"
            )
    versions[article].append((sentences, path))


def _merged_paragraphs(data: LanguageData, merged: LanguageData | None, index: dict[int, int] | None) -> dict[str, int]:
    """qas_id -> its paragraph number among the merged contexts of its context language (where it has a gold)."""
    if merged is None or index is None:
        return {}
    return {qas_id: merged.candidates[index[old]].paragraph for qas_id, old in data.answer_sentence.items()}


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
