"""Figures for the coverage report (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from relkt.io import atomic_file


def _plt():
    import matplotlib  # deferred: heavy, loaded only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred: heavy (after choosing the Agg backend)

    return plt


def heatmap(
    matrix: np.ndarray,
    langs: list[str],
    title: str,
    vmin: float = 0.0,
    vmax: float = 1.0,
    cmap: str = "viridis",
    xlabel: str = "answer language",
    ylabel: str = "question language",
) -> bytes:
    """A language x language matrix with each cell's value (in %) written in it (paper Fig. 4), as PNG."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * len(langs), 0.8 + 0.5 * len(langs)))
    im = ax.imshow(matrix, vmin=vmin, vmax=vmax, cmap=cmap)
    ax.set_xticks(range(len(langs)), langs)
    ax.set_yticks(range(len(langs)), langs)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    span = vmax - vmin
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            if np.isfinite(matrix[i, j]):
                dark = (
                    (matrix[i, j] - vmin) < 0.5 * span
                    if cmap == "viridis"
                    else abs(matrix[i, j]) > 0.5 * max(abs(vmin), abs(vmax))
                )
                ax.text(
                    j,
                    i,
                    f"{100 * matrix[i, j]:.0f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if dark else "black",
                )
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    return _png(plt, fig)


def language_distribution(dist: np.ndarray, langs: list[str], title: str) -> bytes:
    """Stacked bars: share of each candidate language in the top-k, per question language (paper Fig. 6), as PNG."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(1.5 + 0.5 * len(langs), 4))
    bottom = np.zeros(len(langs))
    colors = plt.get_cmap("tab20")(np.linspace(0, 1, len(langs)))
    for j, lang in enumerate(langs):
        ax.bar(range(len(langs)), dist[:, j], bottom=bottom, color=colors[j], label=lang)
        bottom += np.nan_to_num(dist[:, j])
    ax.set_xticks(range(len(langs)), langs)
    ax.set_xlabel("question language")
    ax.set_ylabel("share of the top-k")
    ax.set_title(title, fontsize=10)
    ax.legend(title="candidate", fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    return _png(plt, fig)


def pca_scatter(points: np.ndarray, langs: np.ndarray, kinds: np.ndarray, title: str) -> bytes:
    """Questions (o) and candidates (x) of two languages in the first two principal components (paper Fig. 5), as
    PNG."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 4.5))
    for lang, color in zip(sorted(set(langs)), ("tab:blue", "tab:orange", "tab:green", "tab:red")):
        for kind, marker in (("question", "o"), ("candidate", "x")):
            m = (langs == lang) & (kinds == kind)
            ax.scatter(points[m, 0], points[m, 1], s=8, marker=marker, color=color, alpha=0.6, label=f"{lang} {kind}s")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _png(plt, fig)


def language_curves(history: list[dict]) -> tuple[str, dict[str, np.ndarray]]:
    """Each language's dev curve from a run's evaluations: `dev/xx_en/LANG/P@1` (else `dev/lareqa/LANG/mAP`,
    `dev/corpus/LANG/P@1`), the family's name and {lang: values, NaN where an evaluation lacks it}."""
    for family, pattern in (
        ("xx_en P@1", re.compile(r"^dev/xx_en/([a-z]{2,3})/P@1$")),
        ("lareqa mAP", re.compile(r"^dev/lareqa/([a-z]{2,3})/mAP$")),
        ("corpus P@1", re.compile(r"^dev/corpus/([a-z]{2,3})/P@1$")),
    ):
        langs = sorted({m.group(1) for h in history for k in h if (m := pattern.match(k))})
        if langs:
            key = pattern.pattern.replace("^", "").replace("$", "").replace("([a-z]{2,3})", "{}").replace("\\", "")
            return family, {lang: np.array([h.get(key.format(lang), np.nan) for h in history], float) for lang in langs}
    return "", {}


