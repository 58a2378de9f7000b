"""A student's curves.png: one dev line a language in colours told apart, each loss term on its own axes, the
learning rate always drawn."""

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
    flat = next(ax for ax in fig.axes if ax.get_gid() == "learning rate")  # a flat rate drawn too, and said so
    assert flat.get_title() == "constant 0.0001" and flat.get_yscale() == "linear"
    plt.close(fig)
    evals, log = history(rate_moves=True)
    fig = curves_figure(evals, "lareqa/mAP", "a student", log)
    assert next(ax for ax in fig.axes if ax.get_gid() == "learning rate").get_yscale() == "log"
    plt.close(fig)
    assert training_curves(evals, "lareqa/mAP", "a student", tmp_path / "curves.png", log).stat().st_size > 10_000


def test_eleven_languages_are_ten_colours_then_a_new_line_style():
    import matplotlib.pyplot as plt

    langs = ["ar", "de", "el", "en", "es", "hi", "ru", "th", "tr", "vi", "zh"]
    evals = [{"step": s, "primary": 0.5, **{f"dev/xx_en/{x}/P@1": 0.5 for x in langs}} for s in (0, 100)]
    fig = curves_figure(evals, "lareqa/mAP", "eleven", None)
    lines = next(ax for ax in fig.axes if ax.get_gid() == "languages").get_lines()
    looks = {(tuple(np.round(line.get_color(), 3)), line.get_linestyle()) for line in lines}
    assert len(looks) == 11 and {line.get_linestyle() for line in lines[:10]} == {"-"}
    assert lines[10].get_linestyle() == "--" and lines[10].get_color() == lines[0].get_color()
    plt.close(fig)
