"""A QA data source: a path and a format name, read through the format table (relkt.data.qa_format). Built in:

| format | path                                                                   | languages from |
|--------|------------------------------------------------------------------------|----------------|
| squad  | a folder of `{lang}.json` / `xquad.{lang}.json`, or one such file      | the file names |
| mlqa   | a folder of MLQA's `dev-context-XX-question-YY.json` (or `test-`)      | XX and YY      |
| jsonl  | a `.jsonl` file, or a folder of them (relkt.data.jsonl_reader)         | each `lang`    |

(squad covers XQuAD-R, raw XQuAD and SQuAD train's `en.json`.) Another format is one file in
relkt/data/qa_formats/, or a `QaFormat` registered by the user's own code.

`auto` tells the format from the files, and says what it found when it cannot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from relkt.data.qa_format import QaFormat, check_format_name, qa_formats
from relkt.data.records import LanguageData
from relkt.errors import DataError
from relkt.io import file_fingerprint, read_json


def detect_format(path: Path) -> str:
    """The one registered format that claims the files at `path`; a DataError naming what was found when none or
    several do."""
    formats = qa_formats()
    kinds = [name for name, fmt in sorted(formats.items()) if fmt.claims(fmt.locate(path))]
    if len(kinds) == 1:
        return kinds[0]
    if path.is_file():
        raise DataError(
            f"{path}: cannot tell the format of this file ({'; '.join(f.expects for f in formats.values())}); "
            "set data.format"
        )
    seen = ", ".join(sorted(p.name for p in path.iterdir())[:6]) or "nothing"
    if not kinds:
        raise DataError(
            f"{path}: no QA files relkt can read (it holds {seen}); expected "
            f"{', '.join(f.expects for _, f in sorted(formats.items()))}"
        )
    raise DataError(f"{path}: holds files of several formats ({', '.join(kinds)}); set data.format to the one to read")


@dataclass(frozen=True)
class QaSource:
    """Where QA data comes from: `path` (a folder or a file) read as `format` (a name in the format table)."""

    path: Path
    format: str

    @classmethod
    def open(cls, path: str | Path, format: str = "auto") -> QaSource:
        """The source at `path`, `format` resolved (the format may move the path: a parent folder holding `xquad-r/`
        means that folder)."""
        path = Path(path).expanduser()
        if not path.exists():
            raise DataError(f"{path}: no such file or folder")
        if not (path.is_file() or path.is_dir()):  # a named pipe or a device would block the read, or never end
            raise DataError(f"{path}: not a regular file or folder")
        try:
            check_format_name(format, "format")
        except DataError as e:
            raise DataError(f"{path}: {e}") from None
        name = detect_format(path) if format == "auto" else format
        return cls(qa_formats()[name].locate(path), name)

    @property
    def reader(self) -> QaFormat:
        return qa_formats()[self.format]

    def files(self) -> dict[str, Path]:
        """Every file the source reads, by a name unique in it (what run fingerprints cover)."""
        return self.reader.files(self.path)

    def languages(self) -> list[str]:
        """The languages the source holds questions or candidates in."""
        return self.reader.languages(self.path)

    def read(self, langs: list[str] | None = None) -> list[LanguageData]:
        """The language data of `langs` (every language when None or empty), in that order; a language the source
        does not hold is an error naming the ones it does."""
        available = self.languages()
        if not available:
            raise DataError(f"{self.path}: no {self.format} files found")
        langs = list(langs) if langs else sorted(available)
        unknown = [lang for lang in langs if lang not in available]
        if unknown:
            raise DataError(
                f"{self.path}: no data for language(s) {', '.join(unknown)}; available: {', '.join(sorted(available))}"
            )
        datas = self.reader.read(self.path, langs)
        check_shared_ids(datas)
        return datas


def check_shared_ids(datas: list[LanguageData]) -> None:
    """An id shared across languages names one question (gold is found by id in every language), so the ids that
    share an article in one language share it in every other: a DataError naming both files and the two ids
    otherwise. Compared as groupings, so translated titles and differently ordered files pass; paragraphs are not
    compared, since a language may cut an article into other paragraphs (MLQA does)."""
    articles = [(d, {q.qas_id: q.article for q in d.questions}) for d in datas]
    for i, (a, in_a) in enumerate(articles):
        for b, in_b in articles[i + 1 :]:
            for (x, in_x), (y, in_y) in (((a, in_a), (b, in_b)), ((b, in_b), (a, in_a))):
                apart = _first_apart(in_x, in_y)
                if apart:
                    raise DataError(
                        f"{y.path}: questions {apart[0]!r} and {apart[1]!r} share an article in {x.lang} ({x.path}) "
                        f"but not in {y.lang}: an id shared across languages must name the same question (the same "
                        "article)"
                    )


def _first_apart(in_x: dict[str, str], in_y: dict[str, str]) -> tuple[str, str] | None:
    """The first two shared ids in one article of x and in two articles of y; None if there are none."""
    seen: dict[str, tuple[str, str]] = {}
    for qid in sorted(in_x.keys() & in_y.keys()):
        there, other = seen.setdefault(in_x[qid], (in_y[qid], qid))
        if there != in_y[qid]:
            return other, qid
    return None


def check_run_files(run_dir: Path, data_dir: str | Path, fmt: str = "auto") -> None:
    """A run scored on its own data: each QA file its `fingerprints.json` recorded must be the file read now, as a
    resumed run requires; a changed one is a DataError naming it."""
    recorded_path = Path(run_dir) / "fingerprints.json"
    if not recorded_path.is_file():
        return
    recorded = read_json(recorded_path, "fingerprints file")
    files = {f"data/{path.name}": path for path in QaSource.open(data_dir, fmt).files().values()}
    for key, before in sorted(recorded.items()):
        if key.startswith("data/") and key in files and file_fingerprint(files[key]) != before:
            raise DataError(
                f"{files[key]}: changed since the run {run_dir} trained on it ({recorded_path} records "
                f"{before.get('bytes')} bytes, sha256 {str(before.get('sha256'))[:12]}); its split would not be the "
                "one it trained with: score it on the data it trained on, or name data_dir to score other data"
            )
