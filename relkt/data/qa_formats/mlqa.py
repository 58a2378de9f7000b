"""MLQA: a folder of `dev-context-XX-question-YY.json` (or `test-`) files; languages from XX and YY
(relkt.data.mlqa_reader)."""

from __future__ import annotations

from pathlib import Path

from relkt.data.mlqa_reader import mlqa_files, read_mlqa_folder
from relkt.data.qa_format import QaFormat, register_qa_format
from relkt.data.records import LanguageData


@register_qa_format
class MlqaFormat(QaFormat):
    """MLQA's folder of context-language x question-language files, read as one pool by relkt.data.mlqa_reader."""

    name = "mlqa"
    expects = "dev-context-XX-question-YY.json (MLQA)"

    def claims(self, path: Path) -> bool:
        return path.is_dir() and bool(mlqa_files(path))

    def files(self, path: Path) -> dict[str, Path]:
        return {f"{c}-{q}": file for (c, q), file in mlqa_files(path).items()}

    def languages(self, path: Path) -> list[str]:
        return sorted({x for pair in mlqa_files(path) for x in pair})

    def read(self, path: Path, langs: list[str]) -> list[LanguageData]:
        datas = read_mlqa_folder(path, langs)
        return [datas[lang] for lang in langs]
