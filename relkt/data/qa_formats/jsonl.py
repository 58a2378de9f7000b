"""JSON Lines: a `.jsonl` file, or a folder of them, one question a line with its `lang` (relkt.data.jsonl_reader)."""

from __future__ import annotations

from pathlib import Path

from relkt.data.jsonl_reader import merge_languages, read_jsonl_file
from relkt.data.qa_format import QaFormat, register_qa_format
from relkt.data.records import LanguageData
from relkt.errors import DataError


def jsonl_files(path: Path) -> list[Path]:
    """The JSON Lines files at `path`: the file itself, or a folder's `*.jsonl`."""
    return [path] if path.is_file() else sorted(path.glob("*.jsonl"))


@register_qa_format
class JsonlFormat(QaFormat):
    """JSON Lines QA files (`*.jsonl`, one question a line), read by relkt.data.jsonl_reader."""

    name = "jsonl"
    expects = "*.jsonl"

    def claims(self, path: Path) -> bool:
        return path.suffix == ".jsonl" if path.is_file() else bool(jsonl_files(path))

    def files(self, path: Path) -> dict[str, Path]:
        return {file.name: file for file in jsonl_files(path)}

    def _all(self, path: Path) -> dict[str, LanguageData]:
        files = jsonl_files(path)
        if not files:
            raise DataError(f"{path}: no .jsonl files")
        return merge_languages([read_jsonl_file(file) for file in files])

    def languages(self, path: Path) -> list[str]:
        return sorted(self._all(path))

    def read(self, path: Path, langs: list[str]) -> list[LanguageData]:
        datas = self._all(path)
        return [datas[lang] for lang in langs]
