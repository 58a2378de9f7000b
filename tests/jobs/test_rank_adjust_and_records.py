"""Language-aware ranking through the scorer (raw and adjusted two results, the setting chosen on the dev split, never
on the test questions), a record's round trip, a comparison between two records whose results files are gone, and the
README's records table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from relkt import api
from relkt.config import PoolSection
from relkt.errors import ConfigError, DataError
from relkt.jobs import record as rec
from relkt.jobs.scoring import adjusted_path, per_question_path
from relkt.metrics import language_aware_ranking as lar
from relkt.reports.records_table import BEGIN, END, mismatched_links, records_table, with_table
from tests.helpers.data import make_synthetic_lareqa


@pytest.fixture
def three_langs(tmp_path) -> Path:
    return make_synthetic_lareqa(tmp_path / "pool", n_articles=20, langs=("en", "de", "fr"))


def test_the_adjusted_ranking_is_a_second_result_beside_the_raw_one(three_langs, tmp_path):
    data = PoolSection(data_dir=str(three_langs))
    plain = api.score("ngram", data, "all", xx_en_units=[], progress=False)
    out = tmp_path / "scores.json"
    both = api.score("ngram", data, "all", xx_en_units=[], progress=False, rank_adjust="center", output=out)
    assert both.results["lareqa"]["mAP"] == plain.results["lareqa"]["mAP"]  # the raw row unchanged
    np.testing.assert_array_equal(both.per_question["AP"], plain.per_question["AP"])
    assert both.adjusted.results["rank_adjust"] == {"mode": "fixed", "chosen": "center"}
    for path in (out, adjusted_path(out)):
        assert path.is_file() and per_question_path(path).is_file()
    assert json.loads(adjusted_path(out).read_text())["lareqa"]["mAP"] == both.adjusted.results["lareqa"]["mAP"]


def test_auto_on_the_test_split_chooses_on_dev_questions_only(three_langs, monkeypatch):
    seen = {}
    choose = lar.choose_setting

    def spy(q, c, gold, langs, grid=lar.GRID):
        seen["n"] = len(q)
        return choose(q, c, gold, langs, grid)

    monkeypatch.setattr(lar, "choose_setting", spy)
    data = PoolSection(data_dir=str(three_langs), split_fractions=(0.4, 0.3, 0.3))
    result = api.score("ngram", data, "test", xx_en_units=[], progress=False, rank_adjust="auto")
    dev = api.score("ngram", data, "dev", xx_en_units=[], progress=False)
    assert seen["n"] == len(dev.per_question["qas_id"])  # the dev pool's questions ...
    assert not set(dev.per_question["qas_id"]) & set(result.per_question["qas_id"])  # ... none of them a test one
    assert result.adjusted.results["rank_adjust"]["mode"] == "dev"


def test_auto_on_a_whole_pool_is_cross_fitted(three_langs):
    result = api.score(
        "ngram", PoolSection(data_dir=str(three_langs)), "all", xx_en_units=[], progress=False, rank_adjust="auto"
    )
    choice = result.adjusted.results["rank_adjust"]
    assert choice["mode"] == "crossfit" and {"half_0", "half_1"} <= set(choice)
    assert choice["half_0"]["questions"] + choice["half_1"]["questions"] == len(result.per_question["qas_id"])


def test_a_bad_setting_is_refused_before_anything_loads(three_langs):
    with pytest.raises(ConfigError, match="rank_adjust"):
        api.score("ngram", PoolSection(data_dir=str(three_langs)), "all", progress=False, rank_adjust="nearest:3")


def scored_record(data_dir: Path, tmp_path: Path, model: str, rank_adjust: str = "none") -> Path:
    """The ngram encoder scored on the pool whole (the language-aware ranking's row with `rank_adjust`), recorded."""
    out = tmp_path / f"{model}.json"
    data = PoolSection(data_dir=str(data_dir))
    result = api.score(
        "ngram", data, "all", xx_en_units=["article"], progress=False, output=out, rank_adjust=rank_adjust
    )
    scored = result if rank_adjust == "none" else result.adjusted
    record = rec.make_record(
        scored.results,
        scored.per_question,
        setup="toy",
        model=model,
        pool="xquad-r",
        chapter="docs/results/toy.md",
        command="relkt evaluate ...",
        commit="abc",
    )
    return rec.write_record(tmp_path / "records" / "toy" / f"{model}_xquad-r.json", record)


def test_a_record_round_trips_and_stays_small(three_langs, tmp_path):
    path = scored_record(three_langs, tmp_path, "teacher")
    results, per_question = rec.read_record(path)
    z = np.load(per_question_path(tmp_path / "teacher.json"))
    np.testing.assert_array_equal(per_question["qas_id"], z["qas_id"])
    np.testing.assert_array_equal(per_question["lang"], z["lang"])
    np.testing.assert_allclose(per_question["AP"], z["AP"], atol=1 / rec.AP_LEVELS)
    np.testing.assert_array_equal(per_question["xx_en_article_hit1"], z["xx_en_article_hit1"])
    np.testing.assert_array_equal(np.isnan(per_question["bitext_hit1"]), np.isnan(z["bitext_hit1"]))
    record = rec.load_record(path)
    m = record["metrics"]["lareqa/mAP"]
    assert m["low"] <= m["value"] <= m["high"] and m["value"] == pytest.approx(results["lareqa"]["mAP"])
    assert record["data"]["sha256"] and record["commit"] == "abc" and path.stat().st_size < rec.MAX_RECORD_BYTES


def test_an_edited_record_is_refused(three_langs, tmp_path):
    path = scored_record(three_langs, tmp_path, "teacher")
    record = json.loads(path.read_text())
    record["per_question"]["qas_id"] = rec.pack_array("qas_id", np.array(["x"] * record["per_question"]["n"]))
    path.write_text(json.dumps(record))
    with pytest.raises(DataError, match="key_sha256"):
        rec.read_record(path)


def test_two_records_compare_with_their_ci_after_the_runs_are_gone(three_langs, tmp_path, capsys):
    from trainers.compare import main as compare

    a = scored_record(three_langs, tmp_path, "teacher")
    b = scored_record(three_langs, tmp_path, "student", "center")
    for path in tmp_path.glob("*.json"):  # every results file gone, and its per-question scores
        path.unlink()
        per_question_path(path).unlink()
    assert compare([str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "toy:student:xquad-r vs toy:teacher:xquad-r" in text and "95% CI" in text
    assert not (a.parent / "comparison.md").exists()  # records are compared in print, never written beside
    assert "toy:teacher" in api.compare([a, b])


def test_the_records_table_is_drawn_from_the_records_and_fails_when_one_changes(three_langs, tmp_path):
    from relkt.cli import tables

    root = tmp_path / "repo"
    shutil.copytree(scored_record(three_langs, tmp_path, "teacher").parent.parent, root / "docs/results/records")
    for name in tables.TABLE_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# title\n\n{BEGIN}\n{END}\n\nafter\n")
    assert tables.main(["--root", str(root), "--check"]) == 1  # empty tables: not what the records give
    assert tables.main(["--root", str(root)]) == 0
    assert tables.main(["--root", str(root), "--check"]) == 0
    text = (root / "README.md").read_text()
    assert "| `toy` | teacher | XQuAD-R whole | raw |" in text and text.endswith("after\n")
    path = root / "docs/results/records/toy/teacher_xquad-r.json"
    record = json.loads(path.read_text())
    record["metrics"]["lareqa/mAP"]["value"] += 0.01
    path.write_text(json.dumps(record))
    assert tables.main(["--root", str(root), "--check"]) == 1


def test_a_table_is_written_only_between_its_markers():
    with pytest.raises(ValueError, match="no records table markers"):
        with_table("no markers here", "| t |", "README.md")
    assert records_table([]).count("\n") == 1  # the header alone


def test_a_link_whose_text_names_another_file_is_found():
    assert mismatched_links("[in_batch_teacher](docs/results/rows_student.md)") == [
        "[in_batch_teacher](docs/results/rows_student.md)"
    ]
    assert mismatched_links("[rows_student](docs/results/rows_student.md#its-bars) [the guide](docs/guide.md)") == []
