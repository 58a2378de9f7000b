"""Read a user's own QA data as JSON Lines: one question a line, translations sharing an `id`.

    {"id": "q1", "lang": "en", "question": "Who wrote Hamlet?", "answer": "Shakespeare",
     "context": "Hamlet is a play. Shakespeare wrote it."}
    {"id": "q1", "lang": "de", "question": "Wer schrieb Hamlet?", "answer": "Shakespeare",
     "context": "Hamlet ist ein Stück. Shakespeare schrieb es."}
    {"id": "q3", "lang": "en", "question": "Where is Paris?", "answer": "in France",
     "context": "Paris lies in France.", "title": "Paris"}

(one record a line in the file; wrapped here.)

Required: id, lang, question, answer (its text, found in the context), context. Optional: `title`, the article (the
unit of relkt's train/dev/test split); without it, contexts that share a question id (translations of each other) form
one article, named after the smallest id asked of them, so no translation of a question lands in another split.
A context is split into candidate sentences by relkt's splitter; `answer_start` (an int) may pin the answer's offset.
"""

from __future__ import annotations

from pathlib import Path

from relkt.data.records import Candidate, LanguageData, Question
from relkt.data.sentence_splitter import split_sentences
from relkt.data.text import control_character, has_visible_text, is_lang_code, normal_lang, normal_text
from relkt.errors import DataError
from relkt.io import parse_json, read_bytes

REQUIRED = ("id", "lang", "question", "answer", "context")


# a file's row errors are gathered and the first of them shown, in file order, before anything loads
SHOWN_ERRORS = 5


def _record_errors(path: Path, number: int, record: object) -> list[str]:
    """What is wrong with one parsed line (nothing: []), each naming file, line and field."""
    if not isinstance(record, dict):
        return [f"{path}:{number}: expected a JSON object, got {type(record).__name__}"]
    errors = []
    for key in REQUIRED:
        if key not in record:
            errors.append(f"{path}:{number}: missing field '{key}' (a record needs {', '.join(REQUIRED)})")
        elif not isinstance(record[key], str) or not has_visible_text(record[key]):
            errors.append(
                f"{path}:{number}.{key}: expected a non-empty string (more than whitespace or invisible marks), "
                f"got {record[key]!r}"
            )
        elif control_character(record[key]):
            errors.append(f"{path}:{number}.{key}: holds a control character ({control_character(record[key])})")
    if errors:
        return errors
    record["lang"] = normal_lang(record["lang"])  # `EN` beside `en` is one language, not a second one
    if not is_lang_code(record["lang"]):
        errors.append(f"{path}:{number}.lang: {record['lang']!r} is not a language code (two or three letters)")
    for key, kind in (("title", str), ("answer_start", int)):
        if key in record and (not isinstance(record[key], kind) or isinstance(record[key], bool)):
            errors.append(f"{path}:{number}.{key}: expected {kind.__name__}, got {type(record[key]).__name__}")
    return errors


def _records(path: Path) -> list[tuple[int, dict]]:
    """(line number, record) for every non-empty line. Every bad line is found first, and one error gives their
    count and the first few in file order, each naming file, line and field."""
    out, errors = [], []
    lines = read_bytes(path, "JSON Lines file").split(b"\n")  # the read door: a regular file, bounded
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            record = parse_json(text, f"{path}:{number}")
        except UnicodeDecodeError as e:
            errors.append(f"{path}:{number}: not UTF-8 text ({e.reason} at byte {e.start})")
            continue
        except DataError as e:
            errors.append(str(e))
            continue
        bad = _record_errors(path, number, record)
        errors += bad
        if not bad:
            out.append((number, record))
    if errors:
        more = f" ({len(errors) - SHOWN_ERRORS} more not shown)" if len(errors) > SHOWN_ERRORS else ""
        head = f"{path}: {len(errors)} bad line(s){more}:\n  " if len(errors) > 1 else ""
        raise DataError(head + "\n  ".join(errors[:SHOWN_ERRORS]))
    if not out:
        raise DataError(f"{path}: no records (expected one JSON object a line with {', '.join(REQUIRED)})")
    _one_code_a_language(path, {r["lang"] for _, r in out})
    return out


