"""Student groups: one student per group of languages, each from the same teacher (CL-ReLKT's reference code trains
one for the languages mUSE reads and one for the rest, so the two are never traded against each other).

A group is written in a setup (configs/setups.yaml) as

    student_groups:
      supported: {langs: [en, ar, de]}                      # the student config as it is
      other: {langs: [el, hi], set: {distill.weights.beta: 1.0e-4}}  # plus what differs for this group

Its student trains on its languages (`data.student_langs`: `langs` less the source language), selects its best export
on its languages' dev questions alone (`eval.question_langs`; `eval.langs` adds the source language's candidates), and
scores every question in its languages; no language may be in two groups, and a scored language in none is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from relkt.config.config_io import as_overrides
from relkt.errors import ConfigError

# The keys a group sets itself; a group's `set` may not name them.
GROUP_OWNS = ("data.student_langs", "eval.langs", "eval.question_langs", "output_dir")


@dataclass(frozen=True)
class StudentGroup:
    """One group: its name (the run folder's suffix), its languages, and the student settings it changes."""

    name: str
    langs: tuple[str, ...]
    settings: dict[str, Any] = field(default_factory=dict)  # dotted config key -> value

    def overrides(self, source_lang: str, output_dir: str, dev_langs: Iterable[str] | None = None) -> list[str]:
        """`--set KEY=VALUE` strings that make the student config this group's student. Its dev questions are its
        languages among `dev_langs` (those the training source holds; None: all of them), ranked against theirs and
        the source language's candidates; none there (a source of English questions alone): the source language's,
        and a dev metric of pairs (corpus/P@1) reads the group's languages."""
        student_langs = [lang for lang in self.langs if lang != source_lang]
        if not student_langs:  # a student with no language to learn (an empty list is refused, never "all")
            raise ConfigError(
                f"student_groups.{self.name}: langs {list(self.langs)} hold only the source language "
                f"{source_lang}, which a student does not learn; add {source_lang} to another group"
            )
        held = set(self.langs if dev_langs is None else dev_langs)
        questions = [lang for lang in self.langs if lang in held] or [source_lang]
        fixed = {
            "data.student_langs": student_langs,
            "eval.langs": list(dict.fromkeys([*questions, source_lang])),  # the source's candidates: XX->EN's
            "eval.question_langs": questions,
            "output_dir": output_dir,
            **self.settings,
        }
        return as_overrides(fixed)


def read_student_groups(raw: object, where: str) -> tuple[StudentGroup, ...]:
    """The groups of a `student_groups` mapping, checked: each names languages, no language is in two groups, a
    group's `set` leaves the keys the group owns alone. `where` names the file and entry in errors."""
    if raw is None or raw == {}:
        return ()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: student_groups must map a group name to {{langs: [...], set: {{...}}}}")
    groups, owner = [], {}
    for name, entry in raw.items():
        at = f"{where}: student_groups.{name}"
        if not isinstance(entry, Mapping) or set(entry) - {"langs", "set"}:
            raise ConfigError(f"{at}: expected {{langs: [...], set: {{KEY: VALUE}}}}, got {entry!r}")
        langs = entry.get("langs")
        if not isinstance(langs, list) or not langs or not all(isinstance(x, str) and x for x in langs):
            raise ConfigError(f"{at}.langs: a non-empty list of language codes, got {langs!r}")
        settings = entry.get("set") or {}
        if not isinstance(settings, Mapping):
            raise ConfigError(f"{at}.set: a mapping of dotted config keys to values, got {settings!r}")
        owned = sorted(set(settings) & set(GROUP_OWNS))
        if owned:
            raise ConfigError(f"{at}.set: {', '.join(owned)} is the group's own (from its langs and name)")
        for lang in langs:
            if lang in owner:
                raise ConfigError(
                    f"{at}: {lang} is in two groups ({owner[lang]} and {name}); a language has one student"
                )
            owner[lang] = str(name)
        groups.append(StudentGroup(str(name), tuple(langs), dict(settings)))
    return tuple(groups)


def group_of_language(groups: Iterable[StudentGroup], langs: Iterable[str], where: str) -> dict[str, str]:
    """Each of `langs` (the languages scored) -> the name of the group whose student scores it; a language in no
    group is an error naming it."""
    owner = {lang: g.name for g in groups for lang in g.langs}
    missing = sorted(set(langs) - set(owner))
    if missing:
        listed = "; ".join(f"{g.name}: {' '.join(g.langs)}" for g in groups)
        raise ConfigError(f"{where}: {', '.join(missing)} is scored but in no student group ({listed}); add it to one")
    return {lang: owner[lang] for lang in langs}
