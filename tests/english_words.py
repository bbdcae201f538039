"""English words in a text that is meant to be in another language (the zh scans use this).

A word is a run of two or more Latin letters; technical names that every
language keeps (softmax, top-k, float16, NumPy, Ctrl) are allowed, as are
HTML tags, {placeholders} and file patterns.
"""

from __future__ import annotations

import re

#: Names kept as they are in every language (compared lower-case).
ALLOWED_WORDS = {
    # the functions and their parts
    "softmax", "sparsemax", "entmax", "hardmax", "argmax", "max", "min", "log", "exp", "lse", "logsumexp",
    "log_softmax", "sigmoid", "relu", "gelu", "tanh", "kl", "nats", "nat", "bits", "nan", "inf", "top", "sum",
    "logit", "logits", "token", "tokens", "gumbel", "moe", "cdf", "flashattention", "online", "qk", "qkt",
    "dk", "d_k", "rope", "lm", "head", "lr", "eps", "ce", "id", "vs", "std",
    # number formats and libraries
    "float", "bfloat", "fp", "int", "numpy", "cupy", "scipy", "torch", "gpu", "cpu", "cuda", "nvrtc", "qt",
    "pyside", "pyqtgraph", "python", "psygnal", "superqt", "vram",
    # units
    "kib", "mib", "gib", "kb", "mb", "gb", "ms", "us", "ns", "hz",
    # files and keys
    "png", "svg", "csv", "npz", "npy", "json", "txt", "dpi", "px", "ctrl", "shift", "alt", "del", "enter",
    "tab", "esc", "backspace", "cmd", "home", "end", "pgup", "pgdown", "ins", "space", "up", "down", "left",
    "right", "meta", "option", "return", "delete", "escape", "insert", "pageup", "pagedown", "ok",
    # names of people, products and the app
    "softmax lab", "lab", "english", "noto", "sans", "cjk", "sc", "debian", "ubuntu", "linux", "xcb", "apt", "sudo", "install",
    "fonts", "hugging", "face", "bert", "gpt", "llama", "zipf", "shannon", "boltzmann", "jacobian",
    "milakov", "gimelshein", "bug", "pytorch", "nvidia", "acc", "api", "pearson", "shazeer", "cv", "fifo", "pickle", "dtype", "utf", "kernel", "warp", "shuffle", "fd", "page",
    # the models, papers and authors the Variants view names
    "transformer", "evan", "miller", "oss", "streamingllm", "ssmax", "qwen", "gemma", "alibi", "press", "apple",
    "vit", "olmo", "rms",
    # words inside formulas and array names: one-hot, ln, soft-min, linear(s), δ_ij, mask, heads
    "one", "hot", "ln", "soft", "linear", "ij", "mask", "heads",
    # one-letter-ish symbols written with two letters (xW, hW, ppᵀ: the Learning view's formulas)
    "dx", "ds", "pi", "vi", "xw", "hw", "pp",
    # the Learning view: its losses, metrics, models and data (scikit-learn, pip install scikit-learn)
    "mlp", "mse", "ece", "nll", "infonce", "clip", "hinton", "scikit", "learn", "pip",
}

_WORD = re.compile(r"[A-Za-z][A-Za-z_]*[A-Za-z]|[A-Za-z]{2,}")
_STRIP = (
    re.compile(r"<(tt|code)>.*?</\1>", re.S),  # code
    re.compile(r"`[^`]*`"),  # code in Markdown
    re.compile(r"<sub>[^<>]*</sub>"),  # subscripts (m_new, m_old)
    re.compile(r"（[A-Za-z][A-Za-z -]*）"),  # the English term glossed after its Chinese one
    re.compile(r"\b[A-Za-z]+(?=\()"),  # a function's name in a formula: Attention(Q, K, V)
    re.compile(r"<[^<>]*>"),  # HTML tags
    re.compile(r"'[^'\s]*'"),  # a quoted name ('scores', 'current_view')
    re.compile(r"“[A-Za-z0-9 ·.-]*”"),  # a quoted token of the user's data (“sat”)
    re.compile(r"--[a-z][a-z-]*(?: [a-z]+(?:\|[a-z]+)+)?"),  # command-line options (--causal on|off)
    re.compile(r"[\w.-]+\.(?:json|bad|npz|npy|csv|png|svg|ini|txt)\b"),  # file names
    re.compile(r"\{[^{}]*\}"),  # placeholders
    re.compile(r"\*\.[A-Za-z0-9]+"),  # file patterns (*.npz)
    re.compile(r"&[a-z]+;"),  # HTML entities
    re.compile(r"\(&[A-Za-z]\)|&(?=[A-Za-z])"),  # menu accelerators
    re.compile(r"\b(?:float|bfloat|int|fp)\d+\b|\b[a-z]+\d+[a-z\d]*\b", re.I),  # float16, e2e, l2
    re.compile(r"\b[a-z](?:_[a-z0-9]+)+\b", re.I),  # code names: d_k, top_p, s_max
    re.compile(r"\b[a-z]+-[a-z]\b", re.I),  # top-k, top-p, min-p
)


def english_words(text: str) -> list[str]:
    """The English words of ``text`` that are not technical names every language keeps."""
    for pattern in _STRIP:
        text = pattern.sub(" ", text)
    return [w for w in _WORD.findall(text) if w.lower() not in ALLOWED_WORDS]
