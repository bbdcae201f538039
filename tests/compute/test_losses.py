"""Tests for compute._losses: softmax + MSE, focal and class-weighted cross-entropy.

Values and gradients against torch autograd (float64) and central finite
differences; the special cases against cross-entropy; the saturation of the
softmax + MSE gradient (the articles' reason not to train softmax with MSE);
huge logits; PyTorch's weighted batch mean; argument errors.

pyproject.toml turns every warning into an error, so a RuntimeWarning inside
``compute`` fails these tests.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from compute import (
    LOSSES,
    batch_mean,
    cross_entropy,
    cross_entropy_grad,
    focal_loss,
    focal_loss_grad,
    loss_rows,
    softmax_mse,
    softmax_mse_grad,
    weighted_cross_entropy,
    weighted_cross_entropy_grad,
)

torch = pytest.importorskip("torch")
F = torch.nn.functional

KINDS = ("cross_entropy", "mse", "focal", "weighted")
CONVENTIONS = ("others", "pytorch")


def central_diff(f, x, h=1e-6):
    """d f(x) / d x_j by central differences for a scalar f of a vector x."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        out[j] = (float(f(x + e)) - float(f(x - e))) / (2 * h)
    return out


def loop_target(k, target, a, convention):
    """The smoothed target distributions, written out class by class (rows of ``target``)."""
    rows = []
    for t in np.atleast_1d(target):
        row = []
        for c in range(k):
            if convention == "others":
                row.append(1 - a if c == t else a / (k - 1))
            else:
                row.append(1 - a + a / k if c == t else a / k)
        rows.append(row)
    return np.array(rows)


def ours(kind, z, t, *, gamma=2.0, w=None, a=0.0, conv="others"):
    """(loss, grad) from the public functions."""
    if kind == "cross_entropy":
        return cross_entropy(z, t, a, conv), cross_entropy_grad(z, t, a, conv)
    if kind == "mse":
        return softmax_mse(z, t, a, conv), softmax_mse_grad(z, t, a, conv)
    if kind == "focal":
        return focal_loss(z, t, gamma, a, conv), focal_loss_grad(z, t, gamma, a, conv)
    return weighted_cross_entropy(z, t, w, a, conv), weighted_cross_entropy_grad(z, t, w, a, conv)


def torch_reference(kind, z, t, *, gamma=2.0, w=None, a=0.0, conv="others", y=None):
    """(per-row loss, dL/dz) by torch autograd in float64 for 2-D logits ``z``.

    ``y`` (a target distribution) replaces the smoothed hard ``t`` when given.
    """
    zt = torch.tensor(np.asarray(z, dtype=np.float64), requires_grad=True)
    tt = torch.tensor(np.asarray(t, dtype=np.int64))
    k = zt.shape[-1]
    yt = torch.tensor(loop_target(k, t, a, conv) if y is None else np.asarray(y, dtype=np.float64))
    wt = None if w is None else torch.tensor(np.asarray(w, dtype=np.float64))
    lp = F.log_softmax(zt, dim=-1)
    p = lp.exp()
    if kind == "mse":
        loss = ((p - yt) ** 2).sum(-1)
    elif kind == "focal":
        loss = -(yt * (1 - p) ** gamma * lp).sum(-1)
    elif y is None and conv == "pytorch":  # torch's own label smoothing
        loss = F.cross_entropy(zt, tt, weight=wt if kind == "weighted" else None, reduction="none",
                               label_smoothing=a)
    else:  # class-probability targets (with per-class weights for "weighted")
        loss = F.cross_entropy(zt, yt, weight=wt if kind == "weighted" else None, reduction="none")
    loss.sum().backward()
    return loss.detach().numpy(), zt.grad.numpy()


# --------------------------------------------------------------------------
# against torch autograd
# --------------------------------------------------------------------------
@pytest.mark.parametrize("a", [0.0, 0.2])
@pytest.mark.parametrize("conv", CONVENTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_values_and_gradients_match_torch(kind, conv, a):
    rng = np.random.default_rng(7)
    z = rng.normal(size=(6, 4)) * 3
    t = rng.integers(0, 4, size=6)
    w = rng.uniform(0.2, 3.0, size=4)
    loss, grad = ours(kind, z, t, gamma=1.5, w=w, a=a, conv=conv)
    want_loss, want_grad = torch_reference(kind, z, t, gamma=1.5, w=w, a=a, conv=conv)
    assert loss.shape == (6,) and grad.shape == (6, 4)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("gamma", [0.0, 0.5, 5.0])
def test_focal_matches_torch_for_gammas(gamma):
    rng = np.random.default_rng(int(gamma * 10))
    z = rng.normal(size=(5, 3)) * 2
    t = rng.integers(0, 3, size=5)
    loss, grad = ours("focal", z, t, gamma=gamma, a=0.1)
    want_loss, want_grad = torch_reference("focal", z, t, gamma=gamma, a=0.1)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("kind", LOSSES)
def test_loss_rows_matches_torch_with_soft_targets(kind):
    rng = np.random.default_rng(11)
    z = rng.normal(size=(5, 4)) * 2
    y = rng.dirichlet(np.ones(4), size=5)
    w = rng.uniform(0.5, 2.0, size=4)
    loss, grad = loss_rows(kind, z, y, gamma=2.5, weights=w)
    want_loss, want_grad = torch_reference(kind, z, np.zeros(5, dtype=int), gamma=2.5,
                                           w=w if kind == "weighted" else None, y=y)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10, atol=1e-13)


