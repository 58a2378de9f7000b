"""Per-question scores (relkt evaluate's `.per_question.npz` arrays: `qas_id`, `lang`, `AP`, `xx_en_UNIT_hit1`, ...)
joined from several scorings and summarised: article folds pooled (each question scored once, by the fold that never
trained on it), or student groups combined (each language scored by its own group's student)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from relkt.errors import DataError

Scores = Mapping[str, np.ndarray]


def concatenate_scores(parts: Sequence[Scores], where: str) -> dict[str, np.ndarray]:
    """The parts' rows one after another, on the arrays every part holds; a question (qas_id, lang) in two parts is
    an error (folds that overlap, or a language given two students)."""
    keys = set.intersection(*(set(p) for p in parts))
    pooled = {k: np.concatenate([p[k] for p in parts]) for k in sorted(keys)}
    key = np.char.add(np.char.add(pooled["qas_id"].astype(str), "\x00"), pooled["lang"].astype(str))
    if len(np.unique(key)) != len(key):
        raise DataError(f"{where}: a question is scored twice (folds that overlap, or a language in two parts)")
    return pooled


def scores_by_language(parts: Mapping[str, Scores], owner: Mapping[str, str], where: str) -> dict[str, np.ndarray]:
    """Each language's rows from the part `owner` names for it (`owner`: language -> part name), e.g. each language
    from its own group's student; a scored language no part owns is an error."""
    langs = sorted(set().union(*(set(p["lang"].tolist()) for p in parts.values())))
    missing = [lang for lang in langs if lang not in owner]
    if missing:
        raise DataError(f"{where}: {', '.join(missing)} is scored but no part owns it")
    kept = [
        {k: v[np.isin(p["lang"], [x for x in langs if owner[x] == name])] for k, v in p.items()}
        for name, p in parts.items()
    ]
    return concatenate_scores(kept, where)


def summarise_scores(pooled: Scores) -> dict:
    """relkt evaluate's JSON layout for what per-question scores hold: LAReQA mAP (all and per language) and XX->EN
    P@1 per unit and language."""
    langs = sorted(set(pooled["lang"].tolist()))
    results = {
        "lareqa": {
            "mAP": float(np.nanmean(pooled["AP"])),
            "n_questions": int(len(pooled["lang"])),
            "per_language": {lang: {"mAP": float(np.nanmean(pooled["AP"][pooled["lang"] == lang]))} for lang in langs},
        }
    }
    for hits in sorted(k for k in pooled if k.startswith("xx_en") and k.endswith("_hit1")):
        results[hits[: -len("_hit1")]] = {
            lang: {
                "P@1": float(pooled[hits][pooled["lang"] == lang].mean()),
                "n_questions": int((pooled["lang"] == lang).sum()),
            }
            for lang in langs
        }
    return results
