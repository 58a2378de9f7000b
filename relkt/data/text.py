"""The one normal form relkt compares texts in: Unicode NFC, every run of whitespace one space, no space at either
end. Every reader applies it to the texts it hands on (pair files' sides, questions, answer sentences), and every
overlap and leak check keys texts by it, so an NFD copy or a doubled space is the same text, not a new one."""

from __future__ import annotations

import re
import unicodedata

# A language code relkt takes: two or three letters (ISO 639-1/3), an optional region or script subtag (zh-hans).
LANG_CODE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")


def normal_text(text: str) -> str:
    """`text` in relkt's normal form: NFC, whitespace collapsed, stripped."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def normal_lang(code: str) -> str:
    """A language code as relkt compares it: stripped, lower case (`EN` and `en` are one language)."""
    return code.strip().lower()


def is_lang_code(code: str) -> bool:
    """Whether `code`, in the normal form, is a language code (`LANG_CODE`): never `../x` or `e n`."""
    return isinstance(code, str) and bool(LANG_CODE.match(normal_lang(code)))
