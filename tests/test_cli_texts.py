"""The command line speaks the language ``--lang`` names: help, errors, the platform check, lesson files.

Each check runs ``gui.entry.main`` in-process and compares what it prints
with the texts files (``tr`` in that language), never with Chinese typed here.
"""

import re
import unicodedata

import pytest

from gui import platform_check, registry
from gui.cli import build_parser
from gui.entry import main
from gui.model import lessons, texts
from gui.model.texts import tr

#: The fixed sentences of ``export --help`` (no placeholders) that Chinese help must not repeat in English.
HELP_KEYS = ["cli.option.help", "cli.option.out", "cli.option.scores", "cli.option.labels", "cli.option.session",
             "cli.option.overwrite", "cli.option.size", "cli.option.dpi", "cli.option.plots_only",
             "cli.option.arrays_only", "cli.option.view", "cli.export.description", "cli.epilog.views",
             "cli.param.path"]
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z_-]*")


def texts_in(lang: str, *keys: str, **fmt) -> list[str]:
    texts.set_language(lang)
    try:
        return [tr(key, **fmt) for key in keys]
    finally:
        texts.set_language(None)


def squeeze(text: str) -> str:
    """``text`` without whitespace: argparse wraps help wherever it likes."""
    return "".join(text.split())


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as stop:  # argparse's --help
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def help_text(capsys, lang: str) -> str:
    code, out, err = run(capsys, "export", "--help", "--lang", lang)
    assert code == 0 and err == ""
    return out


def test_export_help_in_chinese_is_the_chinese_texts_and_none_of_the_english(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = help_text(capsys, "zh")
    chinese = texts_in("zh", *HELP_KEYS)
    english = texts_in("en", *HELP_KEYS)
    assert chinese != english
    for key, zh, en in zip(HELP_KEYS, chinese, english, strict=True):
        assert squeeze(zh) in squeeze(out), key
        assert squeeze(en) not in squeeze(out), f"{key} is still in English"
    (lesson,) = texts_in("zh", "cli.option.lesson", command="softmax-lab lessons")
    assert squeeze(lesson) in squeeze(out)
    for word in texts_in("en", "cli.epilog.example", "cli.epilog.no_parameters"):
        assert word not in out.splitlines()
    # the generated parts stay: each view's tooltip (in Chinese) and a parameter's range
    for spec in registry.VIEWS:
        assert squeeze(texts_in("zh", f"view.{spec.name}.tooltip")[0]) in squeeze(out)
    (log_range,) = texts_in("zh", "cli.param.range_log", low="0.1", high="10", default="1")
    assert squeeze(log_range) in squeeze(out)


def width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_chinese_option_help_is_wrapped_to_the_terminal_in_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = help_text(capsys, "zh")
    options = out.split("\n\n")[2]  # usage, description, options, epilog
    wide = [line for line in options.splitlines() if width(line) != len(line)]
    assert len(wide) > 20
    assert all(width(line) <= 78 for line in wide), [line for line in wide if width(line) > 78]  # as argparse


def test_help_names_the_same_options_in_either_language(capsys):
    expected = {s for action in build_parser()._actions for s in action.option_strings if s.startswith("--")}
    english, chinese = help_text(capsys, "en"), help_text(capsys, "zh")
    assert set(OPTION.findall(english)) == expected
    assert set(OPTION.findall(chinese)) == expected
    for key in HELP_KEYS:  # and English help is the English texts
        assert squeeze(texts_in("en", key)[0]) in squeeze(english), key


@pytest.mark.parametrize(("args", "option", "value", "choices"), [
    (["--view", "nope"], "--view", "nope", [s.name for s in registry.VIEWS]),
    (["--view", "calculator", "--theme", "purple"], "--theme", "purple", ["light", "dark"]),
])
def test_an_unknown_option_value_in_chinese_is_the_chinese_line(capsys, tmp_path, args, option, value, choices):
    code, out, err = run(capsys, "export", *args, "--out", str(tmp_path / "o"), "--lang", "zh")
    (message,) = texts_in("zh", "cli.error.invalid_choice", option=option, value=value,
                          choices=", ".join(map(repr, choices)))
    (line,) = texts_in("zh", "cli.error.line", prog="softmax-lab export", message=message)
    assert code == 2 and out == ""
    assert err == line + "\n"
    assert "invalid choice" not in err and "error:" not in err
    assert not (tmp_path / "o").exists()


def test_an_unknown_option_value_in_english_reads_as_argparse_says_it(capsys, tmp_path):
    code, _out, err = run(capsys, "export", "--view", "calculator", "--theme", "purple", "--out", str(tmp_path))
    assert code == 2
    assert err == ("softmax-lab export: error: argument --theme: invalid choice: 'purple' "
                   "(choose from 'light', 'dark')\n")


def test_a_parameter_that_does_not_apply_in_chinese(capsys, tmp_path):
    code, _out, err = run(capsys, "export", "--view", "calculator", "--scale", "2", "--out", str(tmp_path),
                          "--lang", "zh")
    (message,) = texts_in("zh", "cli.error.does_not_apply", option="--scale", view="calculator")
    assert code == 2
    assert err == texts_in("zh", "cli.error.line", prog="softmax-lab export", message=message)[0] + "\n"


def test_the_top_level_help_and_an_unknown_argument_in_chinese(capsys):
    code, out, _err = run(capsys, "--help", "--lang", "zh")
    assert code == 0
    for zh, en in zip(texts_in("zh", "cli.usage.window", "cli.usage.version"),
                      texts_in("en", "cli.usage.window", "cli.usage.version"), strict=True):
        assert zh in out and en not in out
    assert out.splitlines()[0] == texts_in("zh", "cli.usage.line", command="softmax-lab [export ...]")[0]
    english = run(capsys, "--help", "--lang", "en")[1]
    assert english.splitlines()[0] == "usage: softmax-lab [export ...]"
    assert len(english.splitlines()) == len(out.splitlines())
    code, _out, err = run(capsys, "--frobnicate", "--lang", "zh")
    (message,) = texts_in("zh", "cli.error.unknown_argument", arg="--frobnicate")
    assert code == 2 and err == texts_in("zh", "cli.error.line", prog="softmax-lab", message=message)[0] + "\n"


def test_the_platform_check_and_a_lesson_file_speak_chinese(monkeypatch):
    monkeypatch.setattr(platform_check.sys, "platform", "linux")
    texts.set_language("zh")
    no_display = platform_check.platform_problem({})
    hint = platform_check.hint()
    with pytest.raises(lessons.LessonError) as bad:
        lessons.parse('{"format": "softmax-lab-session"}', "x.json")
    texts.set_language(None)
    assert no_display == texts_in("zh", "cli.platform.no_display", prog="softmax-lab", variable="DISPLAY",
                                  command="softmax-lab export --help")[0]
    assert "libxcb-cursor0" in hint and hint.startswith(texts_in("zh", "cli.platform.hint", install="", command="")[0][:8])
    assert str(bad.value) == texts_in("zh", "lessonfile.not_lesson", where="x.json", format=lessons.FORMAT)[0]
    assert platform_check.platform_problem({}).startswith("softmax-lab: cannot open a window: no X display")
