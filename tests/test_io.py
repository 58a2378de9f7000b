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
