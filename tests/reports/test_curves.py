"""A student's curves.png: one dev line a language, each loss term on its own axes, the rate only when it moved."""

from __future__ import annotations

import numpy as np

from relkt.reports.plots import curves_figure, training_curves

LANGS = ["de", "el", "en", "hi", "vi"]


def history(rate_moves: bool) -> tuple[list[dict], list[dict]]:
    rng = np.random.default_rng(0)
    evals = [
        {"step": s, "primary": 0.2 + s / 1e4, **{f"dev/xx_en/{lang}/P@1": rng.uniform() for lang in LANGS}}
        for s in range(0, 1000, 100)
    ]
    log = [
        {
            "step": s,
            "train/loss": 2000.0 - s,
            "train/q_en": 1.0,
            "train/doc": 0.5,
            "learning_rate": 1e-4 if not rate_moves or s < 500 else 5e-5,
        }
        for s in range(0, 1000, 10)
    ]
    return evals, log


def test_one_line_a_language_and_each_term_on_its_own_axes(tmp_path):
    import matplotlib.pyplot as plt

    evals, log = history(rate_moves=False)
    fig = curves_figure(evals, "lareqa/mAP", "a student", log)
    langs = next(ax for ax in fig.axes if ax.get_gid() == "languages")
    assert sorted(line.get_label() for line in langs.get_lines()) == LANGS
    titles = [ax.get_title() for ax in fig.axes]
    assert {"loss", "q_en", "doc"} <= set(titles)  # a total near 2,000 apart from terms near 1
    assert not any(ax.get_ylabel() == "learning rate" for ax in fig.axes)  # a flat rate is not drawn
    plt.close(fig)
    evals, log = history(rate_moves=True)
    fig = curves_figure(evals, "lareqa/mAP", "a student", log)
    assert any(ax.get_ylabel() == "learning rate" for ax in fig.axes)
    plt.close(fig)
    assert training_curves(evals, "lareqa/mAP", "a student", tmp_path / "curves.png", log).stat().st_size > 10_000
