"""One way to score a model: a relkt export gives the same numbers named `hub:DIR` or `muse:DIR`; a run records where
its data came from, so a later shell without $RELKT_DATA_DIR finds it."""

from __future__ import annotations

import json

import yaml

from relkt import api
from relkt.analysis.scoring_encoder import as_relkt_export
from relkt.config import PoolSection
from relkt.data import sources
from relkt.encoders.export import export_encoder
from tests.helpers.runs import tiny_config
from tests.helpers.tiny_muse import tiny_muse_encoder


def test_a_relkt_export_scores_the_same_named_hub_or_muse(synthetic_data, tmp_path):
    export_encoder(tiny_muse_encoder(seed=2, max_length=8), tmp_path / "best")  # exported cutting texts at 8 pieces
    assert as_relkt_export(f"hub:{tmp_path / 'best'}") == f"muse:{tmp_path / 'best'}"
    data = PoolSection(data_dir=str(synthetic_data))
    by_hub = api.score(f"hub:{tmp_path / 'best'}", data, "all", xx_en_units=["article"], progress=False)
    by_muse = api.score(f"muse:{tmp_path / 'best'}", data, "all", xx_en_units=["article"], progress=False)
    for key in ("xx_en_article/de/P@1", "lareqa/mAP", "xx_en/P@1"):
        assert by_hub.metric(key) == by_muse.metric(key)


def test_a_run_names_its_data_folder_when_the_environment_gave_it(synthetic_data, tmp_path, monkeypatch):
    from relkt.cli import train_teacher

    monkeypatch.setenv("RELKT_DATA_DIR", str(synthetic_data))
    cfg = tiny_config(tmp_path, synthetic_data, **{"mining.online_epochs": 0})
    config = yaml.safe_load(cfg.read_text())
    config["data"].pop("data_dir")
    cfg.write_text(yaml.safe_dump(config))
    assert train_teacher.main(["--config", str(cfg)]) == 0
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert saved["data"]["data_dir"] == str(synthetic_data.resolve())
    monkeypatch.delenv("RELKT_DATA_DIR")
    monkeypatch.setenv("RELKT_CACHE_DIR", str(tmp_path / "no-cache"))
    from relkt.cli import evaluate

    out = tmp_path / "scores.json"
    args = ["--config", str(tmp_path / "run" / "config.yaml"), "--split", "dev", "--output", str(out), "--no-progress"]
    assert evaluate.main(args) == 0  # a new shell: no $RELKT_DATA_DIR, nothing cached, nothing downloaded
    assert json.loads(out.read_text())["lareqa"]
    assert not (tmp_path / "no-cache").exists()


def test_an_offline_download_leaves_no_empty_cache_folder(tmp_path, monkeypatch):
    def offline(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
    target = tmp_path / "cache" / "xquad-r"
    try:
        sources.download_xquad_r(target)
    except Exception as e:  # the DataError saying to pass --data-dir
        assert "could not download XQuAD-R" in str(e)
    assert not target.exists()