def test_loss_rows_weighted_defaults_to_ones():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(4, 3))
    y = loop_target(3, [0, 1, 2, 1], 0.1, "others")
    for got, want in zip(loss_rows("weighted", z, y), loss_rows("cross_entropy", z, y), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-16)


def test_class_axis_and_dtype():
    rng = np.random.default_rng(4)
    z = rng.normal(size=(5, 3))
    t = rng.integers(0, 3, size=5)
    np.testing.assert_allclose(focal_loss(z.T, t, 2.0, axis=0), focal_loss(z, t, 2.0), rtol=1e-15)
    np.testing.assert_allclose(softmax_mse_grad(z.T, t, axis=0), softmax_mse_grad(z, t).T, rtol=1e-15)
    z32 = z.astype(np.float32)
    assert focal_loss(z32, t).dtype == np.float32 and focal_loss_grad(z32, t).dtype == np.float32
    np.testing.assert_allclose(focal_loss(z32, t), focal_loss(z32.astype(np.float64), t), rtol=1e-5)
    one = softmax_mse([1.0, 2.0, 0.5], 1)
    assert one.shape == () and one.dtype == np.float64


# --------------------------------------------------------------------------
# against finite differences (Hypothesis)
# --------------------------------------------------------------------------
@st.composite
def loss_cases(draw):
    k = draw(st.integers(2, 6))
    z = draw(hnp.arrays(np.float64, k, elements=st.floats(-5, 5)))
    t = draw(st.integers(0, k - 1))
    gamma = draw(st.floats(0, 5))
    a = draw(st.floats(0, 0.5))
    conv = draw(st.sampled_from(CONVENTIONS))
    w = draw(hnp.arrays(np.float64, k, elements=st.floats(0, 4)))
    return z, t, gamma, a, conv, w


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40, deadline=None)
@given(case=loss_cases())
def test_gradients_match_finite_differences(kind, case):
    z, t, gamma, a, conv, w = case
    kw = {"gamma": gamma, "w": w, "a": a, "conv": conv}
    _, grad = ours(kind, z, t, **kw)
    fd = central_diff(lambda v: ours(kind, v, t, **kw)[0], z)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(case=loss_cases())
def test_gradients_sum_to_zero_over_classes(case):
    z, t, gamma, a, conv, w = case
    for kind in ("mse", "focal", "weighted"):
        _, grad = ours(kind, z, t, gamma=gamma, w=w, a=a, conv=conv)
        scale = 1 + np.abs(grad).sum()
        assert abs(grad.sum()) <= 1e-13 * scale


