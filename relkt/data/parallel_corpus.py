"""General English-X parallel text (`source<TAB>en<TAB>xx` TSV files, e.g. ../shared/data/parallel/{lang}.tsv):
read with every bad row counted and reported by file and line, and split into training pairs and a held-out part
per language that shares no document with them but the one cut at each source's edge (for a dev metric and a
coverage report on pairs the student never trained on)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from relkt.data.text import control_character, has_visible_text, normal_text
from relkt.errors import DataError
from relkt.io import regular_file

log = logging.getLogger("relkt.data")

HEADER = ("source", "en", "xx")
# The column sets a pair file may have (its header names them, in any order): parallel/ and names/ files, and
# xor-questions/ files (XOR-TyDi questions with their English translations).
HEADERS = (HEADER, ("id", "split", "xx", "en"))
# A question file's `split` cell: empty (an evaluation question) or a comma-joined list of these (the question's
# record in the source data set; one text can match several). A row marked `train` is the only kind that trains.
SPLITS = ("train", "dev")


def pair_file(folder: str | Path, lang: str) -> Path:
    """Where a folder of pair files keeps one language's pairs: `{lang}.tsv`."""
    return Path(folder) / f"{lang}.tsv"


def pair_languages(folder: str | Path) -> list[str]:
    """The languages a folder of pair files holds; a DataError when it is not a folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: not a folder (expected {{lang}}.tsv pair files with columns {', '.join(HEADER)})")
    return sorted(p.stem for p in folder.glob("*.tsv"))


@dataclass
class ParallelCorpus:
    """One language's pairs: `en[i]` and `xx[i]` are translations; `source[i]` names where the pair comes from."""

    lang: str
    en: list[str] = field(default_factory=list)
    xx: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    bad_rows: list[str] = field(default_factory=list)  # "FILE:LINE: reason", one per skipped row
    # A question file's `split` cells (None: a file without that column, every row alike) and each row's line
    splits: list[str] | None = None
    lines: list[int] = field(default_factory=list)
    path: str = ""
    rows_read: int = 0  # the file's data rows, bad ones included (what max_bad_share is a share of)

    def __len__(self) -> int:
        return len(self.en)

    def _rows(self, idx: list[int]) -> ParallelCorpus:
        pick = lambda column: [column[i] for i in idx]  # noqa: E731
        splits = None if self.splits is None else pick(self.splits)
        lines = pick(self.lines) if self.lines else []
        return ParallelCorpus(self.lang, pick(self.en), pick(self.xx), pick(self.source), [], splits, lines, self.path)

    def marked_train(self) -> list[bool]:
        """Per row: may it train? Every row of a file without a `split` column; else the rows marked `train`."""
        if self.splits is None:
            return [True] * len(self)
        return ["train" in s.split(",") for s in self.splits]

    def trainable(self) -> ParallelCorpus:
        """The rows that may train (`marked_train`): a question file's `train` rows, every row of another file."""
        return self._rows([i for i, train in enumerate(self.marked_train()) if train])

    def held_out(self) -> ParallelCorpus:
        """The rows a scorer reads: those not marked `train` (every row of a file without a `split` column), the same
        rows for every encoder scored."""
        return self._rows([i for i, train in enumerate(self.marked_train()) if not train or self.splits is None])

    def of_source(self, source: str, where: str = "") -> ParallelCorpus:
        """Every row of one source (the `source` column): a whole source held out as another domain. `where` names
        the setting in the error when the file has none of it."""
        rows = [i for i in range(len(self)) if self.source[i] == source]
        if not rows:
            have = ", ".join(sorted(set(self.source))) or "none"
            raise DataError(f"{self.path}: {where}no pair of the source {source!r} (its sources: {have})")
        return self._rows(rows)

    def split(
        self, dev_pairs: int, held_out_sources: Sequence[str] = (), other_domain: str = ""
    ) -> tuple[ParallelCorpus, ParallelCorpus]:
        """(train, dev), held out by document, never by line: a line's neighbours in a parallel file are the rest of
        its document (news and COVID-19 sets keep their documents' order), so a hashed slice would score sentences
        whose documents trained. With `held_out_sources`, every pair of those sources (the `source` column) is held
        out and none of another (dev: `dev_pairs` of them, or all with 0). Without, `dev_pairs` pairs are held out as
        the last rows of each source, each source giving its share of them (`tail_blocks`): at most one document per
        source is cut between the parts. The slice depends on the file alone, so a resumed or repeated run holds out
        the same pairs. A question file's rows not marked `train` are for scoring only (`held_out`): both parts come
        from its `train` rows, and a `train` row that shares its question text or id with one of the others is
        refused, naming both lines. `other_domain`: a source left out of both parts, whole (`of_source` scores it)."""
        marked = self.marked_train()
        if self.splits is not None:
            self._refuse_overlap(
                [i for i in range(len(self)) if marked[i]], [i for i in range(len(self)) if not marked[i]]
            )
        rows = [i for i in range(len(self)) if marked[i]]
        if other_domain:
            self.of_source(other_domain, "held out as another domain (data.corpus_other_domain): ")
            rows = [i for i in rows if self.source[i] != other_domain]
        if held_out_sources:
            held = [i for i in rows if self.source[i] in set(held_out_sources)]
            if not held:
                have = ", ".join(sorted(set(self.source[i] for i in rows))) or "none"
                raise DataError(
                    f"{self.path}: no pair of the held-out source(s) {', '.join(held_out_sources)} "
                    f"(its sources: {have})"
                )
            dev = set(self.tail_blocks(held, dev_pairs) if dev_pairs else held)
            return self._rows([i for i in rows if i not in set(held)]), self._rows(sorted(dev))
        if dev_pairs and dev_pairs >= len(rows):
            raise DataError(
                f"{self.path}: {dev_pairs} held-out pairs would hold out every one of its {len(rows)} trainable "
                "pairs: nothing would be left to train on, and a report would call pairs a student trained on held "
                "out; hold out fewer (data.corpus_dev_pairs, --dev-pairs)"
            )
        dev = set(self.tail_blocks(rows, dev_pairs))
        return self._rows([i for i in rows if i not in dev]), self._rows(sorted(dev))

    def tail_blocks(self, rows: list[int], n: int) -> list[int]:
        """`n` of `rows` (file order) as the last rows of each source, its share of `n` in proportion to its size
        (largest remainders; ties to the source met first). A question file's `source` cells are ids, not sources:
        its rows are one block."""
        groups: dict[str, list[int]] = {}
        for i in rows:
            groups.setdefault(self.source[i] if self.splits is None else "", []).append(i)
        n = min(n, len(rows))
        exact = [n * len(g) / len(rows) for g in groups.values()]
        share = [int(x) for x in exact]
        by_remainder = sorted(range(len(exact)), key=lambda k: (share[k] - exact[k], k))
        for k in by_remainder[: n - sum(share)]:
            share[k] += 1
        return sorted(i for g, k in zip(groups.values(), share) for i in (g[len(g) - k :] if k else []))

    def _refuse_overlap(self, train: list[int], held: list[int]) -> None:
        text = {self.xx[i]: i for i in held}
        ids = {x: i for i in held for x in self.source[i].split(",") if x}
        for i in train:
            j = text.get(self.xx[i])
            j = j if j is not None else next((ids[x] for x in self.source[i].split(",") if x in ids), None)
            if j is not None:
                raise DataError(
                    f"{self.path}:{self.lines[i]}: a `train` row shares its question or id with line {self.lines[j]}, "
                    "which is held out for scoring; mark one split or drop a line"
                )


