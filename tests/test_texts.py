"""Every shipped language translates every text: same files, same keys, same placeholders and tags.

Also the language choice: ``set_language`` over ``SOFTMAX_LAB_LANG`` over
English, and the window's first choice (environment, saved, system locale).
"""

import json
import re
import string
from collections import Counter

import pytest

from gui.model import texts
from resources import RESOURCES
from tests.english_words import english_words

OTHERS = [lang for lang in texts.LANGUAGES if lang != "en"]
TAG = re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)\b[^<>]*>")
#: Texts a translation may keep in English: the language's own name in the Language menu.
SAME_EVERYWHERE = {"action.language_en", "action.language_en.tooltip", "action.language_zh.tooltip"}


def files(lang: str) -> dict[str, dict[str, str]]:
    return {p.name: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((RESOURCES / "texts" / lang).glob("*.json"))}


def fields(text: str) -> Counter:
    """The {placeholders} of a format string, with their format specs."""
    return Counter((name, spec, conv) for _, name, spec, conv in string.Formatter().parse(text) if name is not None)


def tags(text: str) -> Counter:
    return Counter(m.group(0).split()[0].rstrip(">").lower() for m in TAG.finditer(text))


@pytest.mark.parametrize("lang", OTHERS)
def test_each_language_has_the_files_and_keys_english_has(lang):
    en, other = files("en"), files(lang)
    assert sorted(other) == sorted(en), "the same files in both folders"
    for name, table in en.items():
        missing = sorted(set(table) - set(other[name]))
        extra = sorted(set(other[name]) - set(table))
        assert not missing, f"{lang}/{name} lacks {missing[:10]}"
        assert not extra, f"{lang}/{name} has keys English lacks: {extra[:10]}"


@pytest.mark.parametrize("lang", OTHERS)
def test_translations_keep_placeholders_and_tags_and_are_not_empty(lang):
    en = texts._table("en")
    bad = []
    for key, text in texts._table(lang).items():
        source = en.get(key, "")
        if not text.strip():
            bad.append(f"{key}: empty")
        if fields(text) != fields(source):
            bad.append(f"{key}: placeholders {sorted(fields(text))} != {sorted(fields(source))}")
        if tags(text) != tags(source):
            bad.append(f"{key}: tags {dict(tags(text))} != {dict(tags(source))}")
        if english_words(text) and key not in SAME_EVERYWHERE:
            bad.append(f"{key}: English left in it: {english_words(text)[:5]} ({text[:60]!r})")
    assert not bad, "\n".join(bad[:40])


@pytest.mark.parametrize("lang", OTHERS)
def test_every_translation_formats_with_the_english_arguments(lang):
    """Formatting each text with dummy values for the English placeholders raises nothing."""
    for key, source in texts._table("en").items():
        names = {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(source) if name}
        if not names:
            continue
        values = {n: 1 for n in names}
        texts.set_language(lang)
        try:
            texts.tr(key, **values)
        finally:
            texts.set_language(None)


def test_the_language_set_wins_over_the_environment_which_wins_over_english(monkeypatch):
    monkeypatch.delenv("SOFTMAX_LAB_LANG", raising=False)
    assert texts.language() == "en"
    monkeypatch.setenv("SOFTMAX_LAB_LANG", "zh")
    assert texts.language() == "zh"
    assert texts.tr("menu.language") == files("zh")["language.json"]["menu.language"]
    texts.set_language("en")
    assert texts.language() == "en"
    assert texts.tr("menu.language") == "&Language"
    texts.set_language(None)
    assert texts.language() == "zh"
    texts.set_language("en")
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        texts.set_language("fr")


@pytest.mark.parametrize(("locale", "lang"), [
    ("zh_CN", "zh"), ("zh_TW.UTF-8", "zh"), ("zh-Hans-CN", "zh"), ("en_GB", "en"),
    ("de_DE", "en"), ("C", "en"), ("", "en"), ("POSIX", "en"),
])
def test_a_locale_name_picks_a_shipped_language_else_english(locale, lang):
    assert texts.language_of_locale(locale) == lang


def test_the_first_language_is_the_environment_then_the_saved_choice_then_the_system(monkeypatch):
    monkeypatch.setenv("SOFTMAX_LAB_LANG", "en")
    assert texts.initial_language("zh", "zh_CN") == "en"
    monkeypatch.delenv("SOFTMAX_LAB_LANG")
    assert texts.initial_language("zh", "en_US") == "zh"
    assert texts.initial_language("en", "zh_CN") == "en"
    assert texts.initial_language(None, "zh_CN") == "zh"
    assert texts.initial_language("klingon", "zh_CN") == "zh"  # a bad saved value is ignored
    assert texts.initial_language(None, "fr_FR") == "en"
