"""The messages moved out of the code (resources/texts/<lang>/messages.json) are used and are translated.

Every key of en/messages.json must appear, quoted, in the source under gui/
(a key nothing uses is a text nobody sees).  For a few representative
refusals (a JSON file that is not a session, a .npy whose header names an
unknown format version, a parameter outside its range, a session setting
that is skipped) the message raised with SOFTMAX_LAB_LANG=zh is the Chinese
text of its key, formatted with the same values, and not the English one.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gui.model import texts
from gui.model.base import Param
from gui.model.npfile import LoadError, open_numpy
from gui.model.scores import ScoreRow
from gui.model.session import Session, SessionError
from gui.model.temperature import TemperatureModel
from gui.model.texts import tr
from resources import RESOURCES

ROOT = Path(__file__).resolve().parents[1]


def _messages(lang: str) -> dict[str, str]:
    return json.loads((RESOURCES / "texts" / lang / "messages.json").read_text(encoding="utf-8"))


@pytest.fixture
def lang(monkeypatch):
    """Switch the language through the environment (tr reads it on each call); no language set in code."""
    monkeypatch.setattr(texts, "_chosen", None, raising=False)

    def use(code: str) -> None:
        monkeypatch.setenv("SOFTMAX_LAB_LANG", code)

    use("en")
    return use


def _in_both(lang, key: str, **fmt) -> tuple[str, str]:
    """tr(key, **fmt) in Chinese and in English (the language is left at zh)."""
    lang("en")
    english = tr(key, **fmt)
    lang("zh")
    return tr(key, **fmt), english


def test_every_message_key_is_used_in_the_gui_source():
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "gui").rglob("*.py"))
    unused = [key for key in _messages("en") if f'"{key}"' not in source]
    assert not unused, f"keys of messages.json nothing in gui/ uses: {unused}"


def test_both_languages_hold_the_same_message_keys():
    en, zh = _messages("en"), _messages("zh")
    assert sorted(en) == sorted(zh)
    assert len(en) > 50  # the messages really are here


def test_a_json_file_that_is_not_a_session_is_refused_in_chinese(lang, tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"format": "something-else", "version": 2}), encoding="utf-8")
    lang("en")
    with pytest.raises(SessionError) as english:
        Session.load(path)
    zh, en = _in_both(lang, "error.session.not_session")
    with pytest.raises(SessionError) as chinese:
        Session.load(path)
    assert str(english.value) == en == "not a Softmax Lab session file"
    assert str(chinese.value) == zh
    assert zh != en


def test_a_npy_with_an_unknown_header_version_is_refused_in_chinese(lang, tmp_path):
    path = tmp_path / "future.npy"
    np.save(path, np.arange(4.0))
    data = bytearray(path.read_bytes())
    data[6:8] = bytes([3, 0])  # the format version after the magic: 3.0 is not one NumPy writes
    path.write_bytes(bytes(data))
    expected = "a row of floats"

    def message() -> str:
        with pytest.raises(LoadError) as caught:
            with open_numpy(path, expected=expected) as f:
                f.header()
        return str(caught.value)

    lang("en")
    english = message()
    zh, en = _in_both(lang, "error.npfile.version", label="future.npy", version="3.0", expected=expected)
    assert english == en
    assert english.startswith("future.npy uses .npy format version 3.0, which is not read")
    assert message() == zh
    assert zh != en


def test_a_parameter_out_of_range_is_refused_in_chinese(lang):
    spec = Param("temperature", 1.0, minimum=0.01, maximum=100.0, log=True)
    with pytest.raises(ValueError) as english:
        spec.check(500)
    assert str(english.value) == "temperature must be between 0.01 and 100, got 500"
    zh, en = _in_both(lang, "error.param.out_of_range", name="temperature", minimum="0.01", maximum="100",
                      value="500")
    with pytest.raises(ValueError) as chinese:
        spec.check(500)
    assert str(english.value) == en
    assert str(chinese.value) == zh
    assert zh != en


def test_a_skipped_session_setting_is_one_chinese_sentence(lang):
    """'{view}: {error}; kept {value}' is one text, so the Chinese keeps its own punctuation and order."""
    lang("zh")
    model = TemperatureModel()
    session = Session(scores=ScoreRow().entries, views={"temperature": {"temperature": 500}})
    skipped = session.apply(ScoreRow(), {"temperature": model})
    error = tr("error.param.out_of_range", name="temperature", minimum="0.01", maximum="100", value="500")
    zh, en = _in_both(lang, "error.session.kept", view="temperature", error=error, value=model.temperature)
    assert skipped == [zh]
    assert "；" in zh and zh != en
