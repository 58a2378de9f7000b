"""The one normal form relkt compares texts in: Unicode NFC, every run of whitespace one space, no space at either
end. Every reader applies it to the texts it hands on (pair files' sides, questions, answer sentences), and every
overlap and leak check keys texts by it, so an NFD copy or a doubled space is the same text, not a new one."""

from __future__ import annotations

import unicodedata


def normal_text(text: str) -> str:
    """`text` in relkt's normal form: NFC, whitespace collapsed, stripped."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def normal_lang(code: str) -> str:
    """A language code as relkt compares it: stripped, lower case (`EN` and `en` are one language)."""
    return code.strip().lower()
