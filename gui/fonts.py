"""Font families for Chinese text, shared by the window and the SVG export (no Qt here).

Qt finds a glyph for a Chinese character in some installed font by itself
on most systems, but which one is left to chance, and on a system with no
CJK font at all it draws empty boxes.  The window therefore asks for one of
these families by name when the interface is in Chinese (and says so once
when none is installed); exported SVGs list them before the generic family,
so the file reads well on other machines too.
"""

from __future__ import annotations

from collections.abc import Iterable

#: CJK families, best first: Noto Sans CJK / Source Han Sans (Linux: fonts-noto-cjk),
#: then the platforms' own (macOS, Windows), then older Linux ones.
CJK_FAMILIES: tuple[str, ...] = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Noto Sans SC",
    "PingFang SC",
    "Hiragino Sans GB",
    "Microsoft YaHei",
    "SimHei",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
)


def first_cjk(installed: Iterable[str]) -> str | None:
    """The best CJK family among ``installed`` (family names, any case), or None."""
    have = {name.lower(): name for name in installed}
    for family in CJK_FAMILIES:
        if family.lower() in have:
            return have[family.lower()]
    return None
