"""Broken and hostile data files: every loader refuses each with one clear LoadError and changes nothing.

The files come from tests/gui/hostile.py.  Good files are checked against
``numpy.load`` (an independent reader).
"""

from __future__ import annotations

import os
import re
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from gui.model import npfile
from gui.model.attention import AttentionModel, LoadError, load_arrays
from gui.model.sampling import SamplingModel, load_logits
from tests.conftest import run_main
from tests.gui.hostile import attention_files, logit_files, npy_header, qkv


def _state(model) -> dict:
    return {**model.to_dict(), "loaded": model.loaded, "file_path": model.file_path}


# -- the attention loader --------------------------------------------------------------------
def test_every_hostile_attention_file_is_one_clear_refusal(tmp_path):
    model = AttentionModel(n=5)
    before, weights = _state(model), model.result().core.weights
    for name, message in attention_files(tmp_path):
        with pytest.raises(LoadError, match=re.escape(message)) as info:
            model.set_param("file", str(tmp_path / name))
        assert name in str(info.value), name
        assert "\n" not in str(info.value)
        assert _state(model) == before, name
        assert np.array_equal(model.result().core.weights, weights)
    assert not (tmp_path / "PWNED").exists()  # nothing was unpickled


def test_the_refusals_name_the_limits(tmp_path):
    attention_files(tmp_path)
    with pytest.raises(LoadError, match="at most 16 heads, 2048 tokens and d, dᵥ from 1 to 1024"):
        load_arrays(tmp_path / "text.npz")


def test_a_declared_shape_is_never_allocated_before_it_is_checked(tmp_path):
    """A 192-byte file claiming 10**12 elements, or 400 MB it does not hold, allocates nothing."""
    attention_files(tmp_path)
    logit_files(tmp_path)
    for name, load in (("claims.npy", load_arrays), ("empty_data.npy", load_arrays),
                       ("short_member.npz", load_arrays), ("bomb.npz", load_arrays)):
        assert (tmp_path / name).stat().st_size < 8 * 1024**2
        tracemalloc.start()
        try:
            with pytest.raises(LoadError):
                load(tmp_path / name)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 4 * 1024**2, (name, peak)
    assert (tmp_path / "claims.npy").stat().st_size < 256


def test_special_files_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    results = []

    def load() -> None:
        try:
            load_arrays(fifo)
        except LoadError as exc:
            results.append(str(exc))

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    blocked = worker.is_alive()
    if blocked:  # let a reader blocked in open() go, so the test run can end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
    assert not blocked, "opening a FIFO blocked the loader"
    assert results and "pipe.npz" in results[0] and "FIFO" in results[0]
    with pytest.raises(LoadError, match="cannot read .*: it is a folder"):
        load_arrays(tmp_path)
    if Path("/dev/zero").exists():
        with pytest.raises(LoadError, match="character device"):
            load_logits("/dev/zero")


def test_good_files_in_every_layout_match_numpy_load(tmp_path):
    rng = np.random.default_rng(3)
    q = np.asfortranarray(rng.standard_normal((2, 5, 4)))
    k = rng.standard_normal((2, 6, 4)).astype(">f4")
    v = rng.standard_normal((2, 6, 3)).astype(np.float16)
    mask = rng.random((5, 6)) > 0.3
    np.savez_compressed(tmp_path / "a.npz", q=q, k=k, v=v, mask=mask)
    loaded = load_arrays(tmp_path / "a.npz")
    with np.load(tmp_path / "a.npz") as ref:
        for name in ("q", "k", "v"):
            np.testing.assert_array_equal(getattr(loaded, name), ref[name].astype(np.float64))
        np.testing.assert_array_equal(loaded.mask, ref["mask"])
    stack = rng.standard_normal((3, 7, 2))
    np.save(tmp_path / "s.npy", stack)
    loaded = load_arrays(tmp_path / "s.npy")
    np.testing.assert_array_equal(loaded.q[0], np.load(tmp_path / "s.npy")[0])
    row = rng.standard_normal((1, 40)).astype(np.float32)
    np.save(tmp_path / "row.npy", row)
    np.testing.assert_array_equal(load_logits(tmp_path / "row.npy"), np.load(tmp_path / "row.npy")[0])