def curves_figure(history: list[dict], primary_metric: str, title: str, train_log: list[dict] | None = None):
    """The figure `training_curves` writes: the dev primary metric (best marked); one line a language of the dev
    languages (what a student is taught shows here); the loss and each of its terms on axes of their own (a total
    near 2,000 and terms near 1 cannot share one); the learning rate always (log scale when it changed). Languages in
    tab10's ten colours a reader tells apart, a new line style each time they run out (never tab20's pastel pairs).
    Legends sit outside the axes, in as many columns as the languages need."""
    plt = _plt()
    dense = train_log if train_log else history
    steps = np.array([h["step"] for h in history], dtype=float)
    dense_steps = np.array([h["step"] for h in dense], dtype=float)
    terms = sorted({k for h in dense for k in h if k.startswith("train/")}, key=lambda k: (k != "train/loss", k))
    rate = np.array([h.get("learning_rate", np.nan) for h in dense], dtype=float)
    has_rate = bool(np.isfinite(rate).any())
    rate_changes = has_rate and np.nanmax(rate) != np.nanmin(rate)
    family, per_lang = language_curves(history)
    term_rows = -(-len(terms) // 3)
    rows = 1 + bool(per_lang) + term_rows + has_rate
    fig = plt.figure(figsize=(9, 2.3 * rows + 0.6))
    grid = fig.add_gridspec(rows, 3)
    row = 0
    ax = fig.add_subplot(grid[row, :])
    primary = np.array([h.get("primary", np.nan) for h in history], dtype=float)
    ax.plot(steps, primary, marker="o", ms=3, color="tab:blue")
    if np.isfinite(primary).any():
        best = int(np.nanargmax(primary))
        ax.plot(steps[best], primary[best], marker="*", ms=12, color="tab:red", label=f"best {primary[best]:.4f}")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_ylabel(f"dev {primary_metric}", fontsize=8)
    ax.set_title(title, fontsize=10, wrap=True)
    row += 1
    if per_lang:
        ax = fig.add_subplot(grid[row, :])
        ax.set_gid("languages")
        palette, styles = plt.get_cmap("tab10"), ("-", "--", ":", "-.")
        for k, (lang, values) in enumerate(per_lang.items()):
            style = styles[(k // palette.N) % len(styles)]
            ax.plot(steps, values, marker="o", ms=2, label=lang, color=palette(k % palette.N), linestyle=style)
        ax.set_ylabel(f"dev {family}\nby language", fontsize=8)
        ax.legend(fontsize=7, ncol=max(1, -(-len(per_lang) // 8)), loc="upper left", bbox_to_anchor=(1.01, 1.0))
        row += 1
    for n, k in enumerate(terms):
        ax = fig.add_subplot(grid[row + n // 3, n % 3])
        values = np.array([h.get(k, np.nan) for h in dense], dtype=float)
        ax.plot(dense_steps, values, color="tab:purple" if k == "train/loss" else "tab:gray")
        ax.set_title(k[len("train/") :], fontsize=8)
        ax.tick_params(labelsize=7)
    row += term_rows
    if has_rate:
        ax = fig.add_subplot(grid[row, :])
        ax.set_gid("learning rate")
        ax.plot(dense_steps, rate, drawstyle="steps-post", color="tab:green")
        if rate_changes:
            ax.set_yscale("log")
        else:
            ax.set_title(f"constant {np.nanmax(rate):.3g}", fontsize=8)
        ax.set_ylabel("learning rate", fontsize=8)
    fig.axes[-1].set_xlabel("step")
    fig.tight_layout()
    return fig


def training_curves(
    history: list[dict], primary_metric: str, title: str, path: Path, train_log: list[dict] | None = None
) -> Path:
    """A run's curves (`curves_figure`) as one PNG. The loss and rate come from `train_log` (every few steps) when it
    has entries, else from the evaluations' records."""
    return _save(_plt(), curves_figure(history, primary_metric, title, train_log), path)


def _png(plt, fig) -> bytes:
    """The figure as PNG bytes (written by the caller with the files it belongs with)."""
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")  # titles and outside legends kept whole
    finally:
        plt.close(fig)
    return buffer.getvalue()


def _save(plt, fig, path: Path) -> Path:
    """Write the figure as PNG atomically (a failed write is a WriteError naming `path`; nothing half-drawn stays)."""
    try:
        with atomic_file(path, "wb") as f:
            fig.savefig(f, format="png", dpi=110, bbox_inches="tight")  # titles and outside legends kept whole
    finally:
        plt.close(fig)
    return Path(path)


def before_after_bars(panels: dict[str, dict[str, list[float]]], langs: list[str], title: str) -> bytes:
    """One panel per task, as PNG: languages on the x axis, one bar per encoder (P@1 in %), so a rise reads at a glance.
    `panels`: {panel title: {encoder name: [value per language, NaN where not measured]}}."""
    plt = _plt()
    fig, axes = plt.subplots(len(panels), 1, figsize=(1.5 + 0.75 * len(langs), 2.6 * len(panels)), squeeze=False)
    for ax, (panel, series) in zip(axes[:, 0], panels.items()):
        width = 0.8 / max(len(series), 1)
        for k, (name, values) in enumerate(series.items()):
            x = np.arange(len(langs)) + (k - (len(series) - 1) / 2) * width
            ax.bar(x, 100 * np.asarray(values, dtype=float), width, label=name)
        ax.set_xticks(range(len(langs)), langs)
        ax.set_ylabel("P@1 (%)")
        ax.set_ylim(0, 118)  # the band above 100 holds the legend, clear of every bar
        ax.set_yticks(range(0, 101, 20))
        ax.set_title(panel, fontsize=10)
        ax.legend(fontsize=8, loc="upper left", ncol=len(series), frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return _png(plt, fig)
