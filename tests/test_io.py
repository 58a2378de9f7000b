"""relkt.io: writes are whole or absent, and a failed one is one WriteError naming its path."""

import errno

import pytest

from relkt.errors import WriteError
from relkt.io import atomic_file, atomic_files, tf_reason


def test_files_written_as_one_unit_are_all_replaced_or_none(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.npz"
    a.write_text("old a")
    with atomic_files([a, b]) as (fa, fb):
        fa.write(b"new a")
        fb.write(b"new b")
    assert a.read_text() == "new a" and b.read_text() == "new b"
    with pytest.raises(WriteError, match=r"a\.json and \S+b\.npz: cannot write \(No space left on device\)"):
        with atomic_files([a, b]) as (fa, fb):
            fa.write(b"newer a")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert a.read_text() == "new a" and b.read_text() == "new b"  # neither changed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.npz"]  # no temporary file left


def test_an_os_error_names_the_path_and_a_temporary_file_never_stays(tmp_path):
    with pytest.raises(WriteError, match=r"x\.txt: cannot write \(File too large\)"):
        with atomic_file(tmp_path / "x.txt", "w") as f:
            f.write("part")
            raise OSError(errno.EFBIG, "File too large")
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C mid-write: nothing half-written either
        with atomic_file(tmp_path / "x.txt", "w") as f:
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_tensorflow_file_errors_give_their_os_reason():
    class OpError(Exception):
        message = (
            "{{function_node __wrapped__SaveV2_dtypes_7_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
            "/run/.best.writing-1/variables/part.tempstate1; File too large [Op:SaveV2]"
        )

    assert tf_reason(OpError()) == "File too large"
    assert tf_reason(OSError("plain")) == "plain"


def test_link_tree_links_each_file_or_copies_where_links_cannot_be_made(tmp_path, monkeypatch):
    """The copy is whole: the same bytes in the same layout, hard links where the file system allows them, plain
    copies where it refuses (another file system), and no half-built folder left beside it."""
    import os

    from relkt.io import link_tree

    src = tmp_path / "run"
    (src / "best" / "variables").mkdir(parents=True)
    (src / "best" / "variables" / "w.bin").write_bytes(b"\x00\x01")
    (src / "summary.json").write_text("{}")
    linked = link_tree(src, tmp_path / "linked")
    assert (linked / "best" / "variables" / "w.bin").stat().st_ino == (
        src / "best" / "variables" / "w.bin"
    ).stat().st_ino

    def refuse(a, b):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", refuse)
    copied = link_tree(src, tmp_path / "copied")
    assert (copied / "best" / "variables" / "w.bin").read_bytes() == b"\x00\x01"
    assert (copied / "summary.json").stat().st_ino != (src / "summary.json").stat().st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copied", "linked", "run"]


def test_a_file_output_named_like_a_folder_or_a_fifo_is_refused_without_hanging(tmp_path):
    import os

    import pytest

    from relkt.errors import WriteError
    from relkt.io import claim_file
    from relkt.jobs.scoring import is_result_file

    with pytest.raises(WriteError, match="ends with '/'"):
        claim_file(f"{tmp_path}/newdir/", is_result_file, "results JSON")
    assert not (tmp_path / "newdir").exists()
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    with pytest.raises(WriteError, match="relkt did not write it"):  # read through the door: refused, not opened
        claim_file(fifo, is_result_file, "results JSON")
