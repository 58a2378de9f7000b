"""How far each language's XX->EN hits are from those of its questions' English originals, for one model."""

from __future__ import annotations

import numpy as np

from relkt.analysis.significance import mcnemar


def gap_to_english(lang: np.ndarray, qas_id: np.ndarray, hit: np.ndarray) -> dict[str, dict]:
    """Per non-English question language X: P@1 of X's questions, P@1 of the same questions asked in English, the
    questions only English / only X gets right, and McNemar's p.

    Stage 2's question term puts S(q_x) on T(q_en): a student that did so exactly would score X's questions as the
    teacher scores their English originals. So on a teacher's per-question file the English column is how far that
    term alone can take X, and the gap is the room left (the XX->EN rows of `relkt evaluate`'s
    `*.per_question.npz`: `lang`, `qas_id`, one `*_hit1` array). Questions of X with no English original in the
    file are left out; `n_questions` counts the pairs scored.
    """
    lang, qas_id, hit = np.asarray(lang).astype(str), np.asarray(qas_id).astype(str), np.asarray(hit) > 0
    english = lang == "en"
    if not english.any():
        raise ValueError("no English questions: the gap to English needs the English originals scored in the same file")
    order = np.argsort(qas_id[english])
    en_ids, en_hits = qas_id[english][order], hit[english][order]
    out = {}
    for x in sorted(set(lang.tolist()) - {"en"}):
        sel = (lang == x) & np.isin(qas_id, en_ids)
        if not sel.any():
            continue
        x_hit, en_hit = hit[sel], en_hits[np.searchsorted(en_ids, qas_id[sel])]
        test = mcnemar(en_hit, x_hit)
        out[x] = {
            "P@1": float(x_hit.mean()),
            "english_P@1": float(en_hit.mean()),
            "gap": float(en_hit.mean() - x_hit.mean()),
            "only_english": test["only_a"],
            "only_x": test["only_b"],
            "p_value": test["p_value"],
            "n_questions": int(len(x_hit)),
        }
    return out
