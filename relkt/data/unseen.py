"""A benchmark must be unseen: refuse a test source that shares an article, a context or a question id with the
training source (what a leak looks like in SQuAD-format data: the same article, a paragraph copied, a question kept)."""

from __future__ import annotations

from relkt.data.records import LanguageData
from relkt.data.text import normal_text
from relkt.errors import DataError


def _keys(datas: list[LanguageData]) -> dict[str, dict[str, str]]:
    """kind -> {key: the file it was read from}: article titles, contexts, question ids."""
    out: dict[str, dict[str, str]] = {"article": {}, "context": {}, "question id": {}}
    for d in datas:
        for c in d.candidates:
            out["article"].setdefault(normal_text(c.article), str(d.path))
            out["context"].setdefault(normal_text(c.context), str(d.path))  # a doubled space is the same context
        for q in d.questions:
            out["article"].setdefault(normal_text(q.article), str(d.path))
            out["question id"].setdefault(q.qas_id, str(d.path))
    return out


def check_unseen(
    train: list[LanguageData],
    test: list[LanguageData],
    train_name: str,
    test_name: str,
    fix: str = "remove them from one side, or score the training source's own test split (no data.test_dir)",
) -> None:
    """DataError naming the first test article, context or question id (and how many) that the training data holds;
    `fix` says what the user can do."""
    seen, scored = _keys(train), _keys(test)
    for kind in ("article", "question id", "context"):
        shared = sorted(set(seen[kind]) & set(scored[kind]))
        if shared:
            more = f", and {len(shared) - 1} more" if len(shared) > 1 else ""
            first = shared[0] if kind != "context" else shared[0][:60] + ("..." if len(shared[0]) > 60 else "")
            raise DataError(
                f"test source {test_name}: {kind} {first!r} ({scored[kind][shared[0]]}) also occurs in the "
                f"training source {train_name} ({seen[kind][shared[0]]}){more}; a test set must be unseen: {fix}"
            )
