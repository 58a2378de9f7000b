"""Tiny LAReQA-format data written by the tests themselves, and where the shared data lies."""

from __future__ import annotations

import json
from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

# Three articles, one paragraph each, two sentences per paragraph, in English and German.
# Questions share ids across languages; the answer lies in sentence 0 or 1 as noted.
ARTICLES = {
    "en": [
        (
            "Cats",
            ["Cats sleep sixteen hours a day.", "They hunt mice at night."],
            [("c1", "How long do cats sleep?", 0), ("c2", "What do cats hunt?", 1)],
        ),
        (
            "Rivers",
            ["The Rhine flows into the North Sea.", "It is 1230 kilometres long."],
            [("r1", "Where does the Rhine flow?", 0), ("r2", "How long is the Rhine?", 1)],
        ),
        (
            "Bread",
            ["Bread is baked from flour.", "Yeast makes the dough rise."],
            [("b1", "What is bread made from?", 0), ("b2", "What makes dough rise?", 1)],
        ),
    ],
    "de": [
        (
            "Cats",
            ["Katzen schlafen sechzehn Stunden am Tag.", "Sie jagen nachts Mäuse."],
            [("c1", "Wie lange schlafen Katzen?", 0), ("c2", "Was jagen Katzen?", 1)],
        ),
        (
            "Rivers",
            ["Der Rhein fließt in die Nordsee.", "Er ist 1230 Kilometer lang."],
            [("r1", "Wohin fließt der Rhein?", 0), ("r2", "Wie lang ist der Rhein?", 1)],
        ),
        (
            "Bread",
            ["Brot wird aus Mehl gebacken.", "Hefe lässt den Teig aufgehen."],
            [("b1", "Woraus wird Brot gemacht?", 0), ("b2", "Was lässt Teig aufgehen?", 1)],
        ),
    ],
}


def squad_json(lang: str, with_breaks: bool = True) -> dict:
    data = []
    for title, sentences, qas in ARTICLES[lang]:
        context = " ".join(sentences)
        breaks, pos = [], 0
        for s in sentences:
            breaks.append([pos, pos + len(s)])
            pos += len(s) + 1
        paragraph = {
            "context": context,
            "qas": [
                {"id": qid, "question": q, "answers": [{"answer_start": breaks[k][0] + 1, "text": sentences[k][1:4]}]}
                for qid, q, k in qas
            ],
        }
        if with_breaks:
            paragraph.update(sentences=sentences, sentence_breaks=breaks)
        data.append({"title": title, "paragraphs": [paragraph]})
    return {"version": "1.1", "data": data}


SYNTH_WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber cobalt denim ember"
).split()


# "th": each Latin letter becomes a Thai consonant and words are written without spaces, like Thai.
THAI_LETTERS = dict(zip("abcdefghijklmnopqrstuvwxyz", "กขคฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผ"))


def render(lang: str, words: list[str]) -> str:
    """A synthetic language's text for English `words`: "th" is spaceless Thai letters, others suffix "en"."""
    if lang == "th":
        return "".join("".join(THAI_LETTERS[ch] for ch in w) for w in words)
    return " ".join(w + "en" for w in words)


def make_synthetic_lareqa(root: Path, n_articles: int = 30, langs=("en", "de"), seed: int = 0) -> Path:
    """A LAReQA-format pool with real signal: each question repeats 3 words of its answer sentence;
    the "German" side is the English text with every word suffixed, so languages differ but align."""
    import numpy as np

    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    articles = []
    for a in range(n_articles):
        sentences = [" ".join(rng.choice(SYNTH_WORDS, 6)) + "." for _ in range(4)]
        qas = [(f"q{a}_{k}", " ".join(sentences[k].rstrip(".").split()[1:4]) + "?", k) for k in (0, 2)]
        articles.append((f"Article{a}", sentences, qas))
    for lang in langs:
        data = []
        for title, sentences, qas in articles:
            sents = sentences if lang == "en" else [render(lang, s.rstrip(".").split()) + "." for s in sentences]
            breaks, pos = [], 0
            for s in sents:
                breaks.append([pos, pos + len(s)])
                pos += len(s) + 1
            qs = [
                {
                    "id": qid,
                    "question": q if lang == "en" else render(lang, q.rstrip("?").split()) + "?",
                    "answers": [{"answer_start": breaks[k][0], "text": sents[k].split()[0]}],
                }
                for qid, q, k in qas
            ]
            data.append(
                {
                    "title": title,
                    "paragraphs": [
                        {"context": " ".join(sents), "sentences": sents, "sentence_breaks": breaks, "qas": qs}
                    ],
                }
            )
        (root / f"{lang}.json").write_text(json.dumps({"version": "1.1", "data": data}), encoding="utf-8")
    return root


def write_corpus(folder, lang: str, n: int):
    folder.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"tatoeba\tthe number {i} is here\tdie Zahl {i} ist hier\n" for i in range(n))
    (folder / f"{lang}.tsv").write_text("source\ten\txx\n" + rows)


def english_only(tmp_path, name, articles):
    folder = tmp_path / name
    folder.mkdir()
    doc = squad_json("en")
    doc["data"] = [a for a in doc["data"] if a["title"] in articles]
    (folder / "en.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


def other_articles(tmp_path):
    """The fixture's English articles under other titles, ids and contexts: a training source sharing nothing."""
    folder = english_only(tmp_path, "other", {"Cats", "Rivers", "Bread"})
    doc = json.loads((folder / "en.json").read_text())
    for article in doc["data"]:
        article["title"] = "Old " + article["title"]
        for paragraph in article["paragraphs"]:
            paragraph["context"] += " Then more."
            paragraph["sentences"].append("Then more.")
            paragraph["sentence_breaks"].append([len(paragraph["context"]) - 10, len(paragraph["context"])])
            for qa in paragraph["qas"]:
                qa["id"] = "old-" + qa["id"]
    (folder / "en.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder
