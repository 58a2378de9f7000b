"""Read SQuAD-format JSON (LAReQA/XQuAD-R with sentence breaks, or raw XQuAD/SQuAD without).

Every error names the file and the JSON path of the field at fault, e.g.
`xquad-r/en.json: data[3].paragraphs[2].qas[0]: missing field 'answers'`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from relkt.data.records import Candidate, LanguageData, Question
from relkt.data.sentence_splitter import split_sentences
from relkt.data.text import control_character, has_visible_text, normal_text
from relkt.errors import DataError
from relkt.io import read_json

log = logging.getLogger(__name__)

# A file whose answers disagree with their contexts (text != context[answer_start:]) or whose `sentences` are not
# their spans more often than this (and more than once) is refused; below it the count and the first are logged.
# Every shipped data set has none of the first and at most 2 of the second (XQuAD-R tr).
MAX_MISMATCH_SHARE = 0.01


def _get(obj: object, key: str, kind: type, path: Path, where: str):
    if not isinstance(obj, dict):
        raise DataError(f"{path}: {where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise DataError(f"{path}: {where}: missing field '{key}'")
    value = obj[key]
    if not isinstance(value, kind):
        raise DataError(f"{path}: {where}.{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _sentence_spans(paragraph: dict, context: str, path: Path, where: str) -> tuple[list, bool]:
    """The paragraph's sentence spans: LAReQA's `sentence_breaks` if present, else our splitter."""
    if "sentence_breaks" not in paragraph:
        if "sentences" in paragraph:
            raise DataError(f"{path}: {where}: has 'sentences' but no 'sentence_breaks'")
        return split_sentences(context), True
    breaks = _get(paragraph, "sentence_breaks", list, path, where)
    sentences = _get(paragraph, "sentences", list, path, where)
    if len(breaks) != len(sentences):
        raise DataError(f"{path}: {where}: {len(sentences)} 'sentences' but {len(breaks)} 'sentence_breaks'")
    spans = []
    for k, span in enumerate(breaks):
        ok = isinstance(span, list) and len(span) == 2 and all(_is_int(x) for x in span)
        if not ok or not 0 <= span[0] <= span[1] <= len(context):
            raise DataError(
                f"{path}: {where}.sentence_breaks[{k}]: expected [start, end] within the context, got {span!r}"
            )
        if spans and span[0] < spans[-1][1]:
            raise DataError(
                f"{path}: {where}.sentence_breaks[{k}]: {span!r} starts before the previous span ends "
                f"({list(spans[-1])}); spans must be in order and must not overlap"
            )
        spans.append((span[0], span[1]))
    return spans, False


def _is_int(x: object) -> bool:
    """An integer offset: not a boolean (JSON's true would read as 1)."""
    return isinstance(x, int) and not isinstance(x, bool)


def _utf8(text: str, path: Path, where: str) -> str:
    """`text`, refused when it holds a lone surrogate (JSON's "\\ud800" escape) or a control character no language
    writes (a NUL): neither is a character any encoder reads."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise DataError(f"{path}: {where}: holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape)") from None
    control = control_character(text)
    if control:
        raise DataError(f"{path}: {where}: holds a control character ({control}); the file is damaged")
    return text


def _check_share(path: Path, what: str, mismatches: list[str], total: int) -> None:
    """Refuse past MAX_MISMATCH_SHARE; log the count and the first below it."""
    if not mismatches:
        return
    if len(mismatches) > max(1, MAX_MISMATCH_SHARE * total):
        raise DataError(
            f"{path}: {len(mismatches)} of {total} {what} (first: {mismatches[0]}); more than one and more than "
            f"{MAX_MISMATCH_SHARE:.0%} of them is a broken file"
        )
    log.warning("%s: %d of %d %s (first: %s)", path, len(mismatches), total, what, mismatches[0])


def _first_difference(text: str, span: str) -> str:
    """Where a sentence and its span part, shown from a few characters before (the heads of long texts agree)."""
    a, b = normal_text(text), normal_text(span)
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, at - 10)
    return f"differs from its span at character {at}: {a[start : at + 30]!r} vs {b[start : at + 30]!r}"


def read_squad_file(path: str | Path, lang: str) -> LanguageData:
    """Read one language's SQuAD-format file into questions and candidate sentences.

    A candidate's text is the file's `sentences[k]` where given (LAReQA), else the split span.
    An answer whose `answer_start` lies in no sentence span is counted in `unmatched_answers`
    (and logged) rather than failing the whole file.
    """
    path = Path(path)
    doc = read_json(path, "SQuAD JSON file")  # the read door: a regular file, UTF-8, no key twice, bounded
    out = LanguageData(lang=lang, path=path)
    seen: dict[str, str] = {}  # qas id -> where it was first read
    titles: dict[str, str] = {}  # title -> where it was first read
    wrong_answers: list[str] = []
    wrong_sentences: list[str] = []
    n_sentences = 0
    articles = _get(doc, "data", list, path, "top level")
    for a, article in enumerate(articles):
        where_a = f"data[{a}]"
        title = article.get("title", f"article{a}") if isinstance(article, dict) else None
        if isinstance(article, dict) and not isinstance(title, str):
            raise DataError(f"{path}: {where_a}.title: expected a string, got {type(title).__name__}")
        if title is not None:
            if title in titles:
                log.warning(
                    "%s: %s.title %r repeats %s's: both are read as one article", path, where_a, title, titles[title]
                )
            titles.setdefault(title, where_a)
        paragraphs = _get(article, "paragraphs", list, path, where_a)
        for p, paragraph in enumerate(paragraphs):
            where = f"{where_a}.paragraphs[{p}]"
            context = _utf8(_get(paragraph, "context", str, path, where), path, f"{where}.context")
            spans, split = _sentence_spans(paragraph, context, path, where)
            out.split_by_relkt |= split
            texts = paragraph["sentences"] if not split else [context[s:e] for s, e in spans]
            first = len(out.candidates)
            for k, ((s, e), text) in enumerate(zip(spans, texts)):
                if not isinstance(text, str):
                    raise DataError(f"{path}: {where}.sentences[{k}]: expected a string")
                _utf8(text, path, f"{where}.sentences[{k}]")
                n_sentences += 1
                if not split and normal_text(text) != normal_text(context[s:e]):
                    wrong_sentences.append(f"{where}.sentences[{k}] {_first_difference(text, context[s:e])}")
                out.candidates.append(
                    Candidate(
                        cid=f"{lang}:{a}.{p}.{k}",
                        lang=lang,
                        sentence=normal_text(text),  # relkt.data.text; the context keeps its offsets as written
                        context=context,
                        article=title,
                        paragraph=p,
                        start=s,
                        end=e,
                    )
                )
            for q, qa in enumerate(_get(paragraph, "qas", list, path, where)):
                where_q = f"{where}.qas[{q}]"
                qas_id = _get(qa, "id", str, path, where_q)
                if qas_id in seen:  # an id links a question to its answers in every language: a repeat cross-links them
                    raise DataError(
                        f"{path}: {where_q}.id: qas id {qas_id!r} is used twice (first at {seen[qas_id]}); "
                        "within a language every question id must be unique"
                    )
                seen[qas_id] = where_q
                text = _utf8(_get(qa, "question", str, path, where_q), path, f"{where_q}.question")
                if not has_visible_text(text):
                    raise DataError(
                        f"{path}: {where_q}.question: empty question (id {qas_id}): nothing but whitespace or "
                        "invisible marks"
                    )
                answers = _get(qa, "answers", list, path, where_q)
                if not answers:
                    raise DataError(f"{path}: {where_q}.answers: no answer (id {qas_id})")
                start = _get(answers[0], "answer_start", int, path, f"{where_q}.answers[0]")
                if isinstance(start, bool):
                    raise DataError(f"{path}: {where_q}.answers[0].answer_start: expected an integer, got {start}")
                if not 0 <= start <= len(context):  # a negative offset would be read from the context's end
                    raise DataError(
                        f"{path}: {where_q}.answers[0].answer_start: {start} lies outside its context "
                        f"(0 .. {len(context)})"
                    )
                # the text is what proves the offset: without it an offset moved by an edited context goes unseen
                answer = _get(answers[0], "text", str, path, f"{where_q}.answers[0]")
                if normal_text(context[start : start + len(answer)]) != normal_text(answer):
                    wrong_answers.append(
                        f"{where_q} (id {qas_id}): text {answer[:30]!r}, context at {start} "
                        f"{context[start : start + len(answer)][:30]!r}"
                    )
                out.questions.append(
                    Question(
                        qas_id=qas_id, lang=lang, text=normal_text(text), article=title, paragraph=p, answer_start=start
                    )
                )
                hit = next((k for k, (s, e) in enumerate(spans) if s <= start < e), None)
                if hit is None:
                    out.unmatched_answers.append(qas_id)
                else:
                    out.answer_sentence[qas_id] = first + hit
    if not out.candidates or not out.questions:  # dropped from the table but kept in the pool, it moves every score
        missing = "no paragraphs with context" if not out.candidates else "no questions (every qas list is empty)"
        raise DataError(
            f"{path}: {missing}; a language file must hold both questions and candidate sentences "
            f"(remove it from the folder to leave {lang} out)"
        )
    _check_share(path, "answers whose text is not the context's at answer_start", wrong_answers, len(out.questions))
    _check_share(path, "'sentences' that are not the text of their sentence_breaks span", wrong_sentences, n_sentences)
    if out.unmatched_answers:
        log.warning(
            "%s: %d answer_start offsets lie in no sentence span (e.g. qas id %s); "
            "those questions have no gold answer in %s",
            path,
            len(out.unmatched_answers),
            out.unmatched_answers[0],
            lang,
        )
    return out
