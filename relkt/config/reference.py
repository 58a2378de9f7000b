"""Every config key of a stage with its type, default and one line of meaning, read off the config dataclasses
themselves (the meaning is the comment on a field's line, or the line above it), so `--help` and
docs/config.md never drift from the code."""

from __future__ import annotations

import dataclasses
import inspect
import io
import tokenize
import types
import typing
from functools import cache

from relkt.config.student_config import StudentConfig
from relkt.config.teacher_config import TeacherConfig


@cache
def field_comments(cls: type) -> dict[str, str]:
    """{field name: its comment} for a dataclass: the comment at the end of its line, else the comment lines
    right above it."""
    comments: dict[str, str] = {}
    for klass in reversed(cls.__mro__):  # a subclass's comment wins over its base's
        if not dataclasses.is_dataclass(klass):
            continue
        source = inspect.getsource(klass)
        line_comment = {
            tok.start[0]: tok.string.lstrip("#").strip()
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT
        }
        names = {f.name for f in dataclasses.fields(klass)}
        above: list[str] = []  # comment lines since the last code line
        for i, line in enumerate(source.splitlines(), start=1):
            stripped = line.strip()
            if stripped.startswith("#"):
                above.append(line_comment.get(i, ""))
                continue
            name, colon, _ = stripped.partition(":")
            if colon and name.strip() in names:
                comments[name.strip()] = line_comment.get(i) or " ".join(above)
            above = []
    return comments


def type_name(tp) -> str:
    """A field's type as the config reference prints it (`int`, `a | b`, `list[str]`)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return " | ".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        inner = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(inner) + (" or null" if type(None) in args else "")
    if origin in (list, tuple):
        return f"list[{type_name(args[0])}]" if args else "list"
    if origin is dict:
        return "mapping"
    return getattr(tp, "__name__", str(tp))


def config_keys(config: object, prefix: str = "") -> list[tuple[str, str, str, str]]:
    """(dotted key, type, default, meaning) of every key of a config instance, nested sections included."""
    cls = type(config)
    hints = typing.get_type_hints(cls)
    comments = field_comments(cls)
    rows = []
    for f in dataclasses.fields(cls):
        value = getattr(config, f.name)
        key = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value):
            rows += config_keys(value, key + ".")
            continue
        meaning = comments.get(f.name, "")
        if f.metadata.get("grows_on_resume"):
            meaning += " (may grow when a finished run is run again: it trains on)"
        lo, hi, above = f.metadata.get("range", (None, None, None))
        if above is not None:
            meaning += f" (> {above})"
        elif lo is not None or hi is not None:
            meaning += f" ({lo if lo is not None else '-inf'} .. {hi if hi is not None else 'inf'})"
        if f.metadata.get("non_empty"):
            meaning += " (not empty)"
        rows.append((key, type_name(hints[f.name]), _show(value), meaning))
    return rows


def _show(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value) if value == "" else value
    return str(value)


def help_text(config_class: type) -> str:
    """The config keys for a trainer's `--help`: one line each, key, type, default and meaning."""
    rows = config_keys(config_class())
    width = max(len(k) for k, *_ in rows)
    lines = ["config keys (YAML, or --set KEY=VALUE); full reference: docs/config.md"]
    for key, kind, default, meaning in rows:
        lines.append(f"  {key:<{width}}  {kind} = {default}")
        lines.append(f"  {'':<{width}}    {meaning}")
    return "\n".join(lines)


def reference_markdown() -> str:
    """docs/config.md: every key of both stages, generated from the dataclasses (`python -m relkt.config.reference`)."""
    out = [
        "# relkt config reference",
        "",
        "Generated from the config dataclasses (`python -m relkt.config.reference > docs/config.md`; a test checks it",
        "is current). Every key can be set in the YAML file or with `--set KEY=VALUE` (dotted, values parsed as YAML).",
        "A config may start from another, `base: other.yaml` (relative to it), and hold only what it changes:",
        "sections merge key by key, a list or a value replaces the base's. `--print-config` prints the resolved",
        "config, which is what a run folder stores.",
        "",
    ]
    for title, cls, command in (
        ("Stage 1, teacher", TeacherConfig, "python -m relkt.train_teacher"),
        ("Stage 2, student", StudentConfig, "python -m relkt.train_student"),
    ):
        out += [f"## {title}: `{command}`", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        for key, kind, default, meaning in config_keys(cls()):
            out.append(f"| `{key}` | {kind.replace('|', '&#124;')} | `{default}` | {meaning.replace('|', '&#124;')} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(reference_markdown(), end="")
