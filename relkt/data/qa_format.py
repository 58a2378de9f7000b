"""The QA format table: name -> `QaFormat`. A format is one file in `relkt/data/qa_formats/` that subclasses
`QaFormat` and registers itself with `@register_qa_format`; nothing else changes to add one (the table loads that
folder on first use). A format defined elsewhere (a user's module, a test) registers the same way, once imported.

`relkt.data.qa_source.QaSource` is the only reader of the table: `auto` asks each format whether it `claims` the path.
"""

from __future__ import annotations

from pathlib import Path

from relkt.data.records import LanguageData
from relkt.errors import DataError
from relkt.registry import Registry

QA_FORMATS = Registry("QA format", "relkt.data.qa_formats")


class QaFormat:
    """One way QA data lies on disk. Subclasses set `name` and `expects` (what its files look like, for errors) and
    implement the four methods; `path` is a folder or a file, already resolved by `locate`."""

    name: str = ""
    expects: str = ""

    def locate(self, path: Path) -> Path:
        """Where this format's files lie, given the path a user named (a parent folder, say); default: the path."""
        return path

    def claims(self, path: Path) -> bool:
        """Whether `path` holds this format's files (what `auto` asks)."""
        raise NotImplementedError

    def files(self, path: Path) -> dict[str, Path]:
        """Every file read, by a name unique in the source (what run fingerprints cover)."""
        raise NotImplementedError

    def languages(self, path: Path) -> list[str]:
        """The languages the source holds questions or candidates in."""
        raise NotImplementedError

    def read(self, path: Path, langs: list[str]) -> list[LanguageData]:
        """The language data of `langs` (each one of `languages(path)`), in that order."""
        raise NotImplementedError


def register_qa_format(cls: type[QaFormat]) -> type[QaFormat]:
    """Class decorator: add the format to the table under its `name` (a second, different class of one name is an
    error, so two formats cannot shadow each other)."""
    if not cls.name or cls.name == "auto":
        raise ValueError(f"{cls.__name__}: a QA format needs a name other than 'auto'")
    QA_FORMATS.add(cls.name, cls(), cls)
    return cls


def qa_formats() -> dict[str, QaFormat]:
    """The table, with every built-in format (each module of relkt/data/qa_formats/) loaded."""
    return QA_FORMATS.loaded()


def format_names() -> tuple[str, ...]:
    """`auto` and every registered format: the values `data.format` and `--format` take."""
    return ("auto", *sorted(qa_formats()))


def check_format_name(name: str, key: str = "data.format") -> str:
    """`name` when it is `auto` or a registered format, else one DataError naming `key` and the valid names."""
    if name not in format_names():
        raise DataError(f"{key}: unknown format {name!r}; valid: {', '.join(format_names())}")
    return name
