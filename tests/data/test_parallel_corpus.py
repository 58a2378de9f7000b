"""The parallel-corpus reader: bad rows counted and named by file and line, an error above the threshold, and a
held-out part made of whole documents (each source's last rows, or whole sources), never of hashed lines."""

import pytest

from relkt.data.parallel_corpus import pair_languages, read_pairs, read_parallel_tsv
from relkt.errors import DataError

HEADER = b"source\ten\txx\n"


def write(path, rows: list[bytes]):
    path.write_bytes(HEADER + b"".join(rows))
    return path


def good(n: int) -> list[bytes]:
    return [f"tatoeba\tsentence {i}\tSatz {i}\n".encode() for i in range(n)]


def test_bad_rows_are_skipped_and_named_with_file_and_line(tmp_path, caplog):
    rows = good(200)
    rows[4] = b"tatoeba\tonly two columns\n"  # line 6 (the header is line 1)
    rows[9] = b"ntrex128\t\tleer\n"  # line 11: empty English side
    rows[19] = b"tico19\tbroken\t\xff\xfe\n"  # line 21: not UTF-8
    rows[29] = "flores\tsentence\t\u200b\u200e\u2060\n".encode()  # line 31: a side of invisible marks only
    rows.append(rows[0])  # an exact duplicate: kept once, not an error
    path = write(tmp_path / "de.tsv", rows)
    corpus = read_parallel_tsv(path, "de", max_bad_share=0.02)
    assert len(corpus) == 196 and corpus.xx[0] == "Satz 0" and corpus.source[0] == "tatoeba"
    assert corpus.bad_rows == [
        f"{path}:6: 2 columns, expected 3 (source, en, xx)",
        f"{path}:11: empty en side (nothing but whitespace or invisible marks)",
        f"{path}:21: not UTF-8 (invalid start byte at byte 14)",
        f"{path}:31: empty xx side (nothing but whitespace or invisible marks)",
    ]
    assert f"{path}:21" in caplog.text
    with pytest.raises(DataError, match=r"de.tsv: 4 of 201 rows are bad \(more than 1%\)"):
        read_parallel_tsv(path, "de", max_bad_share=0.01)


def test_a_file_with_no_readable_row_says_why_in_its_error_line(tmp_path):
    (tmp_path / "de.tsv").write_bytes(HEADER + "t\tthe number\tdie Zähl\n".encode("latin-1") * 3)
    with pytest.raises(DataError, match=r"no usable pairs \(3 rows skipped; the first: .*de.tsv:2: not UTF-8"):
        read_parallel_tsv(tmp_path / "de.tsv", "de", max_bad_share=1.0)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"en\txx\nfoo\tbar\n", "de.tsv:1: header"),
        (HEADER, "de.tsv: no usable pairs"),
    ],
)
def test_a_file_that_is_not_a_corpus_is_one_clear_error(tmp_path, content, message):
    (tmp_path / "de.tsv").write_bytes(content)
    with pytest.raises(DataError, match=message):
        read_parallel_tsv(tmp_path / "de.tsv", "de")
    with pytest.raises(DataError, match="no such parallel corpus file"):
        read_parallel_tsv(tmp_path / "xx.tsv", "xx")


def news(documents: int, lines: int = 4) -> list[bytes]:
    """`documents` news documents of `lines` sentences each, in order (as NTREX and TICO-19 keep theirs)."""
    return [f"news\tdoc {d} line {k}\tDok {d} Zeile {k}\n".encode() for d in range(documents) for k in range(lines)]


def test_the_held_out_pairs_are_each_sources_last_rows_in_its_share(tmp_path):
    # 60 tatoeba lines, then 10 news documents of 4 lines (40 rows): 10 held out = 6 tatoeba (60% of the rows) + 4
    # news (40%): the last 6 tatoeba sentences and news document 9 whole, so no news document has a line on each side.
    corpus = read_parallel_tsv(write(tmp_path / "de.tsv", good(60) + news(10)), "de")
    train, dev = corpus.split(10)
    assert dev.en == [f"sentence {i}" for i in range(54, 60)] + [f"doc 9 line {k}" for k in range(4)]
    assert len(train) == 90 and not set(dev.en) & set(train.en)
    documents = lambda part: {e.split(" line")[0] for e in part.en if e.startswith("doc")}  # noqa: E731
    assert documents(dev) == {"doc 9"} and not documents(dev) & documents(train)
    # Largest remainder: 7 of (60, 40) is 4.2 + 2.8 -> 4 + 3; the same file read again holds out the same pairs.
    assert [len([s for s in corpus.split(7)[1].source if s == x]) for x in ("tatoeba", "news")] == [4, 3]
    again = read_parallel_tsv(write(tmp_path / "de2.tsv", good(60) + news(10)), "de")
    assert again.split(10)[1].en == dev.en


