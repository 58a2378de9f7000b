"""Typed records of the LAReQA pool: questions and candidate answer sentences."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Question:
    """One question in one language.

    `qas_id` is shared by the translations of a question across languages (that is how
    parallel questions and their gold answers in other languages are found); `qid` is unique
    in the pool (`lang:qas_id`).
    """

    qas_id: str
    lang: str
    text: str
    article: str
    paragraph: int
    answer_start: int

    @property
    def qid(self) -> str:
        return f"{self.lang}:{self.qas_id}"


@dataclass(frozen=True)
class Candidate:
    """One candidate answer: a sentence of a paragraph, with its context for context-aware encoders.

    `start`/`end` are the sentence's [start, end) character offsets into `context`.
    """

    cid: str
    lang: str
    sentence: str
    context: str
    article: str
    paragraph: int
    start: int
    end: int


@dataclass
class LanguageData:
    """Questions and candidate sentences read from one language's file."""

    lang: str
    path: Path
    questions: list[Question] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    # qas_id -> index into `candidates` of the sentence holding the answer start.
    answer_sentence: dict[str, int] = field(default_factory=dict)
    unmatched_answers: list[str] = field(default_factory=list)
    split_by_relkt: bool = False
