"""Load a causal language model and its tokenizer from a folder or a Hugging Face model id.

A folder is read as it is.  A model id (``gpt2``, ``Qwen/Qwen2.5-0.5B``) is
looked up in the local Hugging Face cache first (``local_files_only``); only
if it is not there, and the hub can be reached, is it downloaded the usual
way (into that cache).  Offline, a one-line :class:`ModelError` says what to
do.  Every model is loaded once per resolved source (the folder's real path,
or the id) and kept: a second prompt costs one forward pass.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from gui.model.llm import _capture
from gui.model.llm._env import LOCK, RECOMPUTED_ARCHITECTURES, ModelError, cause, quiet, require
from gui.model.llm._tokens import Pieces
from gui.model.texts import tr

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
_cache: dict[tuple[str, str], LoadedModel] = {}


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A loaded model: what the views show about it, and the torch objects behind it.

    ``source`` is the resolved source (a folder's absolute real path, or the
    model id); ``name`` a short label (the folder's name, or the id).
    ``architecture`` is ``config.model_type`` (``"gpt2"``, ``"llama"``, ...);
    ``recomputable`` says whether the attention of this architecture is
    recomputed with the lab's softmax.  ``context`` is the longest input the
    model takes (its position limit; 0 when the config does not say).
    """

    source: str
    name: str
    architecture: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    vocab_size: int
    context: int
    recomputable: bool
    model: Any = field(repr=False)
    tokenizer: Any = field(repr=False)
    pieces: Pieces = field(repr=False)
    #: small caches of results keyed by input (the last logit rows), private to this package
    memo: dict = field(default_factory=dict, repr=False)


def _looks_like_path(source: str) -> bool:
    return (source.startswith((".", "~", "/", "\\")) or os.path.isabs(source) or "\\" in source
            or source.count("/") > 1 or not _ID.fullmatch(source))