def test_a_hashed_line_slice_would_have_cut_documents_and_this_one_does_not(tmp_path):
    # 25 documents of 8 lines, 40 held out: exactly the last 5 documents, whatever the lines say.
    corpus = read_parallel_tsv(write(tmp_path / "de.tsv", news(25, 8)), "de")
    train, dev = corpus.split(40)
    held_docs = {e.split(" line")[0] for e in dev.en}
    assert held_docs == {f"doc {d}" for d in range(20, 25)}
    assert not held_docs & {e.split(" line")[0] for e in train.en}


def test_a_question_both_trained_and_scored_is_refused_not_dropped(tmp_path):
    rows = [f"{i}\ttrain\tKysymys {i}?\tQuestion {i}?\n".encode() for i in range(20)]
    rows.append(b"3\t\tKysymys 3?\tQuestion 3?\n")  # line 22: the evaluation row of a question line 5 trains on
    (tmp_path / "fi.tsv").write_bytes(b"id\tsplit\txx\ten\n" + b"".join(rows))
    with pytest.raises(
        DataError, match=r"fi.tsv:22: repeats the pair of line 5 with another split \('none' vs 'train'\)"
    ):
        read_pairs(tmp_path, "fi")
    rows[-1] = b"3\ttrain\tKysymys 3?\tQuestion 3?\n"  # the same row twice, same split: kept once, as before
    (tmp_path / "fi.tsv").write_bytes(b"id\tsplit\txx\ten\n" + b"".join(rows))
    assert len(read_pairs(tmp_path, "fi")) == 20


def test_question_pairs_read_by_their_header_columns(tmp_path):
    """xor-questions/ files: `id, split, xx, en`; the columns are found by name, and a broken line is named."""
    rows = [f"{i}\ttrain\tKysymys {i}?\tQuestion {i}?\n".encode() for i in range(150)]
    rows[2] = b"7\ttrain\tonly three\n"  # line 4
    (tmp_path / "fi.tsv").write_bytes(b"id\tsplit\txx\ten\n" + b"".join(rows))
    corpus = read_pairs(tmp_path, "fi")
    assert (corpus.en[0], corpus.xx[0], corpus.source[0]) == ("Question 0?", "Kysymys 0?", "0")
    assert corpus.bad_rows == [f"{tmp_path / 'fi.tsv'}:4: 3 columns, expected 4 (id, split, xx, en)"]
    assert pair_languages(tmp_path) == ["fi"]
    with pytest.raises(DataError, match=r"no pairs for bn \(no bn.tsv\); it holds fi"):
        read_pairs(tmp_path, "bn")
    with pytest.raises(DataError, match="not a folder"):
        pair_languages(tmp_path / "fi.tsv")


def write_questions(tmp_path, rows: str):
    (tmp_path / "fi.tsv").write_text("id\tsplit\txx\ten\n" + rows, encoding="utf-8")
    return tmp_path


def test_a_question_file_trains_on_its_train_rows_and_scores_the_others(tmp_path):
    # Lines 2-3 train; 4 is an evaluation question; 5 is dev only (not train: scored); 6 is one train question
    # translated twice (same id, same text: kept, and it trains).
    folder = write_questions(
        tmp_path,
        "a\ttrain\tMissä kissa on?\tWhere is the cat?\n"
        "b,c\tdev,train\tKuka sen teki?\tWho did it?\n"
        "\t\tMikä päivä on?\tWhat day is it?\n"
        "d\tdev\tMissä koira on?\tWhere is the dog?\n"
        "a\ttrain\tMissä kissa on?\tWhere's the cat?\n",
    )
    corpus = read_pairs(folder, "fi")
    assert corpus.held_out().xx == ["Mikä päivä on?", "Missä koira on?"]
    train, dev = corpus.split(1)  # dev comes from the train rows too: the others are for scoring only
    assert sorted(train.lines + dev.lines) == [2, 3, 6] and len(dev) == 1
    assert not set(train.xx + dev.xx) & set(corpus.held_out().xx)


@pytest.mark.parametrize(
    "rows, message",
    [
        ("a\ttest\tMissä?\tWhere?\n", r"fi\.tsv:2: split 'test'; expected empty .* train, dev"),
        ("a\ttrain\tMissä?\tWhere?\nb\t\tKuka?\tWho?\na\ttrain\tMikä?\tWhat?\n", r"fi\.tsv:4: id a repeats line 2's"),
    ],
)
def test_a_bad_split_or_a_repeated_id_is_one_clear_error(tmp_path, rows, message):
    with pytest.raises(DataError, match=message):
        read_pairs(write_questions(tmp_path, rows), "fi")


def test_a_train_row_that_shares_its_question_with_a_held_out_row_is_refused(tmp_path):
    folder = write_questions(tmp_path, "a\ttrain\tMissä?\tWhere?\n\t\tKuka?\tWho?\n\t\tMissä?\tWhere is it?\n")
    corpus = read_pairs(folder, "fi")
    with pytest.raises(DataError, match=r"fi\.tsv:2: a `train` row shares its question or id with line 4"):
        corpus.split(1)


