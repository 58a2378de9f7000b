"""QA data: sources and their readers (SQuAD JSON, MLQA, JSON Lines), pair files, sentence splitting, article
splits and the retrieval pool."""

from relkt.data.english_answer_units import EnglishAnswerUnits
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.qa_source import QaSource
from relkt.data.records import Candidate, LanguageData, Question
from relkt.data.sentence_splitter import split_sentences
from relkt.data.sources import XQUAD_R_LANGS, resolve_data_dir
from relkt.data.splits import SPLIT_UNITS, SPLITS, article_split, split_overlap, unit_split
from relkt.data.squad_reader import read_squad_file

__all__ = [
    "Candidate",
    "EnglishAnswerUnits",
    "LanguageData",
    "LareqaPool",
    "QaSource",
    "Question",
    "SPLITS",
    "SPLIT_UNITS",
    "XQUAD_R_LANGS",
    "article_split",
    "read_squad_file",
    "resolve_data_dir",
    "split_overlap",
    "split_sentences",
    "unit_split",
]
