"""UI texts, read from resources/texts/<language>/*.json.

Each language is a folder of JSON files (one for the app, one per view), all
merged into one table; a key may appear in only one file.  English is the
reference; another language only needs the keys it translates, the rest
falls back to English.  SOFTMAX_LAB_LANG picks the language.
"""

from __future__ import annotations

import json
import os
from functools import cache

from resources import RESOURCES


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
    lang = os.environ.get("SOFTMAX_LAB_LANG", "en")
    text = _table(lang).get(key)
    if text is None:
        text = _table("en").get(key)
    if text is None:
        raise KeyError(f"no UI text for {key!r}")
    return text.format(**fmt) if fmt else text


@cache
def presets() -> tuple[tuple[str, tuple[float, ...]], ...]:
    doc = json.loads((RESOURCES / "presets.json").read_text(encoding="utf-8"))
    return tuple((p["name"], tuple(float(v) for v in p["values"])) for p in doc["presets"])
