"""The registry every table shares (QA formats, encoder kinds, evaluators): read whole by every thread."""

from __future__ import annotations

import sys
import threading


def test_a_table_read_first_by_two_threads_at_once_is_whole_for_both(tmp_path, monkeypatch):
    # a package of two built-in entries, the first slow to import: a second thread must wait, not read it half filled
    package = tmp_path / "slow_entries"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (tmp_path / "slow_table.py").write_text(
        "from relkt.registry import Registry\nTABLE = Registry('thing', 'slow_entries')\n"
    )
    entry = "import slow_table\nclass {cls}:\n    pass\nslow_table.TABLE.add('{name}', {cls}(), {cls})\n"
    (package / "a_slow.py").write_text("import time\ntime.sleep(0.5)\n" + entry.format(cls="A", name="a"))
    (package / "b_fast.py").write_text(entry.format(cls="B", name="b"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import slow_table

    seen = {}

    def read(i):
        seen[i] = sorted(slow_table.TABLE.loaded())

    threads = [threading.Thread(target=read, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {i: ["a", "b"] for i in range(4)}
    for name in ("slow_table", "slow_entries", "slow_entries.a_slow", "slow_entries.b_fast"):
        sys.modules.pop(name, None)
