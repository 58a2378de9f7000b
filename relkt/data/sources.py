"""Where the LAReQA data comes from: --data-dir, else $RELKT_DATA_DIR, else the cache, else download.

The path only; relkt.data.qa_source reads what lies there."""

from __future__ import annotations

import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from relkt.errors import DataError

XQUAD_R_LANGS = ("ar", "de", "el", "en", "es", "hi", "ru", "th", "tr", "vi", "zh")
LAREQA_RAW_URL = "https://raw.githubusercontent.com/google-research-datasets/lareqa/master/xquad-r/{lang}.json"
ENV_VAR = "RELKT_DATA_DIR"


def cache_dir() -> Path:
    """relkt's download cache: $RELKT_CACHE_DIR, else $XDG_CACHE_HOME/relkt, else ~/.cache/relkt."""
    if os.environ.get("RELKT_CACHE_DIR"):
        return Path(os.environ["RELKT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "relkt"


def download_xquad_r(target: Path, langs: tuple[str, ...] = XQUAD_R_LANGS, timeout: float = 30) -> Path:
    """Fetch XQuAD-R from the LAReQA repository into `target` (atomically per file); `target` is made only once a
    file has arrived, so an offline attempt leaves no empty cache folder behind."""
    for lang in langs:
        dest = target / f"{lang}.json"
        if dest.exists():
            continue
        url = LAREQA_RAW_URL.format(lang=lang)
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                payload = response.read()
        except (urllib.error.URLError, OSError) as e:
            raise DataError(
                f"could not download XQuAD-R ({url}): {e}. relkt found no local copy: pass "
                f"--data-dir DIR (a folder of {{lang}}.json files) or set {ENV_VAR}=DIR."
            ) from None
        target.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target, suffix=".part")
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, dest)
    return target


def resolve_data_dir(data_dir: str | Path | None = None, download: bool = True) -> Path:
    """Find the XQuAD-R folder: explicit argument, then $RELKT_DATA_DIR, then cache, then download."""
    if data_dir is not None and str(data_dir) != "":
        directory = Path(data_dir).expanduser()
        if not directory.exists():
            raise DataError(f"data dir {directory} does not exist")
        return directory
    if os.environ.get(ENV_VAR):
        directory = Path(os.environ[ENV_VAR]).expanduser()
        if not directory.is_dir():
            raise DataError(f"data dir {directory} does not exist (from ${ENV_VAR})")
        return directory
    cached = cache_dir() / "xquad-r"
    if cached.is_dir() and any(cached.glob("*.json")):
        return cached
    if not download:
        raise DataError(f"no data found: pass --data-dir DIR or set {ENV_VAR}=DIR")
    return download_xquad_r(cached)
