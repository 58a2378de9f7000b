"""A romanized view of a script the base model cannot read: a Bengali or Telugu question written in Latin letters
(anyascii's transliteration: "ঢাকা" -> "dhaka") shares its names' spelling with English, which a base that reads the
script as `<unk>` cannot see. Zero-shot mUSE on XOR-TyDi's questions, XX->EN P@1: Bengali 0.0 -> 5.8, Telugu 0.6 -> 5.9
with the question romanized, and Japanese 83.1 -> 2.3, Russian 91.7 -> 32.5 (so only for scripts the base cannot
read; issue #45). `data.romanize_langs` adds each training pair of those languages once more with its question
romanized, paired with the same teacher target."""

from __future__ import annotations

from collections.abc import Sequence

from relkt.errors import DataError


def romanize(text: str) -> str:
    """`text` in Latin letters, whitespace kept."""
    try:
        from anyascii import anyascii  # deferred: only students with data.romanize_langs need it
    except ImportError:
        raise DataError("data.romanize_langs needs the anyascii package: pip install anyascii") from None
    return anyascii(text)


def romanized_rows(q_target: Sequence[str], lang: Sequence[str], langs: Sequence[str]) -> list[tuple[int, str]]:
    """(row, romanized question) for every row of a language in `langs` whose romanized question differs from it."""
    wanted, out = set(langs), []
    for i, (text, x) in enumerate(zip(q_target, lang)):
        if x in wanted:
            roman = romanize(text)
            if roman != text:
                out.append((i, roman))
    return out
