"""A name -> object table whose entries register themselves: the machinery the QA format table
(relkt.data.qa_format), the encoder kind table (relkt.encoders.encoder_kind) and the evaluator table
(relkt.metrics.evaluator) share. Built-in entries are the modules of one package, imported the first time the table is
read, so adding one is adding a file."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any


class Registry(dict):
    """`what` names the kind of entry in errors; `package` (dotted) holds the built-in entries, one module each."""

    def __init__(self, what: str, package: str = ""):
        super().__init__()
        self.what, self.package, self._loaded = what, package, False

    def add(self, name: str, entry: Any, cls: type) -> None:
        """`entry` under `name`; another class already under that name is an error (no entry shadows another), the
        same class again (a module imported twice) replaces it."""
        held = self.get(name)
        held_cls = held if isinstance(held, type) else type(held)
        if held is not None and held_cls.__qualname__ != cls.__qualname__:
            raise ValueError(f"{self.what} {name!r} is registered twice ({held_cls.__qualname__}, {cls.__qualname__})")
        self[name] = entry

    def loaded(self) -> Registry:
        """The table with every module of `package` imported (each registers its entries)."""
        if self.package and not self._loaded:
            package = importlib.import_module(self.package)
            for module in pkgutil.iter_modules(package.__path__):
                importlib.import_module(f"{self.package}.{module.name}")
            self._loaded = True
        return self
