"""What every part of the real-model layer shares: the error, the limits, the lazy imports.

torch and transformers are imported here, inside functions, only when a
model is used; importing :mod:`gui.model.llm` costs nothing without them.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from contextlib import contextmanager
from typing import Any

from gui.model.texts import tr

#: The prompt tokens the attention view shows (n x n weights per head).
MAX_PROMPT_TOKENS = 256
#: The context the next-token logits and the generate strip may grow to.
MAX_CONTEXT_TOKENS = 512
#: The most tokens one call of ``generate`` draws.
MAX_GENERATE_TOKENS = 64
#: The layers and the heads per layer the attention view shows (48 x 64 at most).
MAX_LAYERS = 48
MAX_HEADS = 64
#: How to get the packages.
INSTALL_COMMAND = "pip install 'softmax-lab[models]'"
#: The packages the extra brings, as the messages name them.
PACKAGES = "PyTorch, transformers"
#: Architectures (``config.model_type``) whose q and k are captured and recomputed.
RECOMPUTED_ARCHITECTURES = ("gpt2", "llama", "mistral", "qwen2", "qwen3")
#: The same, as the messages name them.
RECOMPUTED_NAMES = "GPT-2, Llama, Mistral, Qwen2, Qwen3"


#: Held while a model loads or runs: one model call at a time (the CPU is busy anyway), and
#: the process-wide settings quiet() changes are changed by one thread at a time.
LOCK = threading.RLock()


class ModelError(Exception):
    """Anything that went wrong with a real model, said in one line (the user's to read)."""


def cause(exc: BaseException) -> str:
    """One line saying what ``exc`` says: its first non-empty line, at most 200 characters."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def _import(name: str) -> Any:
    """``importlib.import_module(name)`` (a seam: the tests hide torch through it)."""
    return importlib.import_module(name)


def unavailable_reason() -> str | None:
    """``None`` when torch and transformers import; else one line: why not, and the install command.

    Examples
    --------
    >>> reason = unavailable_reason()
    >>> reason is None or "softmax-lab[models]" in reason
    True
    """
    for name in ("torch", "transformers"):
        try:
            _import(name)
        except Exception as exc:  # ImportError, or a broken install raising anything
            return tr("llm.unavailable", packages=PACKAGES, cause=f"{name}: {cause(exc)}",
                      command=INSTALL_COMMAND)
    return None


def require() -> tuple[Any, Any]:
    """``(torch, transformers)``, or ModelError with :func:`unavailable_reason`."""
    reason = unavailable_reason()
    if reason is not None:
        raise ModelError(reason)
    return _import("torch"), _import("transformers")


@contextmanager
def quiet():
    """Hold :data:`LOCK` and silence the libraries' warnings and progress bars meanwhile.

    transformers warns about things the user cannot change (deprecations
    inside its own code, generation defaults); the lab says what matters
    through ModelError and the result's ``note`` instead.
    """
    logging = _import("transformers").utils.logging
    with LOCK:
        level = logging.get_verbosity()
        bars = logging.is_progress_bar_enabled()
        logging.set_verbosity_error()
        logging.disable_progress_bar()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            logging.set_verbosity(level)
            if bars:
                logging.enable_progress_bar()
