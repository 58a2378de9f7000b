"""Machine translation of questions for languages with no parallel data: two optional backends.

- `argos` (argostranslate): `pip install torch==2.13.0 && pip install -r requirements-translate.txt`, plus the argos
  language packages you need (downloaded where you are online). relkt never calls argos's package index: offline it
  retries forever.
- `apertium` (rule-based, offline): Debian/Ubuntu `apt-get install apertium apertium-eng-spa` (English<->Spanish;
  other `apertium-*` pair packages add theirs).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from relkt.errors import RelktError
from relkt.io import atomic_write_json, read_json


class TranslationError(RelktError):
    """A translation backend is missing or lacks a language pair."""


class Translator(Protocol):
    """Anything that translates a list of texts from one language code to another."""

    def translate(self, texts: Sequence[str], source: str, target: str) -> list[str]: ...


class ArgosTranslator:
    """argostranslate with installed language packages only; a missing pair is a clear error."""

    def __init__(self):
        try:
            from argostranslate import translate as argos  # deferred: optional (machine translation only)
        except ImportError:
            raise TranslationError(
                "machine translation needs argostranslate: pip install torch==2.13.0 && "
                "pip install -r requirements-translate.txt (then install the language packages you need)"
            ) from None
        self._argos = argos

    def installed_pairs(self) -> list[tuple[str, str]]:
        pairs = []
        for lang in self._argos.get_installed_languages():
            for t in getattr(lang, "translations_from", []):
                pairs.append((lang.code, t.to_lang.code))
        return sorted(pairs)

    def translate(self, texts: Sequence[str], source: str, target: str) -> list[str]:
        pairs = self.installed_pairs()
        if (source, target) not in pairs:
            listed = ", ".join(f"{a}->{b}" for a, b in pairs) or "none"
            raise TranslationError(
                f"argostranslate has no {source}->{target} package installed (installed: {listed}). Install one "
                f"with argospm or argostranslate.package.install_from_path(PATH_TO_.argosmodel)"
            )
        return [self._argos.translate(t, source, target) for t in texts]


# relkt's ISO 639-1 codes -> Apertium's ISO 639-3 ones.
APERTIUM_CODES = {
    "en": "eng",
    "es": "spa",
    "de": "deu",
    "el": "ell",
    "ru": "rus",
    "ar": "ara",
    "tr": "tur",
    "hi": "hin",
    "vi": "vie",
    "th": "tha",
    "zh": "zho",
    "ro": "ron",
    "fr": "fra",
    "it": "ita",
    "pt": "por",
    "ca": "cat",
}


class ApertiumTranslator:
    """The `apertium` command with its installed language pairs (modes); one process per batch, one text per line."""

    def __init__(self, command: str = "apertium"):
        self.command = shutil.which(command)
        if self.command is None:
            raise TranslationError(
                f"machine translation with Apertium needs the `{command}` command: apt-get install "
                "apertium apertium-eng-spa (or another apertium-* language pair)"
            )

    def mode(self, source: str, target: str) -> str:
        return f"{APERTIUM_CODES.get(source, source)}-{APERTIUM_CODES.get(target, target)}"

    def translate(self, texts: Sequence[str], source: str, target: str) -> list[str]:
        lines = [" ".join(t.split()) for t in texts]  # a newline inside a text would split it in two
        run = subprocess.run(
            [self.command, "-u", self.mode(source, target)],
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            raise TranslationError(
                f"apertium has no {source}->{target} pair ({self.mode(source, target)}): "
                f"{(run.stderr or run.stdout).strip()}"
            )
        out = run.stdout.rstrip("\n").split("\n")
        if len(out) != len(lines):
            raise TranslationError(
                f"apertium {self.mode(source, target)} returned {len(out)} lines for {len(lines)} texts"
            )
        return out


TRANSLATORS = {"argos": ArgosTranslator, "apertium": ApertiumTranslator}


class CachedTranslator:
    """Translate through `backend` once per (source, target, text); the cache file is reused across runs."""

    def __init__(self, backend: Translator, cache_path: str | Path):
        self.backend, self.path = backend, Path(cache_path)
        self.cache: dict[str, str] = read_json(self.path, "translation cache") if self.path.exists() else {}

    def translate(self, texts: Sequence[str], source: str, target: str) -> list[str]:
        key = lambda t: f"{source}\t{target}\t{t}"  # noqa: E731
        missing = list(dict.fromkeys(t for t in texts if key(t) not in self.cache))
        if missing:
            for t, out in zip(missing, self.backend.translate(missing, source, target)):
                self.cache[key(t)] = out
            atomic_write_json(self.path, self.cache)
        return [self.cache[key(t)] for t in texts]