def _one_code_a_language(path: Path, langs: set[str]) -> None:
    """`en-us` beside `en` is one language written two ways: refused, never split into two pools' worth."""
    for lang in sorted(langs):
        base = lang.partition("-")[0]
        if base != lang and base in langs:
            raise DataError(
                f"{path}: lang {lang!r} and {base!r} both occur; write one code for one language (relkt keeps "
                "region and script subtags apart: zh-hans is not zh)"
            )


def _answer_start(record: dict, path: Path, number: int) -> int:
    context, answer = record["context"], record["answer"]
    if "answer_start" in record:
        start = record["answer_start"]
        if start < 0 or context[start : start + len(answer)] != answer:
            raise DataError(
                f"{path}:{number}.answer_start: {start} does not point at the answer {answer!r} in the context"
            )
        return start
    start = context.find(answer)
    if start < 0:
        raise DataError(f"{path}:{number}.answer: {answer!r} does not occur in the record's context")
    return start


def _articles(records: list[tuple[int, dict]]) -> dict[tuple[str, str], str]:
    """(lang, context) -> article name: the record's title, else the contexts linked by shared ids (union-find)."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first_of_id: dict[str, tuple[str, str]] = {}
    for _, r in records:
        node = (r["lang"], r["context"])
        find(node)
        if r["id"] in first_of_id:
            a, b = find(first_of_id[r["id"]]), find(node)
            if a != b:
                parent[max(a, b)] = min(a, b)
        else:
            first_of_id[r["id"]] = node
    smallest: dict[tuple[str, str], str] = {}
    for _, r in records:
        root = find((r["lang"], r["context"]))
        smallest[root] = min(smallest.get(root, r["id"]), r["id"])
    titled = {(r["lang"], r["context"]): r["title"] for _, r in records if "title" in r}
    return {node: titled.get(node, smallest[find(node)]) for node in parent}


def read_jsonl_file(path: str | Path) -> dict[str, LanguageData]:
    """Every language of one JSON Lines file, as `read_squad_file` gives one SQuAD file's."""
    path = Path(path)
    records = _records(path)
    articles = _articles(records)
    out: dict[str, LanguageData] = {}
    paragraph_of: dict[
        tuple[str, str], tuple[int, list[tuple[int, int]], int]
    ] = {}  # context -> (paragraph, spans, first)
    seen: dict[tuple[str, str], int] = {}
    paragraphs: dict[tuple[str, str], int] = {}  # (lang, article) -> paragraphs so far
    for number, r in records:
        lang, context = r["lang"], r["context"]
        data = out.setdefault(lang, LanguageData(lang=lang, path=path, split_by_relkt=True))
        if (lang, r["id"]) in seen:
            raise DataError(
                f"{path}:{number}.id: {r['id']!r} is asked twice in {lang} (first on line {seen[lang, r['id']]}); "
                "within a language every question id must be unique"
            )
        seen[lang, r["id"]] = number
        article = articles[lang, context]
        if (lang, context) not in paragraph_of:
            spans = split_sentences(context)
            paragraph = paragraphs[lang, article] = paragraphs.get((lang, article), -1) + 1
            first = len(data.candidates)
            for k, (s, e) in enumerate(spans):
                data.candidates.append(
                    Candidate(
                        cid=f"{lang}:{article}.{paragraph}.{k}",
                        lang=lang,
                        sentence=normal_text(context[s:e]),
                        context=context,
                        article=article,
                        paragraph=paragraph,
                        start=s,
                        end=e,
                    )
                )
            paragraph_of[lang, context] = (paragraph, spans, first)
        paragraph, spans, first = paragraph_of[lang, context]
        start = _answer_start(r, path, number)
        data.questions.append(
            Question(
                qas_id=r["id"],
                lang=lang,
                text=normal_text(r["question"]),
                article=article,
                paragraph=paragraph,
                answer_start=start,
            )
        )
        hit = next((k for k, (s, e) in enumerate(spans) if s <= start < e), None)
        if hit is None:
            data.unmatched_answers.append(r["id"])
        else:
            data.answer_sentence[r["id"]] = first + hit
    return out


def merge_languages(parts: list[dict[str, LanguageData]]) -> dict[str, LanguageData]:
    """Several files' languages as one: a language in two files is an error naming both (ids could collide)."""
    out: dict[str, LanguageData] = {}
    for part in parts:
        for lang, data in part.items():
            if lang in out:
                raise DataError(
                    f"{data.path}: holds {lang} questions, and so does {out[lang].path}; keep one language's "
                    "records in one file"
                )
            out[lang] = data
    return out
