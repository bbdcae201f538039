"""Token ids as text people can read: the decoded piece of each token, and a visible form of it.

A tokenizer's own token strings are an encoding: byte-level BPE (GPT-2,
Llama 3, Qwen) writes a space as ``Ġ`` and a Chinese character as two or
three odd Latin letters, one per UTF-8 byte; SentencePiece (Llama 2,
Mistral) writes a space as ``▁`` and unknown bytes as ``<0xE7>``.
:func:`pieces` undoes the encoding, token by token: the piece of a token is
the text its bytes stand for, and the bytes that are only part of a
character (a Chinese character split over two tokens) are written as
``\\xe7\\x8c``, so no token reads as ``�``.  :func:`readable` then makes
the whitespace of a piece visible for axis labels: a space as ``·``, a
newline as ``↵``, a tab as ``⇥``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_VISIBLE = {" ": "·", "\n": "↵", "\t": "⇥", "\r": "␍"}


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte to the printable character byte-level BPE writes for it."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


#: The inverse: the byte each character of a byte-level token stands for.
BYTE_DECODER: dict[str, int] = {c: b for b, c in _bytes_to_unicode().items()}


def readable(piece: str) -> str:
    """``piece`` with its whitespace and control characters made visible, for a label.

    >>> readable(" cat"), readable("\\n"), readable("")
    ('·cat', '↵', '∅')
    """
    if piece == "":
        return "∅"
    out = []
    for ch in piece:
        if ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


def _decoder_types(tokenizer: Any) -> set[str]:
    """The ``type`` names in the fast tokenizer's decoder (empty for a slow one)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return set()
    try:
        decoder = json.loads(backend.to_str()).get("decoder")
    except Exception:  # a backend that cannot serialise itself: decode token by token
        return set()
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("type"), str):
                found.add(node["type"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(decoder)
    return found


class Pieces:
    """The decoded piece of every token id of one tokenizer (built once per model)."""

    def __init__(self, tokenizer: Any) -> None:
        self._tok = tokenizer
        self.size = len(tokenizer)
        types = _decoder_types(tokenizer)
        self._byte_level = "ByteLevel" in types or hasattr(tokenizer, "byte_decoder")
        self._sentencepiece = "Metaspace" in types or "ByteFallback" in types or "Replace" in types
        self._special = set(getattr(tokenizer, "all_special_ids", ()) or ())
        self._vocab: tuple[str, ...] | None = None

    def _piece(self, token_id: int, raw: str | None) -> str:
        if token_id < 0 or token_id >= self.size or raw is None:
            return f"⟨{token_id}⟩"
        if token_id in self._special:
            return raw
        m = _BYTE_TOKEN.fullmatch(raw)
        if m:
            return bytes([int(m.group(1), 16)]).decode("utf-8", errors="backslashreplace")
        if self._byte_level and all(ch in BYTE_DECODER for ch in raw):
            return bytes(BYTE_DECODER[ch] for ch in raw).decode("utf-8", errors="backslashreplace")
        if self._sentencepiece:
            return raw.replace("▁", " ")
        text = self._tok.decode([token_id], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        if "\ufffd" in text and "\ufffd" not in raw:
            return raw
        return text

    def of(self, ids: Sequence[int]) -> tuple[str, ...]:
        """The pieces of ``ids``, in order."""
        ids = [int(i) for i in ids]
        if self._vocab is not None:
            return tuple(self._vocab[i] if 0 <= i < len(self._vocab) else f"⟨{i}⟩" for i in ids)
        inside = [i for i in ids if 0 <= i < self.size]
        raws = dict(zip(inside, self._tok.convert_ids_to_tokens(inside))) if inside else {}
        return tuple(self._piece(i, raws.get(i)) for i in ids)

    def vocabulary(self, size: int) -> tuple[str, ...]:
        """The piece of every id ``0 .. size - 1`` (ids the tokenizer lacks read ``⟨id⟩``); cached."""
        if self._vocab is None or len(self._vocab) != size:
            raws = self._tok.convert_ids_to_tokens(list(range(min(size, self.size))))
            self._vocab = tuple(self._piece(i, raws[i] if i < len(raws) else None) for i in range(size))
        return self._vocab


def readable_all(pieces: Sequence[str]) -> tuple[str, ...]:
    """:func:`readable` of each piece."""
    return tuple(readable(p) for p in pieces)
