"""A name -> object table whose entries register themselves: the machinery the QA format table
(relkt.data.qa_format), the encoder kind table (relkt.encoders.encoder_kind) and the evaluator table
(relkt.metrics.evaluator) share. Built-in entries are the modules of one package, imported the first time the table is
read, so adding one is adding a file."""

from __future__ import annotations

import importlib
import pkgutil
import threading

from relkt.errors import ConfigError


class Registry(dict):
    """`what` names the kind of entry in errors; `package` (dotted) holds the built-in entries, one module each."""

    def __init__(self, what: str, package: str = ""):
        super().__init__()
        self.what, self.package, self._loaded, self._loading = what, package, False, False
        # two threads reading the table first at once: the second waits for the first's imports, never reads it half
        # filled (api.score from two threads once found "no QA files" while the formats were still registering)
        self._lock = threading.RLock()

    def add(self, name: str, entry: object, cls: type) -> None:
        """`entry` under `name`, the name the entry declares; a name another class holds is refused in one line
        (ConfigError), whoever registers it and whatever its class is called: no entry shadows another. The same
        class again (its module imported twice, by the same dotted name) replaces it."""
        if self.package and not self._loaded:
            self.loaded()  # the built-ins first: a user's entry taking a built-in's name is refused here, naming it
        held = self.get(name)
        if held is not None and _where(held if isinstance(held, type) else type(held)) != _where(cls):
            raise ConfigError(
                f"{self.what} {name!r} is taken by {_where(held if isinstance(held, type) else type(held))}; "
                f"{_where(cls)} cannot register it too: give it another name"
            )
        self[name] = entry

    def loaded(self) -> Registry:
        """The table with every module of `package` imported (each registers its entries). Under the lock, `_loading`
        is only ever seen by the thread doing the imports (a module registering itself), which goes on."""
        if not self.package or self._loaded:
            return self
        with self._lock:
            if self._loaded or self._loading:
                return self
            self._loading = True
            try:
                package = importlib.import_module(self.package)
                for module in pkgutil.iter_modules(package.__path__):
                    importlib.import_module(f"{self.package}.{module.name}")
                self._loaded = True
            finally:
                self._loading = False
        return self


def _where(cls: type) -> str:
    """A class by module and name: two classes of one name in two modules are two entries."""
    return f"{cls.__module__}.{cls.__qualname__}"
