"""A dependency-free sentence splitter for contexts that come without sentence breaks.

It returns [start, end) character offsets (like LAReQA's `sentence_breaks`) so gold answers are
found the same way whatever the source. Rules:

- `. ! ?` (and `।`, `؟`, `॥`, `…`) end a sentence when followed by whitespace and then
  something that can start one; a `.` after a known abbreviation ("Dr.", "e.g.", "U.S."),
  a single initial ("J. K. Rowling") or a number ("No. 5") does not.
- `。 ！ ？` (CJK full-width) end a sentence immediately, no space needed.
- Closing quotes and brackets right after the terminator stay with the sentence.
- Thai writes no terminal punctuation and uses a space between clauses and sentences: a space
  between Thai characters is a break only once the running sentence has `thai_min_chars`
  characters, so short clauses are not split off on their own.
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al approx inc ltd co corp dept univ
    gen col lt sgt capt gov sen rep rev hon est no nos vol vols fig figs pp ed eds jan feb mar apr
    jun jul aug sep sept oct nov dec u.s u.k u.n a.d b.c a.m p.m ca c""".split()
)

_CLOSERS = "\"'”’»)]}」』】〕》"
_CJK_END = "。！？"
_SPACE_END = ".!?।؟॥…"
_THAI = re.compile(r"[\u0E00-\u0E7F]")


def _is_thai(ch: str) -> bool:
    return bool(_THAI.match(ch))


def _prev_token(text: str, dot: int) -> str:
    """The word that a '.' at position `dot` ends, lowercased, without leading punctuation."""
    start = dot
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return text[start:dot].lower().lstrip("\"'“‘([{")


def _dot_ends_sentence(text: str, dot: int, nxt: int) -> bool:
    token = _prev_token(text, dot)
    if token in ABBREVIATIONS:
        return False
    if len(token) == 1 and token.isalpha():  # an initial: "J. K. Rowling"
        return False
    if nxt < len(text) and text[nxt].islower():  # "approx. three", unknown abbreviation
        return False
    return True


def split_sentences(text: str, thai_min_chars: int = 100) -> list[tuple[int, int]]:
    """Split `text` into sentences; returns [start, end) offsets with surrounding spaces trimmed."""
    n = len(text)
    breaks: list[int] = []  # positions where a new sentence may start (after the gap)
    sentence_start = 0
    i = 0
    while i < n:
        ch = text[i]
        end = None
        if ch in _CJK_END:
            end = i + 1
        elif ch in _SPACE_END:
            j = i + 1
            while j < n and text[j] in _SPACE_END:  # "?!", "..."
                j += 1
            while j < n and text[j] in _CLOSERS:
                j += 1
            if j == n or text[j].isspace():
                k = j
                while k < n and text[k].isspace():
                    k += 1
                if k < n and (ch != "." or _dot_ends_sentence(text, i, k)):
                    end = j
            i = j - 1
        elif ch.isspace() and 0 < i < n - 1 and _is_thai(text[i - 1]):
            k = i
            while k < n and text[k].isspace():
                k += 1
            if k < n and _is_thai(text[k]) and i - sentence_start >= thai_min_chars:
                end = i
        if end is not None:
            while end < n and text[end] in _CLOSERS:
                end += 1
            breaks.append(end)
            sentence_start = end
        i += 1
    spans = []
    start = 0
    for end in breaks + [n]:
        s, e = start, end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
        start = end
    return spans
