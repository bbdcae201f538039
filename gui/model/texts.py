"""UI texts, read from resources/texts/<language>/*.json.

Each language is a folder of JSON files (one for the app, one per view), all
merged into one table; a key may appear in only one file.  English is the
reference; another language only needs the keys it translates, the rest
falls back to English (tests/test_texts.py requires every shipped language
to translate every key).

The language in use is, first to last: the one set with :func:`set_language`
(the window's View > Language, ``--lang`` on the command line), then
``SOFTMAX_LAB_LANG``, then English.  The window decides its first language
with :func:`initial_language` (the environment, the saved choice, then the
system locale).
"""

from __future__ import annotations

import json
import os
from functools import cache

from resources import RESOURCES

#: The languages the app ships, in the order the Language menu lists them.
LANGUAGES: tuple[str, ...] = ("en", "zh")
_chosen: str | None = None


def language() -> str:
    """The language texts are read in now."""
    return _chosen or os.environ.get("SOFTMAX_LAB_LANG") or "en"


def set_language(lang: str | None) -> None:
    """Read texts in ``lang`` from now on (None: back to ``SOFTMAX_LAB_LANG``/English)."""
    global _chosen
    if lang is not None and lang not in LANGUAGES:
        raise ValueError(tr("error.language.unknown", lang=lang, known=", ".join(LANGUAGES)))
    _chosen = lang


def language_of_locale(name: str) -> str:
    """The shipped language for a locale name such as ``zh_CN.UTF-8`` or ``en-GB``; English if none."""
    code = name.replace("-", "_").split("_")[0].split(".")[0].lower()
    return code if code in LANGUAGES else "en"


def initial_language(saved: object = None, system_locale: str = "") -> str:
    """The window's first language: ``SOFTMAX_LAB_LANG``, else the saved choice, else the system's."""
    env = os.environ.get("SOFTMAX_LAB_LANG")
    if env in LANGUAGES:
        return env
    if isinstance(saved, str) and saved in LANGUAGES:
        return saved
    return language_of_locale(system_locale)


@cache
def _table(lang: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for path in sorted((RESOURCES / "texts" / lang).glob("*.json")):
        part = json.loads(path.read_text(encoding="utf-8"))
        clash = set(part) & set(table)
        if clash:
            raise ValueError(f"{path.name} repeats text keys: {', '.join(sorted(clash))}")
        table.update(part)
    return table


def tr(key: str, **fmt: object) -> str:
    """The text for ``key`` in the current language, formatted with ``fmt``."""
    text = _table(language()).get(key)
    if text is None:
        text = _table("en").get(key)
    if text is None:
        raise KeyError(f"no UI text for {key!r}")
    return text.format(**fmt) if fmt else text


@cache
def _presets() -> tuple[tuple[str, tuple[float, ...]], ...]:
    doc = json.loads((RESOURCES / "presets.json").read_text(encoding="utf-8"))
    return tuple((p["key"], tuple(float(v) for v in p["values"])) for p in doc["presets"])


def presets() -> tuple[tuple[str, tuple[float, ...]], ...]:
    """The articles' example rows: (name in the current language, values)."""
    return tuple((tr(f"preset.{key}"), values) for key, values in _presets())
