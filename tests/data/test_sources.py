import urllib.error

import pytest

from relkt.data import sources
from relkt.data.qa_source import QaSource
from relkt.errors import DataError


def test_explicit_dir_beats_env(tiny_data, tmp_path, monkeypatch):
    monkeypatch.setenv("RELKT_DATA_DIR", str(tmp_path / "elsewhere"))
    assert sources.resolve_data_dir(tiny_data) == tiny_data


def test_env_var_and_parent_folder(tiny_data, monkeypatch):
    monkeypatch.setenv("RELKT_DATA_DIR", str(tiny_data.parent))  # the parent holding xquad-r/
    assert QaSource.open(sources.resolve_data_dir()).path == tiny_data


def test_cache_is_used_before_download(tiny_data, tmp_path, monkeypatch):
    monkeypatch.delenv("RELKT_DATA_DIR", raising=False)
    monkeypatch.setenv("RELKT_CACHE_DIR", str(tiny_data.parent))
    assert sources.resolve_data_dir() == tiny_data


def test_failed_download_says_how_to_point_at_local_data(tmp_path, monkeypatch):
    monkeypatch.delenv("RELKT_DATA_DIR", raising=False)
    monkeypatch.setenv("RELKT_CACHE_DIR", str(tmp_path / "cache"))
    requested = []

    def offline(url, timeout):
        requested.append(url)
        raise urllib.error.URLError("network unreachable")

    monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
    with pytest.raises(DataError, match=r"could not download XQuAD-R .*--data-dir.*RELKT_DATA_DIR"):
        sources.resolve_data_dir()
    assert requested == [sources.LAREQA_RAW_URL.format(lang="ar")]
    assert not list((tmp_path / "cache" / "xquad-r").glob("*.json"))  # nothing half-written
