"""relkt.recipes.comparison.coverage_ablation: students of coverage reports side by side, on hits made by hand."""

import json

import numpy as np
import pytest

from relkt.errors import DataError
from relkt.jobs.pair_coverage import SET_KEY
from relkt.recipes.comparison import coverage_ablation


def write_set(folder, hits: dict):
    """per_item.npz and report.json as relkt coverage writes them: one set, one key."""
    np.savez(folder / "per_item.npz", **hits, **{SET_KEY: np.array(folder.name)})
    (folder / "report.json").write_text(json.dumps({SET_KEY: folder.name}))


def report(folder, student: list[int], zero_shot: list[int]):
    folder.mkdir(parents=True)
    write_set(
        folder,
        {
            "zero-shot|pairs/bn/xx>en": np.array(zero_shot, bool),
            "student|pairs/bn/xx>en": np.array(student, bool),
            "student|pairs/bn/en>xx": np.array(student, bool),  # EN>XX is left out of the table
        },
    )
    return folder


def test_each_run_against_the_first_with_mcnemar(tmp_path):
    # 4 items. zero-shot gets item 0 (25%); today's student items 0, 1 (50%); dense items 1, 2, 3 (75%).
    # dense vs today: only today item 0 (1), only dense items 2, 3 (2): +25.0 points; McNemar's exact p on 1 vs 2
    # discordant pairs = 2 * P(X <= 1 | n = 3, 1/2) = 2 * 4/8 = 1.
    today = report(tmp_path / "today", [1, 1, 0, 0], [1, 0, 0, 0])
    dense = report(tmp_path / "dense", [0, 1, 1, 1], [1, 0, 0, 0])
    table = coverage_ablation({"today": today, "dense": dense})
    assert table.splitlines()[0] == "| item | n | zero-shot | today | dense | dense vs today |"
    assert table.splitlines()[2] == "| pairs/bn/xx>en | 4 | 25.0 | 50.0 | 75.0 | +25.0 (1 / 2, p = 1) |"
    assert "en>xx" not in table


def test_reports_on_other_items_are_refused(tmp_path):
    today = report(tmp_path / "today", [1, 1, 0, 0], [1, 0, 0, 0])
    other = report(tmp_path / "other", [1, 1, 0], [1, 0, 0])
    with pytest.raises(DataError, match="not scored on the same items"):
        coverage_ablation({"today": today, "other": other})
    with pytest.raises(DataError, match="no per-item hits"):
        coverage_ablation({"today": today, "none": tmp_path})


def test_answer_retrieval_rows_are_compared_too(tmp_path):
    """A teach report's qa/LANG/{in,en}_{paragraph,article} hits (--qa-test-dir) are rows of the table: 3 questions,
    the baseline right on 0, the later run on 0, 1, 2 (+66.7; 0 / 2 discordant, exact p = 0.5)."""
    for name, hits in (("a", [1, 0, 0]), ("b", [1, 1, 1])):
        (tmp_path / name).mkdir()
        write_set(
            tmp_path / name,
            {
                "zero-shot|qa/hi/en_article": np.array([0, 0, 0], bool),
                "student|qa/hi/en_article": np.array(hits, bool),
            },
        )
    table = coverage_ablation({"a": tmp_path / "a", "b": tmp_path / "b"})
    assert "| qa/hi/en_article | 3 | 0.0 | 33.3 | 100.0 | +66.7 (0 / 2, p = 0.5) |" in table


def test_a_first_report_without_the_base_encoder_is_one_line(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    write_set(folder, {"a|pairs/bn/xx>en": np.array([1, 0], bool), "student|pairs/bn/xx>en": np.array([1, 1], bool)})
    with pytest.raises(
        DataError, match=r"no hits of an encoder named 'zero-shot' to compare against \(it holds a, student\)"
    ):
        coverage_ablation({"x": folder, "y": folder})