# --------------------------------------------------------------------------
# special cases
# --------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(case=loss_cases())
def test_focal_gamma_zero_and_unit_weights_are_cross_entropy(case):
    z, t, _, a, conv, _ = case
    ce, ce_grad = cross_entropy(z, t, a, conv), cross_entropy_grad(z, t, a, conv)
    for loss, grad in (ours("focal", z, t, gamma=0.0, a=a, conv=conv),
                       ours("weighted", z, t, w=np.ones(len(z)), a=a, conv=conv)):
        np.testing.assert_allclose(loss, ce, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(grad, ce_grad, rtol=1e-12, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(case=loss_cases())
def test_hard_target_weighted_gradient_is_w_t_times_p_minus_y(case):
    z, t, _, _, _, w = case
    y = np.eye(len(z))[t]
    want = w[t] * (sps.softmax(z) - y)
    np.testing.assert_allclose(weighted_cross_entropy_grad(z, t, w), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(weighted_cross_entropy(z, t, w), -w[t] * sps.log_softmax(z)[t],
                               rtol=1e-12, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(case=loss_cases())
def test_loss_ranges(case):
    z, t, gamma, a, conv, _ = case
    mse = softmax_mse(z, t, a, conv)
    assert 0 <= mse <= 2
    # (1 - p)^gamma <= 1: the focal loss is at most the cross-entropy, and not negative
    focal = focal_loss(z, t, gamma, a, conv)
    assert 0 <= focal <= cross_entropy(z, t, a, conv) * (1 + 1e-12) + 1e-15


def test_mse_gradient_saturates_both_ways_but_cross_entropy_does_not():
    """softmax + MSE: the true class's gradient dies when p_true -> 1 and when p_true -> 0 (confidently
    wrong); cross-entropy's p - y at the true class tends to -1 when wrong."""
    s = np.array([-20.0, -12.0, -8.0, -4.0, 0.0, 4.0, 8.0, 12.0, 20.0])
    z = np.stack([s, np.zeros_like(s), np.zeros_like(s)], axis=1)
    t = np.zeros(len(s), dtype=int)
    p_true = sps.softmax(z, axis=1)[:, 0]
    _, torch_grad = torch_reference("mse", z, t)
    mse_true = np.abs(softmax_mse_grad(z, t)[:, 0])
    np.testing.assert_allclose(mse_true, np.abs(torch_grad[:, 0]), rtol=1e-6, atol=1e-300)
    ce_true = np.abs(cross_entropy_grad(z, t)[:, 0])
    np.testing.assert_allclose(ce_true, 1 - p_true, rtol=1e-12)
    wrong, right = s < 0, s > 0
    # going away from the middle, the MSE gradient only shrinks, on both sides
    assert np.all(np.diff(mse_true[wrong]) > 0) and np.all(np.diff(mse_true[right]) < 0)
    assert mse_true[0] < 1e-8 and mse_true[-1] < 1e-8  # p_true = 2e-9 and 1 - 4e-9
    assert ce_true[0] > 1 - 1e-8  # wrong: the full-size gradient
    assert np.all(ce_true[wrong] > 0.98)
    far = s <= -8
    assert np.all(ce_true[far] > 1000 * mse_true[far])


@pytest.mark.parametrize("kind", KINDS)
def test_huge_logits_give_finite_results(kind):
    z = np.array([[1e4, -1e4, 0.0], [0.0, 1e4, 1e4], [-1e4, -1e4, 1e4], [1e4, 0.0, 0.0]])
    t = np.array([1, 2, 2, 0])
    w = np.array([1.0, 2.0, 0.5])
    for a, conv in ((0.0, "others"), (0.1, "others"), (0.1, "pytorch")):
        loss, grad = ours(kind, z, t, gamma=2.0, w=w, a=a, conv=conv)
        assert np.all(np.isfinite(loss)) and np.all(np.isfinite(grad))
        want_loss, want_grad = torch_reference(kind, z, t, gamma=2.0, w=w, a=a, conv=conv)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-10, atol=1e-12)
    rows_loss, rows_grad = loss_rows(kind, z, loop_target(3, t, 0.1, "others"), weights=w)
    assert np.all(np.isfinite(rows_loss)) and np.all(np.isfinite(rows_grad))


# --------------------------------------------------------------------------
# the batch mean
# --------------------------------------------------------------------------
@pytest.mark.parametrize("a", [0.0, 0.15])
def test_batch_mean_with_weights_matches_torch_mean(a):
    rng = np.random.default_rng(21)
    z = rng.normal(size=(9, 4)) * 2
    t = rng.integers(0, 4, size=9)
    w = rng.uniform(0.1, 4.0, size=4)
    losses = weighted_cross_entropy(z, t, w, a, "pytorch")
    want = F.cross_entropy(torch.tensor(z), torch.tensor(t), weight=torch.tensor(w), reduction="mean",
                           label_smoothing=a).item()
    assert batch_mean(losses, t, w) == pytest.approx(want, rel=1e-12)
    plain = F.cross_entropy(torch.tensor(z), torch.tensor(t), reduction="mean", label_smoothing=a).item()
    assert batch_mean(cross_entropy(z, t, a, "pytorch")) == pytest.approx(plain, rel=1e-12)


# --------------------------------------------------------------------------
# argument errors
# --------------------------------------------------------------------------
@pytest.mark.parametrize("gamma", [-1e-12, float("nan"), 101.0])
def test_bad_gamma(gamma):
    with pytest.raises(ValueError, match="gamma"):
        focal_loss([1.0, 2.0, 3.0], 0, gamma)
    with pytest.raises(ValueError, match="gamma"):
        focal_loss_grad([1.0, 2.0, 3.0], 0, gamma)
    with pytest.raises(ValueError, match="gamma"):
        loss_rows("focal", np.zeros((2, 3)), np.full((2, 3), 1 / 3), gamma=gamma)


@pytest.mark.parametrize("weights", [[1.0, 2.0], [[1.0, 1.0, 1.0]], [1.0, -0.1, 1.0], [1.0, float("nan"), 1.0]])
def test_bad_weights(weights):
    with pytest.raises(ValueError, match="weights"):
        weighted_cross_entropy([1.0, 2.0, 3.0], 0, weights)
    with pytest.raises(ValueError, match="weights"):
        weighted_cross_entropy_grad(np.zeros((2, 3)), [0, 1], weights)


def test_unknown_loss_name():
    for name in ("hinge", "CrossEntropy", ""):
        with pytest.raises(ValueError, match="loss must be one of"):
            loss_rows(name, np.zeros((2, 3)), np.full((2, 3), 1 / 3))