def test_the_largest_d_is_accepted_and_one_more_is_not(tmp_path):
    q, k, v = (np.zeros((2, 1024)) for _ in range(3))
    np.savez(tmp_path / "max.npz", q=q, k=k, v=v)
    assert load_arrays(tmp_path / "max.npz").q.shape == (1, 2, 1024)
    q, k, v = (np.zeros((2, 1025)) for _ in range(3))
    np.savez(tmp_path / "over.npz", q=q, k=k, v=v)
    with pytest.raises(LoadError, match="dₖ = 1025"):
        load_arrays(tmp_path / "over.npz")


# -- the sampling loader ---------------------------------------------------------------------
def test_every_hostile_logit_file_is_one_clear_refusal(tmp_path):
    model = SamplingModel(vocab=100)
    before = _state(model)
    for name, message in logit_files(tmp_path):
        with pytest.raises(LoadError, match=re.escape(message)) as info:
            model.set_param("logits_file", str(tmp_path / name))
        assert name in str(info.value)
        assert _state(model) == before, name
    assert not (tmp_path / "PWNED").exists()


def test_a_text_file_is_not_called_pickled_data(tmp_path):
    logit_files(tmp_path)
    with pytest.raises(LoadError) as info:
        load_logits(tmp_path / "text.npy")
    assert "pickled" not in str(info.value)
    assert "is a text file, not a NumPy .npy/.npz" in str(info.value)


# -- the shared reader itself ------------------------------------------------------------------
@pytest.mark.parametrize("error", [MemoryError(), OSError(5, "Input/output error"), EOFError("cut")])
def test_each_failure_while_reading_becomes_a_load_error(tmp_path, monkeypatch, error):
    np.save(tmp_path / "a.npy", np.arange(4.0))

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(npfile.np, "empty", fail)
    with pytest.raises(LoadError, match="a.npy"):
        with npfile.open_numpy(tmp_path / "a.npy", expected="floats") as f:
            f.read(max_bytes=1024)


def test_a_declared_size_over_the_callers_limit_is_refused_with_the_limit(tmp_path):
    npy_header(tmp_path / "big.npy", (1000,), data=bytes(8000))
    with npfile.open_numpy(tmp_path / "big.npy", expected="floats") as f:
        assert f.header().shape == (1000,)
        with pytest.raises(LoadError, match=r"7\.8 KiB\); the limit is 1\.0 KiB"):
            f.read(max_bytes=1024)


def test_read_regular_refuses_large_and_special_files(tmp_path):
    (tmp_path / "s.json").write_text("x" * 100)
    assert npfile.read_regular(tmp_path / "s.json", 100) == b"x" * 100
    with pytest.raises(LoadError, match="the limit is 99 bytes"):
        npfile.read_regular(tmp_path / "s.json", 99)
    with pytest.raises(npfile.MissingFile):
        npfile.read_regular(tmp_path / "none.json", 100)


# -- the command line and the window ------------------------------------------------------------
@pytest.mark.parametrize(("option", "view", "name", "message"), [
    ("--file", "attention", "truncated.npz", "damaged or truncated"),
    ("--file", "attention", "d0.npz", "expected each from 1 to 1024"),
    ("--file", "attention", "fifo.npz", "FIFO"),
    ("--logits_file", "sampling", "text.npy", "is a text file"),
])
def test_the_command_line_exits_2_with_one_line(tmp_path, option, view, name, message):
    attention_files(tmp_path)
    logit_files(tmp_path)
    os.mkfifo(tmp_path / "fifo.npz")
    result = run_main("export", "--view", view, option, str(tmp_path / name), "--out", str(tmp_path / "out"),
                      timeout=90)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert message in lines[0]
    assert name in lines[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_dropping_a_hostile_file_shows_why_and_keeps_the_view(make_view, lab, tmp_path):
    attention_files(tmp_path)
    view = make_view("attention")
    model = lab.models["attention"]
    before = _state(model)
    for name in ("truncated.npz", "d0.npz", "bomb.npz"):
        assert not view.load_path(tmp_path / name)
        assert name in view.note.text()
        assert _state(model) == before
    logit_files(tmp_path)
    lab.models["sampling"].vocab = 300
    sampling = make_view("sampling")
    assert not sampling.load_path(tmp_path / "text.npy")
    assert "is a text file" in sampling.note.text()
    assert lab.models["sampling"].logits == "zipf"
    q, k, v = qkv()
    np.savez(tmp_path / "fine.npz", q=q, k=k, v=v)
    assert view.load_path(tmp_path / "fine.npz")
    assert model.source == "file"