def read_pairs(folder: str | Path, lang: str, max_bad_share: float = 0.01) -> ParallelCorpus:
    """One language's pairs from a folder of pair files; a language with no file is an error naming the ones there."""
    path = pair_file(folder, lang)
    if not path.is_file():
        have = pair_languages(folder)
        raise DataError(
            f"{folder}: no pairs for {lang} (no {path.name}); it holds {', '.join(have) or 'no .tsv files'}"
        )
    return read_parallel_tsv(path, lang, max_bad_share)


def read_parallel_tsv(path: str | Path, lang: str, max_bad_share: float = 0.01) -> ParallelCorpus:
    """Read a pair TSV: columns `source, en, xx` (or `id, split, xx, en`, as xor-questions/), named by its header.
        A row with the wrong number of columns, an empty side or bytes that are not UTF-8 is skipped and reported (file
    and line); more than `max_bad_share` of the rows bad is a DataError (the file is probably not what it should be).
    Every cell is read in relkt's normal form (relkt.data.text: NFC, whitespace collapsed); a pair equal to an earlier
    one in it is kept once, and their number reported. A BOM before the header is read as none."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such parallel corpus file (expected {lang}.tsv with columns {', '.join(HEADER)})")
    regular_file(path, "parallel corpus file")  # then streamed line by line below
    corpus, seen, rows, width, names, at = ParallelCorpus(lang, path=str(path)), {}, 0, len(HEADER), HEADER, {}
    id_line: dict[str, tuple[int, str]] = {}
    duplicates = 0  # pairs equal to an earlier one in the normal form (relkt.data.text): an NFD copy is no new pair
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")  # a BOM is no column
            except UnicodeDecodeError as e:
                if number == 1:  # no header, no columns: nothing after it can be read
                    utf16 = raw.startswith((b"\xff\xfe", b"\xfe\xff"))
                    raise DataError(
                        f"{path}:1: not UTF-8 ({e.reason} at byte {e.start})"
                        + ("; a UTF-16 file (its byte-order mark): save it as UTF-8" if utf16 else "")
                    ) from None
                corpus.bad_rows.append(f"{path}:{number}: not UTF-8 ({e.reason} at byte {e.start})")
                rows += 1
                continue
            cells = line.split("\t")
            if number == 1:
                names = tuple(c.strip() for c in cells)
                if names not in HEADERS:
                    raise DataError(
                        f"{path}:1: header {cells!r}; expected the columns "
                        f"{' or '.join(', '.join(h) for h in HEADERS)} (tab-separated)"
                    )
                width, at = len(names), {name: k for k, name in enumerate(names)}
                corpus.splits = [] if "split" in at else None
                continue
            if not line.strip():
                continue
            rows += 1
            if len(cells) != width:
                corpus.bad_rows.append(f"{path}:{number}: {len(cells)} columns, expected {width} ({', '.join(names)})")
                continue
            control = next(filter(None, map(control_character, cells)), None)
            if control:
                corpus.bad_rows.append(f"{path}:{number}: holds a control character ({control}); the line is damaged")
                continue
            cells = [normal_text(c) for c in cells]
            source, en, xx = cells[at.get("source", at.get("id"))], cells[at["en"]], cells[at["xx"]]
            if not has_visible_text(en) or not has_visible_text(xx):
                side = "en" if not has_visible_text(en) else "xx"
                corpus.bad_rows.append(
                    f"{path}:{number}: empty {side} side (nothing but whitespace or invisible marks)"
                )
                continue
            if corpus.splits is not None:
                split = cells[at["split"]]
                if split and not set(split.split(",")) <= set(SPLITS):
                    raise DataError(
                        f"{path}:{number}: split {split!r}; expected empty (an evaluation question) or a comma-joined "
                        f"list of {', '.join(SPLITS)}"
                    )
                for x in (x for x in source.split(",") if x):  # one id, one question (translated more than once)
                    first, text = id_line.setdefault(x, (number, xx))
                    if text != xx:
                        raise DataError(f"{path}:{number}: id {x} repeats line {first}'s, for another question")
            if (en, xx) in seen:
                first, first_split = seen[en, xx]
                if corpus.splits is not None and first_split != split:
                    raise DataError(
                        f"{path}:{number}: repeats the pair of line {first} with another split ({split or 'none'!r} "
                        f"vs {first_split or 'none'!r}); a question is trained on or scored, never both: keep one row"
                    )
                duplicates += 1
                continue
            seen[en, xx] = (number, split if corpus.splits is not None else "")
            corpus.en.append(en)
            corpus.xx.append(xx)
            corpus.source.append(source)
            corpus.lines.append(number)
            if corpus.splits is not None:
                corpus.splits.append(split)
    _check_bad_share(corpus, rows, max_bad_share, path)
    for line in corpus.bad_rows:
        log.warning("skipped %s", line)
    if duplicates:
        log.warning(
            "%s: %d pairs repeat an earlier pair (after Unicode NFC and whitespace normalisation) and are kept once",
            path,
            duplicates,
        )
    if not corpus.en:
        why = f" ({len(corpus.bad_rows)} rows skipped; the first: {corpus.bad_rows[0]})" if corpus.bad_rows else ""
        raise DataError(f"{path}: no usable pairs{why}")
    corpus.rows_read = rows
    return corpus


class PairFiles:
    """Pair files read once: the first read of a file parses it, every later one (through this object) returns that
    parse, checked against its own `max_bad_share`. A job that checks its inputs before training hands this object on
    (relkt.jobs.teach: the checks, the student's inputs and the report read each file once)."""

    def __init__(self) -> None:
        self._parsed: dict[Path, ParallelCorpus] = {}

    def read(self, folder: str | Path, lang: str, max_bad_share: float = 0.01) -> ParallelCorpus:
        path = pair_file(folder, lang)
        key = path.resolve()
        if key not in self._parsed:
            self._parsed[key] = read_pairs(folder, lang, max_bad_share=1.0)
        corpus = self._parsed[key]
        _check_bad_share(corpus, corpus.rows_read, max_bad_share, path)
        return corpus

    @property
    def files(self) -> list[Path]:
        """The files parsed, in the order first read."""
        return list(self._parsed)


def _check_bad_share(corpus: ParallelCorpus, rows: int, max_bad_share: float, path: Path) -> None:
    if corpus.bad_rows and max_bad_share == 0:  # strict: every row is an item a measurement counts
        more = f" (and {len(corpus.bad_rows) - 1} more bad rows)" if len(corpus.bad_rows) > 1 else ""
        raise DataError(f"{corpus.bad_rows[0]}{more}; fix or remove the line")
    if rows and len(corpus.bad_rows) > max_bad_share * rows:
        shown = "; ".join(corpus.bad_rows[:3])
        raise DataError(
            f"{path}: {len(corpus.bad_rows)} of {rows} rows are bad (more than {max_bad_share:.0%}): {shown}"
        )