def test_a_held_out_source_is_held_out_whole(tmp_path):
    # 60 tatoeba pairs and 40 news pairs; news held out: none of its pairs trains, all 40 (or 10 with dev_pairs 10) are
    # the dev side; a source the file lacks is one clear error.
    rows = good(60) + [f"news\tnews line {i}\tNachricht {i}\n".encode() for i in range(40)]
    corpus = read_parallel_tsv(write(tmp_path / "de.tsv", rows), "de")
    train, dev = corpus.split(0, ["news"])
    assert set(train.source) == {"tatoeba"} and len(train) == 60
    assert set(dev.source) == {"news"} and len(dev) == 40
    train, dev = corpus.split(10, ["news"])
    assert len(train) == 60 and dev.en == [f"news line {i}" for i in range(30, 40)]
    with pytest.raises(
        DataError, match=r"de.tsv: no pair of the held-out source\(s\) wiki \(its sources: news, tatoeba\)"
    ):
        corpus.split(0, ["wiki"])


def test_another_domain_is_a_whole_source_in_neither_part(tmp_path):
    """60 tatoeba pairs and 40 news pairs, news held out as another domain: train and dev (the last 10 rows, all from
    tatoeba) hold none of it; `of_source` gives all 40; a source the file lacks names the setting."""
    rows = good(60) + [f"news\tnews line {i}\tNachricht {i}\n".encode() for i in range(40)]
    corpus = read_parallel_tsv(write(tmp_path / "de.tsv", rows), "de")
    train, dev = corpus.split(10, (), "news")
    assert set(train.source) == set(dev.source) == {"tatoeba"} and (len(train), len(dev)) == (50, 10)
    assert corpus.of_source("news").en == [f"news line {i}" for i in range(40)]
    with pytest.raises(DataError, match=r"de.tsv: held out as another domain \(data.corpus_other_domain\): no pair"):
        corpus.split(10, (), "wiki")


def test_a_student_never_trains_on_its_other_domain_and_the_report_scores_it_whole(tmp_path):
    from relkt.config import StudentConfig, load_config
    from relkt.data.pair_items import read_pair_items
    from relkt.data.parallel import corpus_examples, held_out_rule

    folder = tmp_path / "pairs"
    folder.mkdir()
    rows = good(30) + [f"news\tnews line {i}\tNachricht {i}\n".encode() for i in range(12)]
    write(folder / "de.tsv", rows)
    sets = [f"data.corpus_dir={folder}", "data.corpus_dev_pairs=5", "data.corpus_pairs_per_lang=0"]
    plain = load_config(StudentConfig, None, sets)
    apart = load_config(StudentConfig, None, [*sets, "data.corpus_other_domain={de: news}"])
    trained = corpus_examples(apart.data, ["en", "de"], 0)[0].q_source
    assert len(trained) == 25 and not any(q.startswith("news") for q in trained)
    assert any(q.startswith("news") for q in corpus_examples(plain.data, ["en", "de"], 0)[0].q_source)
    assert held_out_rule(apart.data) != held_out_rule(plain.data)  # a resume under another rule is refused
    items = read_pair_items(["de"], str(folder), 5, other_domain={"de": "news"}).items
    assert len(items["pairs_other_domain"]["de"]) == 12 and set(items["pairs"]["de"].source) == {"tatoeba"}
    assert len(items["pairs"]["de"]) == 5


def test_teach_holds_out_each_taught_languages_smallest_source_unless_told(tmp_path):
    from relkt.jobs.requests import TeachRequest
    from relkt.jobs.teach import choose_other_domain

    folder = tmp_path / "pairs"
    folder.mkdir()
    write(folder / "de.tsv", good(30) + [f"news\tn {i}\tN {i}\n".encode() for i in range(12)])
    write(folder / "fi.tsv", good(8))  # one source: nothing to hold out whole
    request = TeachRequest(langs=["de", "fi"], pairs_dir=str(folder))
    assert choose_other_domain(request) == {"de": "news"}
    told = TeachRequest(langs=["de", "fi"], pairs_dir=str(folder), other_domain={"de": "tatoeba"})
    assert choose_other_domain(told) == {"de": "tatoeba"}
    assert choose_other_domain(TeachRequest(langs=["de"], pairs_dir=str(folder), other_domain={})) == {}


def test_a_utf16_pair_file_is_one_line_saying_so(tmp_path):
    (tmp_path / "de.tsv").write_bytes("source\ten\txx\nt\thello\thallo\n".encode("utf-16"))
    with pytest.raises(
        DataError, match=r"de.tsv:1: not UTF-8 .*a UTF-16 file \(its byte-order mark\): save it as UTF-8"
    ):
        read_pairs(tmp_path, "de")
