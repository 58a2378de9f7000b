"""Typed configs: dataclasses loaded from YAML, overridden with `--set a.b=value`, validated, saved.

An unknown key or a value of the wrong type or outside a `Literal` fails at once, naming the key and
listing the valid keys or choices.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union

import yaml

from relkt.errors import ConfigError
from relkt.io import atomic_write_text, read_yaml

if TYPE_CHECKING:  # typeshed's protocol of a dataclass instance (a config), for the annotations alone
    from _typeshed import DataclassInstance

T = TypeVar("T")


def _coerce(value: Any, tp: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        if Literal["all"] in args and value in ([], (), ""):  # relkt.config.sections.Names
            raise ConfigError(
                f"{where}: an empty list names nothing (it never means every one); write `all` for every one "
                "found, or list them"
            )
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, arg, where)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if errors else f"{where}: bad value {value!r}")
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{where}: {value!r} is not valid; valid: {', '.join(map(str, args))}")
        return value
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, where)
    if origin in (list, tuple):
        if isinstance(value, str):  # --set langs=en,de
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        item = args[0] if args else Any
        return [_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return dict(value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if tp is int:
        if isinstance(value, bool) or not (
            isinstance(value, int) or (isinstance(value, str) and value.lstrip("-").isdigit())
        ):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return int(value)
    if tp is float:
        if isinstance(value, bool):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        try:
            return float(value)  # YAML reads 1e-5 as a string
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: expected a number, got {value!r}") from None
    if tp is str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return str(value)
    return value


def _check_range(value: Any, metadata: Any, where: str) -> Any:
    """A field's declared bounds (relkt.config.sections.within) and non-emptiness, checked as it loads."""
    lo, hi, above = metadata.get("range", (None, None, None))
    numbers = value if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(x, float) and not math.isfinite(x) for x in numbers):  # NaN passes every comparison
        raise ConfigError(f"{where}: {value!r} is not a finite number")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            span = f"{lo if lo is not None else '-inf'} .. {hi if hi is not None else 'inf'}"
            raise ConfigError(f"{where}: {value!r} is out of range; valid: {span}")
        if above is not None and not value > above:
            raise ConfigError(f"{where}: {value!r} is out of range; valid: > {above}")
    if metadata.get("non_empty") and isinstance(value, str) and not value.strip():
        raise ConfigError(f"{where}: empty; name a folder (an empty path would mean the current one)")
    return value


def from_dict(cls: type[T], data: dict | None, where: str = "config") -> T:
    """Build dataclass `cls` from a mapping; unknown keys are errors listing the valid ones."""
    data = data or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping, got {data!r}")
    upgrade = getattr(cls, "upgrade", None)  # a section's keys of an older relkt, read as today's
    data = upgrade(data) if upgrade else data
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(fields)}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, value in data.items():
        key = f"{where}.{name}" if where != "config" else name
        kwargs[name] = _check_range(_coerce(value, hints[name], key), fields[name].metadata, key)
    obj = cls(**kwargs)
    validate = getattr(obj, "validate", None)
    if validate:
        validate()
    return obj


def upgraded(cls: type, data: dict) -> dict:
    """A saved config mapping with every section's older keys read as today's (each section's `upgrade`), and
    nothing filled in: how a resumed run compares what it was started with."""
    upgrade = getattr(cls, "upgrade", None)
    data = upgrade(dict(data)) if upgrade else dict(data)
    hints = typing.get_type_hints(cls)
    for name, value in data.items():
        if name in hints and dataclasses.is_dataclass(hints[name]) and isinstance(value, dict):
            data[name] = upgraded(hints[name], value)
    return data


def as_overrides(settings: dict[str, Any]) -> list[str]:
    """{dotted key: value} as `--set KEY=VALUE` strings, each value one line of YAML, as `--set` reads it back; a path
    is its string, any other value YAML cannot hold is one ConfigError naming its key."""

    def plain(value: object) -> object:
        if isinstance(value, PurePath):
            return str(value)
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return [plain(v) for v in value] if isinstance(value, (list, tuple)) else value

    overrides = []
    for key, value in settings.items():
        try:
            text = yaml.safe_dump(plain(value), default_flow_style=True, width=10**6)
        except yaml.YAMLError:
            what = f"{type(value).__name__} {value!r}"
            raise ConfigError(f"{key}: {what} is no setting value (text, number, list, mapping)") from None
        overrides.append(f"{key}={text.strip().removesuffix('...').strip()}")
    return overrides


# YAML 1.1 reads `010` as 8 (octal) and `1:30` as 90 (base 60): a number on a command line means what it shows
_OCTAL_OR_BASE_60 = re.compile(r"^[-+]?(0[0-9_]+|[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?)$")


