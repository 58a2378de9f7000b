"""A QA data source: a path and a format. The one place that knows QA file names and formats.

| format | path                                                                   | languages from |
|--------|------------------------------------------------------------------------|----------------|
| squad  | a folder of `{lang}.json` / `xquad.{lang}.json`, or one such file      | the file names |
| mlqa   | a folder of MLQA's `dev-context-XX-question-YY.json` (or `test-`)      | XX and YY      |
| jsonl  | a `.jsonl` file, or a folder of them (relkt.data.jsonl_reader)         | each `lang`    |

(squad covers XQuAD-R, raw XQuAD and SQuAD train's `en.json`.)

`auto` tells the format from the files, and says what it found when it cannot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from relkt.data.jsonl_reader import merge_languages, read_jsonl_file
from relkt.data.mlqa_reader import mlqa_files, read_mlqa_folder
from relkt.data.squad_reader import LanguageData, read_squad_file
from relkt.errors import DataError

FORMATS = ("squad", "mlqa", "jsonl")


def squad_files(directory: Path) -> dict[str, Path]:
    """Map language code -> file for `{lang}.json` (XQuAD-R, SQuAD train) or `xquad.{lang}.json` (raw XQuAD)."""
    found = {}
    for path in sorted(directory.glob("*.json")):
        parts = path.name.split(".")
        if len(parts) == 2 and 2 <= len(parts[0]) <= 3 and parts[0].isalpha():
            found[parts[0]] = path
        elif len(parts) == 3 and parts[0] in ("xquad", "squad"):
            found[parts[1]] = path
    return found


def _jsonl_files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(path.glob("*.jsonl"))


def detect_format(path: Path) -> str:
    """squad, mlqa or jsonl, from the files at `path`; a DataError naming what was found when none fits."""
    if path.is_file():
        if path.suffix == ".jsonl":
            return "jsonl"
        if path.suffix == ".json":
            return "squad"
        raise DataError(f"{path}: cannot tell the format of this file (expected .json or .jsonl); set data.format")
    kinds = [
        name
        for name, hit in (("mlqa", mlqa_files(path)), ("jsonl", _jsonl_files(path)), ("squad", squad_files(path)))
        if hit
    ]
    if len(kinds) == 1:
        return kinds[0]
    seen = ", ".join(sorted(p.name for p in path.iterdir())[:6]) or "nothing"
    if not kinds:
        raise DataError(
            f"{path}: no QA files relkt can read (it holds {seen}); expected {{lang}}.json (SQuAD/XQuAD), "
            "dev-context-XX-question-YY.json (MLQA) or *.jsonl"
        )
    raise DataError(f"{path}: holds files of several formats ({', '.join(kinds)}); set data.format to the one to read")


@dataclass(frozen=True)
class QaSource:
    """Where QA data comes from: `path` (a folder or a file) read as `format`."""

    path: Path
    format: str

    @classmethod
    def open(cls, path: str | Path, format: str = "auto") -> QaSource:
        """The source at `path`, `format` resolved; a parent folder holding `xquad-r/` means that folder."""
        path = Path(path).expanduser()
        if not path.exists():
            raise DataError(f"{path}: no such file or folder")
        if format not in ("auto",) + FORMATS:
            raise DataError(f"{path}: unknown format {format!r}; valid: auto, {', '.join(FORMATS)}")
        if path.is_dir() and format in ("auto", "squad") and not squad_files(path) and (path / "xquad-r").is_dir():
            path = path / "xquad-r"
        return cls(path, detect_format(path) if format == "auto" else format)

    def files(self) -> dict[str, Path]:
        """Every file the source reads, by a name unique in it (what run fingerprints cover)."""
        if self.format == "squad":
            return {lang: path for lang, path in self._squad().items()}
        if self.format == "mlqa":
            return {f"{c}-{q}": path for (c, q), path in mlqa_files(self.path).items()}
        return {path.name: path for path in _jsonl_files(self.path)}

    def _squad(self) -> dict[str, Path]:
        if self.path.is_file():
            lang = self.path.name.split(".")[-2] if self.path.name.count(".") >= 1 else ""
            if not (2 <= len(lang) <= 3 and lang.isalpha()):
                raise DataError(f"{self.path}: cannot tell the language from the file name (name it {{lang}}.json)")
            return {lang: self.path}
        return squad_files(self.path)

    def languages(self) -> list[str]:
        """The languages the source holds questions or candidates in."""
        if self.format == "squad":
            return sorted(self._squad())
        if self.format == "mlqa":
            return sorted({x for pair in mlqa_files(self.path) for x in pair})
        return sorted(self._jsonl())

    def _jsonl(self) -> dict[str, LanguageData]:
        files = _jsonl_files(self.path)
        if not files:
            raise DataError(f"{self.path}: no .jsonl files")
        return merge_languages([read_jsonl_file(path) for path in files])

    def read(self, langs: list[str] | None = None) -> list[LanguageData]:
        """The language data of `langs` (every language when None or empty), in that order; a language the source
        does not hold is an error naming the ones it does."""
        if self.format == "squad":
            files = self._squad()
        elif self.format == "mlqa":
            files = dict.fromkeys(self.languages())
        else:
            files = self._jsonl()
        if not files:
            raise DataError(f"{self.path}: no {self.format} files found")
        langs = list(langs) if langs else sorted(files)
        unknown = [lang for lang in langs if lang not in files]
        if unknown:
            raise DataError(
                f"{self.path}: no data for language(s) {', '.join(unknown)}; available: {', '.join(sorted(files))}"
            )
        if self.format == "squad":
            return [read_squad_file(files[lang], lang) for lang in langs]
        if self.format == "mlqa":
            datas = read_mlqa_folder(self.path, langs)
            return [datas[lang] for lang in langs]
        return [files[lang] for lang in langs]
