"""argparse types the command lines share: a bad value is one usage line naming the flag, before any work starts."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections import Counter
from pathlib import Path

from relkt.data.english_answer_units import UNITS
from relkt.errors import ConfigError


def _whole_number(text: str, low: int, high: int | None = None) -> int:
    wanted = f"a whole number >= {low}" if high is None else f"a whole number in {low} .. {high:,}"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
    return value


def int_in(low: int, high: int):
    """An argparse type: a whole number in low .. high (a bootstrap's resamples: memory grows with them)."""

    def whole(text: str) -> int:
        return _whole_number(text, low, high)

    whole.__name__ = f"int_in_{low}_{high}"
    return whole


def seed_int(text: str) -> int:
    """An argparse type: a seed, a whole number in 0 .. 2^32-1 (numpy's and TensorFlow's seeds)."""
    return _whole_number(text, 0, 2**32 - 1)


def non_negative_float(text: str) -> float:
    """An argparse type: a finite number >= 0 (seconds, a share)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number >= 0."""
    return _whole_number(text, 0)


def language_list(text: str) -> list[str]:
    """Comma-separated language codes naming at least one, as a list: leaving the flag out means every language, and
    an empty value is refused rather than read as that."""
    codes = comma_list(text)
    if not codes:
        raise argparse.ArgumentTypeError(f"names no language ({text!r}); leave the flag out for every language")
    if len(codes) != len(text.split(",")):  # `en,,de`: a language left out by a slip, never by choice
        raise argparse.ArgumentTypeError(f"an empty name between commas ({text!r}); name each language once")
    twice = sorted(c for c, n in Counter(codes).items() if n > 1)
    if twice:  # a language read twice would be scored on a pool holding its candidates twice
        raise argparse.ArgumentTypeError(f"names {', '.join(twice)} more than once ({text!r}); name each language once")
    return codes


def comma_list(text: str) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"] (an empty value is an empty list)."""
    return [x.strip() for x in text.split(",") if x.strip()]


def lang_sources(text: str) -> dict[str, str]:
    """`LANG:SOURCE,...` (e.g. te:tatoeba,bn:ntrex128) as {lang: source}."""
    out = {}
    for item in comma_list(text):
        lang, sep, source = item.partition(":")
        if not sep or not lang.strip() or not source.strip():
            raise argparse.ArgumentTypeError(f"expected LANG:SOURCE items (e.g. te:tatoeba), got {item!r}")
        out[lang.strip().lower()] = source.strip()
    return out


def other_domain(text: str) -> dict[str, str] | None:
    """`auto` (None: relkt picks), `none` ({}), or `LANG:SOURCE,...`."""
    if text.strip().lower() == "auto":
        return None
    if text.strip().lower() == "none":
        return {}
    return lang_sources(text)


def split_fractions(text: str) -> tuple[float, float, float]:
    """`train,dev,test` article fractions, three numbers >= 0 summing to 1."""
    try:
        parts = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected three numbers train,dev,test (e.g. 0.7,0.1,0.2), got {text!r}"
        ) from None
    if len(parts) != 3 or min(parts) < 0 or abs(sum(parts) - 1) > 1e-6:
        raise argparse.ArgumentTypeError(f"expected three fractions >= 0 summing to 1 (e.g. 0.7,0.1,0.2), got {text!r}")
    return parts


def writable_file(text: str) -> str:
    """An output file whose folder exists (or can be made) and takes a new file: checked before hours of encoding."""
    try:
        target = Path(text).expanduser()
        if target.exists() and not target.is_dir() and not target.is_file():  # /dev/stdout, a FIFO: never a result
            raise argparse.ArgumentTypeError(
                f"cannot write {text}: not a regular file (a FIFO, a device or a socket); relkt writes regular files"
            )
        folder = target.resolve().parent
        blocked = next((a for a in [folder, *folder.parents] if a.exists() and not a.is_dir()), None)
        if blocked is not None:  # mkdir would say only "File exists"
            raise argparse.ArgumentTypeError(f"cannot write {text}: {blocked} is a file, not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".relkt-write-probe-")
        os.close(fd)
        os.unlink(probe)
        if Path(text).is_dir():
            raise argparse.ArgumentTypeError(f"cannot write {text}: it is a folder")
    except OSError as e:  # a name the file system cannot hold included
        raise argparse.ArgumentTypeError(f"cannot write {text}: {e.strerror or e}") from None
    return text


def xx_en_units(text: str) -> list[str]:
    """The `--xx-en-unit` type: `article,paragraph` -> ["article", "paragraph"]; `none` -> []."""
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    if names == ("none",):
        return []
    bad = [x for x in names if x not in UNITS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"expected units among {', '.join(UNITS)} (or none), got {text!r}")
    return list(dict.fromkeys(names))


def named_specs(items: list[str]) -> dict[str, str]:
    """`--encoder NAME=SPEC` arguments of the report CLIs as {name: spec}; names unique, order kept."""
    specs: dict[str, str] = {}
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec:
            raise ConfigError(f"--encoder {item!r}: expected NAME=SPEC, e.g. student=hub:runs/s/best")
        if name in specs:
            raise ConfigError(f"--encoder: the name {name!r} is used twice")
        specs[name] = spec
    return specs