def _hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers a TCP connection (False in offline mode)."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on") or \
            os.environ.get("TRANSFORMERS_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    try:
        from huggingface_hub import constants

        if getattr(constants, "HF_HUB_OFFLINE", False):
            return False
        url = urlparse(getattr(constants, "ENDPOINT", "https://huggingface.co"))
    except Exception:
        url = urlparse("https://huggingface.co")
    host = url.hostname or "huggingface.co"
    port = url.port or (443 if url.scheme != "http" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _int(config: Any, *names: str, default: int = 0) -> int:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return default


def _text_config(config: Any) -> Any:
    get = getattr(config, "get_text_config", None)
    try:
        return get() if callable(get) else config
    except Exception:
        return config


def _check_causal(config: Any, where: str) -> None:
    """ModelError unless ``config`` describes a decoder-only model that predicts the next token."""
    kind = getattr(config, "model_type", "") or "?"
    archs = tuple(getattr(config, "architectures", None) or ())
    causal_names = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")
    if getattr(config, "is_encoder_decoder", False) or (archs and not any(a.endswith(causal_names) for a in archs)):
        raise ModelError(tr("llm.error.not_causal", source=where, kind=", ".join(archs) or kind))
    try:
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    except Exception:  # a transformers that moved it: from_pretrained decides
        return
    if kind not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise ModelError(tr("llm.error.not_causal", source=where, kind=", ".join(archs) or kind))


def _dtype_kwargs(torch: Any, transformers: Any) -> dict[str, Any]:
    """float32, under the keyword this transformers takes (``dtype`` from 4.56, ``torch_dtype`` before)."""
    try:
        major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    except ValueError:
        major, minor = 5, 0
    return {"dtype": torch.float32} if (major, minor) >= (4, 56) else {"torch_dtype": torch.float32}


def _from_pretrained(where: str, local_only: bool, cache_dir: str | None, label: str) -> tuple[Any, Any]:
    """(model, tokenizer) from a folder or an id; ModelError for anything that goes wrong."""
    torch, transformers = require()
    common: dict[str, Any] = {"local_files_only": local_only}
    if cache_dir is not None:
        common["cache_dir"] = cache_dir
    try:
        config = transformers.AutoConfig.from_pretrained(where, **common)
    except Exception as exc:
        raise ModelError(tr("llm.error.load_failed", source=label, cause=cause(exc))) from None
    _check_causal(config, label)
    try:
        model, info = transformers.AutoModelForCausalLM.from_pretrained(
            where, attn_implementation="eager", output_loading_info=True, **_dtype_kwargs(torch, transformers),
            **common)
    except Exception as exc:
        raise ModelError(tr("llm.error.load_failed", source=label, cause=cause(exc))) from None
    # weights the files lack would be left random: the model's outputs would mean nothing
    missing = sorted(str(k) for k in (info.get("missing_keys") or ())) + \
        sorted(str(k[0] if isinstance(k, tuple) else k) for k in (info.get("mismatched_keys") or ()))
    if missing:
        raise ModelError(tr("llm.error.missing_weights", source=label, count=len(missing),
                            names=", ".join(missing[:3]) + (", …" if len(missing) > 3 else "")))
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(where, **common)
    except Exception as exc:
        raise ModelError(tr("llm.error.tokenizer", source=label, cause=cause(exc))) from None
    if not callable(getattr(tokenizer, "convert_ids_to_tokens", None)):
        raise ModelError(tr("llm.error.tokenizer", source=label, cause=type(tokenizer).__name__))
    model.eval()
    model.requires_grad_(False)
    return model, tokenizer


def _describe(source: str, name: str, model: Any, tokenizer: Any) -> LoadedModel:
    config = _text_config(model.config)
    heads = _int(config, "num_attention_heads", "n_head")
    hidden = _int(config, "hidden_size", "n_embd")
    head_dim = _int(config, "head_dim", default=hidden // heads if heads else 0)
    arch = str(getattr(config, "model_type", "") or getattr(model.config, "model_type", ""))
    captured = _capture.install(model)
    vocab = _int(config, "vocab_size", default=len(tokenizer))
    try:
        vocab = int(model.get_output_embeddings().weight.shape[0])
    except Exception:
        pass
    return LoadedModel(
        source=source, name=name, architecture=arch,
        n_layers=_int(config, "num_hidden_layers", "n_layer"), n_heads=heads,
        n_kv_heads=_int(config, "num_key_value_heads", default=heads), head_dim=head_dim,
        vocab_size=vocab, context=_int(config, "max_position_embeddings", "n_positions", "n_ctx"),
        recomputable=captured and arch in RECOMPUTED_ARCHITECTURES,
        model=model, tokenizer=tokenizer, pieces=Pieces(tokenizer),
    )


def load(source: str, *, cache_dir: str | None = None) -> LoadedModel:
    """Load the causal language model ``source``: a local folder, or a Hugging Face model id.

    Parameters
    ----------
    source
        a folder holding ``config.json``, the weights and the tokenizer
        (``~`` is expanded), or a model id such as ``gpt2`` or
        ``Qwen/Qwen2.5-0.5B``.
    cache_dir
        the Hugging Face cache to look in and download to (default: the
        usual one, ``HF_HOME`` / ``HF_HUB_CACHE``).

    Returns
    -------
    LoadedModel
        in eval mode, float32, ``attn_implementation="eager"`` (so the
        attention weights are the ones the model computes), no gradients.
        The same object for the same resolved source on every call.

    Raises
    ------
    ModelError
        torch or transformers missing, no such folder, a folder without a
        model, not a causal language model, files transformers cannot read,
        an id neither cached nor downloadable; always one line.
    """
    source = str(source).strip()
    if not source:
        raise ModelError(tr("llm.error.no_source"))
    require()
    folder = Path(os.path.expanduser(source))
    if folder.is_dir():
        resolved = str(folder.resolve())
        key = ("folder", resolved)
        name = folder.resolve().name or resolved
    elif folder.exists():
        raise ModelError(tr("llm.error.not_folder", path=source))
    elif _looks_like_path(source):
        raise ModelError(tr("llm.error.no_folder", path=source))
    else:
        resolved = source
        key = ("id", f"{source}\n{cache_dir or ''}")
        name = source
    with LOCK:
        if key in _cache:
            return _cache[key]
        with quiet():
            if key[0] == "folder":
                if not (folder / "config.json").is_file():
                    raise ModelError(tr("llm.error.no_model", path=source))
                model, tokenizer = _from_pretrained(resolved, True, None, source)
            else:
                model, tokenizer = _load_id(source, cache_dir)
            loaded = _describe(resolved, name, model, tokenizer)
        _cache[key] = loaded
        return loaded


def _load_id(model_id: str, cache_dir: str | None) -> tuple[Any, Any]:
    """From the cache; else, if the hub answers, downloaded (ModelError saying why not)."""
    try:
        return _from_pretrained(model_id, True, cache_dir, model_id)
    except ModelError:
        if _in_cache(model_id, cache_dir):
            raise  # it is cached but does not load: say why, do not download it again
        if not _hub_reachable():
            raise ModelError(tr("llm.error.offline", model_id=model_id)) from None
    return _from_pretrained(model_id, False, cache_dir, model_id)


def _in_cache(model_id: str, cache_dir: str | None) -> bool:
    """Whether the cache holds this id's config (then a failure to load is not a missing download)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model_id, "config.json", cache_dir=cache_dir)
        return isinstance(found, str)
    except Exception:
        return False


def forget(source: str | None = None) -> None:
    """Drop ``source`` (every model when None) from the cache, to free its memory or reload it."""
    with LOCK:
        if source is None:
            _cache.clear()
            return
        for key in [k for k, m in _cache.items() if source in (m.source, k[1].split("\n")[0])]:
            del _cache[key]
