"""The one normal form relkt compares texts in: Unicode NFC, every run of whitespace one space, no space at either
end. Every reader applies it to the texts it hands on (pair files' sides, questions, answer sentences), and every
overlap and leak check keys texts by it, so an NFD copy or a doubled space is the same text, not a new one."""

from __future__ import annotations

import re
import unicodedata

# A language code relkt takes: two or three letters (ISO 639-1/3), an optional region or script subtag (zh-hans).
LANG_CODE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")


# Marks that draw nothing: zero-width spaces and joiners, direction marks, the word joiner and its kin, the BOM, the
# soft hyphen. A field made only of these (and whitespace) holds no text, however long it is.
_INVISIBLE = re.compile(
    r"[\s\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff]*"
)


# Control characters no language writes (C0 but tab, newline and carriage return; DEL): a text holding one is a
# damaged file (a NUL from a bad conversion), never something to encode. None of the shipped data holds one.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def control_character(text: str) -> str | None:
    """The first control character of `text` no language writes, as `U+0000 at 5`; None when it has none."""
    found = _CONTROL.search(text)
    return f"U+{ord(found.group()):04X} at {found.start()}" if found else None


def has_visible_text(text: str) -> bool:
    """Whether `text` holds anything a reader sees: not empty, not only whitespace and invisible marks (U+200B ...)."""
    return not _INVISIBLE.fullmatch(text)


def normal_text(text: str) -> str:
    """`text` in relkt's normal form: NFC, whitespace collapsed, stripped."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def normal_lang(code: str) -> str:
    """A language code as relkt compares it: stripped, lower case (`EN` and `en` are one language)."""
    return code.strip().lower()


def is_lang_code(code: str) -> bool:
    """Whether `code`, in the normal form, is a language code (`LANG_CODE`): never `../x` or `e n`."""
    return isinstance(code, str) and bool(LANG_CODE.match(normal_lang(code)))
