"""The CLIs' shared flag types: a bad value fails at parse time, naming the flag, before any encoding."""

import pytest

from relkt.cli import evaluate


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--batch-size", "0"], "--batch-size: expected a whole number >= 1, got 0"),
        (["--split-fractions", "a,b"], "--split-fractions: expected three numbers train,dev,test"),
        (["--split-fractions", "0.5,0.5,0.5"], "--split-fractions: expected three fractions >= 0 summing to 1"),
        (["--output", "/proc/x.json"], "--output: cannot write /proc/x.json"),
        (["--output", "/dev/null"], "--output: cannot write /dev/null: not a regular file"),
        # an empty list never means every language (#59): leave the flag out for that
        (["--langs", ""], "--langs: names no language"),
        (["--langs", " , "], "--langs: names no language"),
        (["--langs", "en,,de"], "--langs: an empty name between commas"),
    ],
)
def test_bad_flags_are_one_usage_line(flags, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        evaluate.parse_args(["--encoder", "ngram", *flags])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and "relkt evaluate --help" in err  # one line, not the whole usage


def test_an_output_under_a_file_names_the_file(tmp_path, capsys):
    (tmp_path / "runs").write_text("mine\n")
    with pytest.raises(SystemExit):
        evaluate.parse_args(["--encoder", "ngram", "--output", str(tmp_path / "runs" / "q" / "r.json")])
    assert f"{tmp_path / 'runs'} is a file, not a folder" in capsys.readouterr().err
    assert (tmp_path / "runs").read_text() == "mine\n"


def test_an_error_line_shows_a_huge_value_by_its_ends(capsys):
    from relkt.cli.common import run_cli
    from relkt.errors import DataError

    def body():
        raise DataError("en.json: answer_start: " + "7" * 401 + " lies outside its context")

    assert run_cli(body) == 2
    err = capsys.readouterr().err
    assert "(401 characters)" in err and "lies outside its context" in err and len(err) < 300


def test_good_flags_parse(tmp_path):
    args = evaluate.parse_args(
        ["--encoder", "ngram", "--split-fractions", "0.6,0.2,0.2", "--output", str(tmp_path / "a" / "r.json")]
    )
    assert args.split_fractions == (0.6, 0.2, 0.2) and args.batch_size == 64 and not list((tmp_path / "a").iterdir())


@pytest.mark.parametrize("cli", ["evaluate", "coverage", "interpolate"])
def test_every_flag_has_help_that_shows_its_default(cli):
    import importlib

    parser = importlib.import_module(f"relkt.cli.{cli}").build_parser()
    for action in parser._actions:
        if action.dest == "help":
            continue
        assert action.help, f"{cli} {action.option_strings}: no help text"
        takes_value = action.nargs != 0
        if takes_value and not action.required:
            assert "default" in action.help, f"{cli} {action.option_strings}: help does not show the default"


def test_a_language_named_twice_is_refused():
    import argparse

    import pytest

    from relkt.cli.types import language_list

    assert language_list("de, en") == ["de", "en"]
    with pytest.raises(argparse.ArgumentTypeError, match="de more than once"):
        language_list("de,de,en")


def test_no_flag_takes_a_bare_number(capsys):
    """Every number a flag takes has a range: the shared parser refuses a bare int or float type where a flag is
    defined, and every registered command and trainers/ script builds its parser under that rule (--help)."""
    import importlib.util
    from pathlib import Path

    from relkt.cli.__main__ import COMMANDS, main
    from relkt.cli.common import Parser
    from relkt.cli.types import positive_int

    with pytest.raises(TypeError, match="bare int"):
        Parser(prog="x").add_argument("--n", type=int)
    Parser(prog="x").add_argument("--n", type=positive_int)  # a ranged type is fine
    for name in COMMANDS:
        with pytest.raises(SystemExit) as stop:
            main([name, "--help"])
        assert stop.value.code == 0, name
    for script in sorted((Path(__file__).resolve().parents[2] / "trainers").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"trainer_{script.stem}", script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if hasattr(module, "main"):
            with pytest.raises(SystemExit) as stop:
                module.main(["--help"])
            assert stop.value.code == 0, script.name
    capsys.readouterr()
