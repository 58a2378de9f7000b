"""SQuAD JSON: a folder of `{lang}.json` / `xquad.{lang}.json` files, or one such file (XQuAD-R, raw XQuAD, SQuAD
train's `en.json`); the languages come from the file names."""

from __future__ import annotations

from pathlib import Path

from relkt.data.qa_format import QaFormat, register_qa_format
from relkt.data.records import LanguageData
from relkt.data.squad_reader import read_squad_file
from relkt.data.text import is_lang_code, normal_lang
from relkt.errors import DataError


def squad_files(directory: Path) -> dict[str, Path]:
    """Map language code -> file for `{lang}.json` (XQuAD-R, SQuAD train) or `xquad.{lang}.json` (raw XQuAD)."""
    found: dict[str, Path] = {}
    for path in sorted(directory.glob("*.json")):
        parts = path.name.split(".")
        if len(parts) == 2 and 2 <= len(parts[0]) <= 3 and parts[0].isalpha() and not parts[0].isascii():
            raise DataError(f"{path}: {parts[0]!r} is not a language code (ASCII letters, e.g. el.json): rename it")
        if len(parts) == 2 and 2 <= len(parts[0]) <= 3 and parts[0].isalpha():
            lang = normal_lang(parts[0])
        elif len(parts) == 3 and parts[0] in ("xquad", "squad") and is_lang_code(parts[1]):
            lang = normal_lang(parts[1])
        else:
            continue
        if lang in found:  # two files of one language: neither may silently win
            raise DataError(f"{directory}: two files for the language {lang!r}: {found[lang].name} and {path.name}")
        found[lang] = path
    return found


@register_qa_format
class SquadFormat(QaFormat):
    """SQuAD / XQuAD(-R) JSON, one `{lang}.json` a language, read by relkt.data.squad_reader."""

    name = "squad"
    expects = "{lang}.json (SQuAD/XQuAD)"

    def locate(self, path: Path) -> Path:
        """A parent folder holding `xquad-r/` (the shared data folder) means that folder."""
        if path.is_dir() and not squad_files(path) and (path / "xquad-r").is_dir():
            return path / "xquad-r"
        return path

    def claims(self, path: Path) -> bool:
        return path.suffix == ".json" if path.is_file() else bool(squad_files(path))

    def files(self, path: Path) -> dict[str, Path]:
        if path.is_file():
            lang = path.name.split(".")[-2] if path.name.count(".") >= 1 else ""
            if not (2 <= len(lang) <= 3 and lang.isalpha()):
                raise DataError(f"{path}: cannot tell the language from the file name (name it {{lang}}.json)")
            return {lang: path}
        return squad_files(path)

    def languages(self, path: Path) -> list[str]:
        return sorted(self.files(path))

    def read(self, path: Path, langs: list[str]) -> list[LanguageData]:
        files = self.files(path)
        return [read_squad_file(files[lang], lang) for lang in langs]