def _override_value(item: str, raw: str):
    """The value of `--set key=RAW`: YAML, except that a `#` starts no comment (`runs/exp #3` is that text) and a
    number YAML 1.1 would read in another base is refused."""
    if raw.strip() == "":
        return ""
    control = re.search(r"[\x00-\x1f\x7f]", raw)
    if control:  # YAML would fold a newline into a space: `runs/a<newline>b` would become `runs/a b` unseen
        raise ConfigError(
            f"--set {item!r}: the value holds the control character {control.group()!r} "
            f"(U+{ord(control.group()):04X}); a value is one line of text"
        )
    if "#" in raw and not raw.lstrip().startswith(("[", "{", "'", '"')):
        return raw
    if _OCTAL_OR_BASE_60.match(raw.strip()):
        raise ConfigError(
            f"--set {item!r}: YAML reads {raw.strip()} as {yaml.safe_load(raw)!r} (octal or base 60); write the "
            "number you mean without a leading zero or colon, or quote it for text"
        )
    return yaml.safe_load(raw)


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """Apply `a.b=value` strings (values parsed as YAML) to a nested dict, in place."""
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected key=value (e.g. schedule.learning_rate=1e-5)")
        try:
            value = _override_value(item, raw)
        except yaml.YAMLError as e:
            reason = str(getattr(e, "problem", None) or e).splitlines()[0]
            raise ConfigError(f"--set {item!r}: the value is not valid YAML ({reason})") from None
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r}: {part} is not a section")
        node[parts[-1]] = value
    return data


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (where plain YAML keeps the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice (first on line {seen[key] + 1})", key_node.start_mark
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


BASE_KEY = "base"  # `base: other.yaml` (relative to the file naming it): start from that config, change what follows


def yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML error in one line: what is wrong and where (line and column), without the parser's excerpt."""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context = getattr(error, "context", None)
    mark = getattr(error, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return f"{context + ': ' if context else ''}{problem}{where}"


def read_config_file(path: str | Path, _seen: tuple[Path, ...] = ()) -> dict:
    """The mapping a YAML config resolves to: its `base` chain read first, then this file's keys merged over it.

    Sections merge key by key; a list or a value replaces the base's. A cycle or a missing base is an error naming
    the file that names it."""
    path = Path(path)
    if path.resolve() in _seen:
        chain = " -> ".join(str(p) for p in (*_seen, path.resolve()))
        raise ConfigError(f"{path}: base: cycle ({chain})")
    if not path.exists() and not path.is_symlink():
        where = f" (named as base by {_seen[-1]})" if _seen else ""
        raise ConfigError(f"{path}: config file not found{where}")
    data = read_yaml(path, "config file", ConfigError) or {}  # the read door: regular, UTF-8, no key twice
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys, got {type(data).__name__}")
    base = data.pop(BASE_KEY, None)
    if base is None:
        return data
    if not isinstance(base, str) or not base:
        raise ConfigError(f"{path}: base: expected a YAML file name relative to this file, got {base!r}")
    return merge_config(read_config_file(path.parent / base, (*_seen, path.resolve())), data)


def merge_config(base: dict, changes: dict) -> dict:
    """`base` with `changes` merged over it: mappings key by key, anything else replaced (a new dict)."""
    out = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_config(out[key], value)
        else:
            out[key] = value
    return out


def load_config(cls: type[T], path: str | Path | None = None, overrides: list[str] | None = None) -> T:
    """Defaults of `cls`, then the YAML file (its `base` chain first), then `--set` overrides; validated."""
    data = read_config_file(path) if path else {}
    try:
        config = from_dict(cls, data)
    except ConfigError as e:
        raise ConfigError(f"{path or 'defaults'}: {e}") from None
    return with_overrides(config, overrides or []) if overrides else config


def run_config(
    cls: type[T],
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    smoke: bool = False,
    settings: Sequence[str] = (),
) -> T:
    """A trainer's config as its command line resolves it: defaults, the YAML file (its `base` chain) with `settings`
    over it (what a recipe's caller fills in, e.g. relkt teach's folders: part of the file, so smoke shrinks them
    too), the smoke switch (which shrinks the run first, into `OUTPUT_DIR_smoke` beside the configured folder), then
    the overrides (an explicit `--set` wins over what smoke shrank, `output_dir` included)."""
    config = load_config(cls, path, [*settings, *(["smoke=true"] if smoke else [])])
    config = config.apply_smoke()
    if smoke and not any(s.partition("=")[0].strip() == "output_dir" for s in settings):
        # a smoke run never resumes or replaces the configured run: it has a folder of its own beside it
        config.output_dir = config.output_dir.rstrip("/") + SMOKE_SUFFIX
    return with_overrides(config, list(overrides)) if overrides else config


SMOKE_SUFFIX = "_smoke"


def with_overrides(config: T, overrides: list[str]) -> T:
    """`config` with `--set key=value` overrides applied, validated; errors name --set, not the YAML file."""
    data = apply_overrides(to_dict(config), overrides)
    try:
        return from_dict(type(config), data)
    except ConfigError as e:
        raise ConfigError(f"--set {' '.join(overrides)}: {e}") from None


def checked(config: T) -> T:
    """`config` validated again as loading validates it: what a Python caller changed after loading it is checked
    before anything is built."""
    try:
        return from_dict(type(config), to_dict(config))
    except ConfigError as e:
        raise ConfigError(f"config (as changed after loading): {e}") from None


def to_dict(config: DataclassInstance) -> dict:
    """The config as nested plain dicts."""
    return dataclasses.asdict(config)


def config_yaml(config: DataclassInstance) -> str:
    """The resolved config as YAML: every key, defaults and `base` chain filled in (what a run folder stores)."""
    return yaml.safe_dump(to_dict(config), sort_keys=False, allow_unicode=True)


def save_config(config: DataclassInstance, path: str | Path) -> Path:
    """Write the resolved config's YAML to `path` atomically."""
    return atomic_write_text(path, config_yaml(config))
