"""The teacher's alignment task's data: translation pairs (a sentence in X, its English twin) from `{lang}.tsv` pair
files, none that a test source holds, and each language's held-out pairs for the dev metric."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from relkt.data.parallel_corpus import ParallelCorpus, pair_languages, read_pairs
from relkt.data.text import normal_text
from relkt.errors import ConfigError, DataError

PAIRS_PER_LANG = 1000  # sentences a language's mean is taken over  # a language's bias is learned from this many pairs


@dataclass
class AlignmentPairs:
    """Every language's training pairs in one table (`en[i]`, `xx[i]`, `lang_of[i]` an index into `langs`), each
    English text's id (`en_id`: equal English texts share one, so twins are never each other's negatives), the
    held-out pairs by language (`dev`) and how many pairs a test source's texts removed (`dropped`)."""

    langs: list[str]
    en: np.ndarray
    xx: np.ndarray
    lang_of: np.ndarray
    en_id: np.ndarray
    dev: dict[str, ParallelCorpus] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)

    @classmethod
    def read(
        cls,
        folder: str,
        langs: Sequence[str],
        per_lang: int,
        dev_pairs: int,
        test_texts: Collection[str],
        seed: int,
        more: Mapping[str, int] | None = None,
    ) -> AlignmentPairs:
        """`per_lang` training pairs a language (all with 0; drawn with `seed`) from `folder`'s pair files, after
        `dev_pairs` are held out by document (`ParallelCorpus.split`) and every pair whose English or X side is a
        text of a test source (`test_texts`, in the normal form) is removed. Then each folder of `more` (folder ->
        pairs a language, 0 = all) adds its training rows for the languages it has a file of (none held out). A
        question file's rows not marked `train` never train, and a training pair holding one of them is refused."""
        test = {normal_text(t) for t in test_texts}
        en, xx, lang_of, dev, dropped = [], [], [], {}, {}
        scored: dict[str, str] = {}  # question-file rows kept for scoring: text -> file:line
        for lang in langs:
            if lang == "en":
                raise DataError(f"align.langs: en is the side every pair shares; name the other languages ({folder})")
        sources = [(folder, per_lang, dev_pairs), *((f, n, 0) for f, n in (more or {}).items())]
        for where, (path, per_folder, held) in enumerate(sources):
            have = set(pair_languages(path))
            wanted = [lang for lang in langs if lang in have] if where else list(langs)
            if not wanted:
                raise DataError(
                    f"align.more_pairs: {path} holds no pair file of a language kept aligned ({', '.join(langs)}; "
                    f"it has {', '.join(sorted(have)) or 'none'})"
                )
            for lang in wanted:
                k = langs.index(lang)
                pairs = read_pairs(path, lang)
                if pairs.splits is not None:
                    kept = pairs.held_out()
                    scored.update({x: f"{pairs.path}:{n}" for x, n in zip(kept.xx, kept.lines)})
                train, lang_dev = pairs.split(held)
                if not where:
                    dev[lang] = lang_dev
                keep = [i for i in range(len(train)) if train.en[i] not in test and train.xx[i] not in test]
                dropped[lang] = dropped.get(lang, 0) + len(train) - len(keep)
                if not keep:
                    raise DataError(
                        f"{pairs.path}: no training pair left once the held-out, scored and test texts are out"
                    )
                if per_folder and len(keep) > per_folder:
                    draw = np.random.default_rng([seed, k, 31] + ([where] if where else []))
                    keep = sorted(draw.choice(keep, per_folder, replace=False).tolist())
                en += [train.en[i] for i in keep]
                xx += [train.xx[i] for i in keep]
                lang_of += [k] * len(keep)
        for text in xx:
            if text in scored:
                raise DataError(
                    f"align: a training pair holds {text!r}, a question kept for scoring at {scored[text]}: drop it "
                    "from the pair folders, or mark that row `train`"
                )
        first: dict[str, int] = {}
        en_id = np.array([first.setdefault(t, len(first)) for t in en], dtype=np.int64)
        return cls(
            list(langs),
            np.array(en, dtype=object),
            np.array(xx, dtype=object),
            np.array(lang_of, dtype=np.int64),
            en_id,
            dev,
            dropped,
        )

    def __len__(self) -> int:
        return len(self.en)

    def batches(self, n: int, batch_size: int, mono: bool, rng: np.random.Generator) -> list[np.ndarray]:
        """`n` batches of pair indices: each of one language (`mono`, the languages taken in turn) or drawn from all;
        a language's pairs are drawn without replacement until each was drawn once."""
        out: list[np.ndarray] = []
        if mono:
            queues = {k: np.zeros(0, np.int64) for k in range(len(self.langs))}
            for b in range(n):
                k = b % len(self.langs)
                rows = np.flatnonzero(self.lang_of == k)
                while len(queues[k]) < batch_size:
                    queues[k] = np.concatenate([queues[k], rng.permutation(rows)])
                out.append(queues[k][:batch_size])
                queues[k] = queues[k][batch_size:]
            return out
        queue = np.zeros(0, np.int64)
        for _ in range(n):
            while len(queue) < batch_size:
                queue = np.concatenate([queue, rng.permutation(len(self))])
            out.append(queue[:batch_size])
            queue = queue[batch_size:]
        return out


def language_pairs(
    pairs_dir: str, langs: Sequence[str] | None, exclude_texts: Collection[str], per_lang: int, seed: int
) -> AlignmentPairs:
    """The pairs a language's bias is learned from: `per_lang` a language of `pairs_dir` for those of `langs` with a
    file (None: every file's), none holding a text of `exclude_texts` (the scored texts)."""
    have = set(pair_languages(pairs_dir))
    chosen = sorted(have if langs is None else {lang for lang in langs if lang in have and lang != "en"})
    if not chosen:
        raise ConfigError(
            f"language pairs: {pairs_dir} has no pair file for {', '.join(langs or []) or 'any language'}"
        )
    return AlignmentPairs.read(pairs_dir, chosen, per_lang, 0, exclude_texts, seed)
