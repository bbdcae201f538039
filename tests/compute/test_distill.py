"""Tests for compute._distill: soft targets, dark knowledge, Hinton's distillation loss, InfoNCE.

References: the softened distribution by hand (``p**(1/T) / sum``), SciPy's
softmax and entropy, torch autograd (float64) for the losses and their
gradients, central finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sps
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from compute import (
    InfoNCE,
    cross_entropy,
    cross_entropy_grad,
    dark_knowledge,
    distillation_loss,
    info_nce,
    soft_targets,
)

torch = pytest.importorskip("torch")
F = torch.nn.functional

#: The articles' teacher: cat, dog, bird.
TEACHER = np.array([0.95, 0.04, 0.01])


def central_diff(f, x, h=1e-6):
    """d f(x) / d x for a scalar f of an array x (any shape)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        out[idx] = (float(f(x + e)) - float(f(x - e))) / (2 * h)
    return out


def torch_hinton(z, v, labels, t, alpha):
    """Per-row (1 - a) CE + a T^2 KL(softmax(v/T) || softmax(z/T)) and its gradient, by autograd."""
    zt = torch.tensor(z, requires_grad=True)
    q = F.softmax(torch.tensor(v) / t, dim=-1)
    hard = F.cross_entropy(zt, torch.tensor(labels), reduction="none")
    kl = F.kl_div(F.log_softmax(zt / t, dim=-1), q, reduction="none").sum(-1)
    loss = (1 - alpha) * hard + alpha * t * t * kl
    loss.sum().backward()
    return loss.detach().numpy(), zt.grad.numpy()


# --------------------------------------------------------------------------
# soft targets and dark knowledge
# --------------------------------------------------------------------------
def test_articles_teacher_softened_by_hand():
    for t in (1.0, 2.0, 4.0, 10.0):
        by_hand = TEACHER ** (1 / t) / (TEACHER ** (1 / t)).sum()
        np.testing.assert_allclose(soft_targets(probabilities=TEACHER, temperature=t), by_hand, rtol=1e-14)
    np.testing.assert_allclose(soft_targets(probabilities=TEACHER, temperature=1.0), TEACHER, rtol=1e-14)
    # the module's own worked example (0.564 / 0.255 / 0.181; entropy 0.22 and 0.98 nats)
    at4 = TEACHER ** 0.25 / (TEACHER ** 0.25).sum()
    np.testing.assert_allclose(at4, [0.564, 0.255, 0.181], atol=1e-3)
    logits = np.log(TEACHER)
    assert dark_knowledge(logits, 1.0) == pytest.approx(scipy.stats.entropy(TEACHER), rel=1e-13)
    assert dark_knowledge(logits, 4.0) == pytest.approx(scipy.stats.entropy(at4), rel=1e-13)
    assert round(float(dark_knowledge(logits, 1.0)), 2) == 0.22
    assert round(float(dark_knowledge(logits, 4.0)), 2) == 0.98


@settings(max_examples=40, deadline=None)
@given(p=hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(2, 6)), elements=st.floats(1e-6, 1)),
       t=st.floats(0.1, 20))
def test_soft_targets_from_probabilities_and_logits(p, t):
    p = p / p.sum(axis=-1, keepdims=True)
    want = sps.softmax(np.log(p) / t, axis=-1)
    np.testing.assert_allclose(soft_targets(probabilities=p, temperature=t), want, rtol=1e-12, atol=1e-15)
    z = np.log(p) * 3.0
    np.testing.assert_allclose(soft_targets(z, t), sps.softmax(z / t, axis=-1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dark_knowledge(z, t), scipy.stats.entropy(sps.softmax(z / t, axis=-1), axis=-1),
                               rtol=1e-10, atol=1e-13)


def test_soft_targets_zero_probability_and_one_hot_teacher():
    got = soft_targets(probabilities=[0.5, 0.5, 0.0], temperature=3.0)
    np.testing.assert_array_equal(got, [0.5, 0.5, 0.0])
    assert dark_knowledge(np.array([0.0, -np.inf, -np.inf]), 5.0) == 0.0
    # higher temperature: more dark knowledge (entropy grows towards log K)
    z = np.log(TEACHER)
    h = [float(dark_knowledge(z, t)) for t in (0.5, 1, 2, 4, 8, 100)]
    assert np.all(np.diff(h) > 0) and h[-1] < np.log(3)


def test_soft_targets_bad_arguments():
    with pytest.raises(ValueError, match="not both"):
        soft_targets([1.0, 2.0], 2.0, probabilities=[0.5, 0.5])
    with pytest.raises(ValueError, match="not both"):
        soft_targets(temperature=2.0)
    for bad in ([-0.1, 1.1], [np.nan, 1.0], [np.inf, 0.0]):
        with pytest.raises(ValueError, match="probabilities"):
            soft_targets(probabilities=bad)
    for bad_t in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="temperature"):
            soft_targets([1.0, 2.0], bad_t)


# --------------------------------------------------------------------------
# the distillation loss
# --------------------------------------------------------------------------
@pytest.mark.parametrize(("t", "alpha"), [(1.0, 0.5), (4.0, 0.9), (2.0, 0.0), (10.0, 1.0), (0.5, 0.3)])
def test_distillation_loss_matches_torch(t, alpha):
    rng = np.random.default_rng(int(t * 10 + alpha * 100))
    z = rng.normal(size=(6, 5)) * 2
    v = rng.normal(size=(6, 5)) * 3
    labels = rng.integers(0, 5, size=6)
    loss, grad = distillation_loss(z, v, labels, t, alpha)
    want_loss, want_grad = torch_hinton(z, v, labels, t, alpha)
    assert loss.shape == (6,) and grad.shape == (6, 5)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10, atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(z=hnp.arrays(np.float64, (2, 4), elements=st.floats(-5, 5)),
       v=hnp.arrays(np.float64, (2, 4), elements=st.floats(-5, 5)),
       labels=hnp.arrays(np.int64, 2, elements=st.integers(0, 3)),
       t=st.floats(0.5, 10), alpha=st.floats(0, 1))
def test_distillation_gradient_matches_finite_differences(z, v, labels, t, alpha):
    _, grad = distillation_loss(z, v, labels, t, alpha)
    fd = central_diff(lambda s: distillation_loss(s, v, labels, t, alpha)[0].sum(), z)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


def test_distillation_special_cases():
    rng = np.random.default_rng(2)
    z = rng.normal(size=(5, 3))
    v = rng.normal(size=(5, 3)) * 4
    labels = rng.integers(0, 3, size=5)
    loss, grad = distillation_loss(z, v, labels, 4.0, 0.0)  # alpha = 0: plain cross-entropy
    np.testing.assert_allclose(loss, cross_entropy(z, labels), rtol=1e-14)
    np.testing.assert_allclose(grad, cross_entropy_grad(z, labels), rtol=1e-14, atol=1e-16)
    loss, grad = distillation_loss(v, v, labels, 3.0, 1.0)  # the student is the teacher: nothing to learn
    np.testing.assert_allclose(loss, 0.0, atol=1e-13)
    np.testing.assert_allclose(grad, 0.0, atol=1e-15)
    # the soft term by hand: T^2 KL(q || softmax(z / T)), scipy's rel_entr
    q, s = sps.softmax(v / 2.0, axis=1), sps.softmax(z / 2.0, axis=1)
    loss, _ = distillation_loss(z, v, labels, 2.0, 1.0)
    np.testing.assert_allclose(loss, 4.0 * sps.rel_entr(q, s).sum(axis=1), rtol=1e-12)


def test_distillation_bad_arguments():
    z = np.zeros((2, 3))
    with pytest.raises(ValueError, match="same"):
        distillation_loss(z, np.zeros((2, 4)), [0, 1], 2.0, 0.5)
    with pytest.raises(ValueError, match="same"):
        distillation_loss(np.zeros(3), np.zeros(3), [0], 2.0, 0.5)
    for alpha in (-0.1, 1.1, np.nan):
        with pytest.raises(ValueError, match="alpha"):
            distillation_loss(z, z, [0, 1], 2.0, alpha)
    for t in (0.0, -2.0, np.inf):
        with pytest.raises(ValueError, match="temperature"):
            distillation_loss(z, z, [0, 1], t, 0.5)


# --------------------------------------------------------------------------
# InfoNCE
# --------------------------------------------------------------------------
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("tau", [0.07, 0.5, 2.0])
def test_info_nce_matches_torch(tau, symmetric):
    rng = np.random.default_rng(int(tau * 100))
    b = 6
    s = rng.uniform(-1, 1, size=(b, b))
    s[np.arange(b), np.arange(b)] += 0.3
    got = info_nce(s, tau, symmetric=symmetric)
    assert isinstance(got, InfoNCE) and got.symmetric is symmetric and got.tau == tau
    st_ = torch.tensor(s, requires_grad=True)
    arange = torch.arange(b)
    rows = F.cross_entropy(st_ / tau, arange)
    loss = (rows + F.cross_entropy(st_.T / tau, arange)) / 2 if symmetric else rows
    loss.backward()
    assert got.loss == pytest.approx(loss.item(), rel=1e-12)
    np.testing.assert_allclose(got.grad, st_.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(got.row_probabilities, sps.softmax(s / tau, axis=1), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got.column_probabilities, sps.softmax(s / tau, axis=0), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got.positive, np.diagonal(sps.softmax(s / tau, axis=1)), rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(s=hnp.arrays(np.float64, st.integers(1, 5).map(lambda b: (b, b)), elements=st.floats(-1, 1)),
       margin=st.floats(0, 1), tau=st.floats(0.02, 2), factor=st.floats(0.1, 0.9))
def test_smaller_tau_raises_the_positive_when_the_diagonal_is_the_row_max(s, margin, tau, factor):
    b = len(s)
    s = s.copy()
    s[np.arange(b), np.arange(b)] = s.max(axis=1) + margin
    hot = info_nce(s, tau).positive
    cold = info_nce(s, tau * factor).positive
    assert np.all(cold >= hot * (1 - 1e-12))
    if margin > 0.05 and b > 1:  # strictly, unless already rounded to 1
        room = hot < 1 - 1e-9
        assert np.all(cold[room] > hot[room])


def test_info_nce_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    s = rng.normal(size=(4, 4))
    for symmetric in (True, False):
        got = info_nce(s, 0.3, symmetric=symmetric)
        fd = central_diff(lambda m, sym=symmetric: info_nce(m, 0.3, symmetric=sym).loss, s)
        np.testing.assert_allclose(got.grad, fd, rtol=1e-6, atol=1e-8)


def test_info_nce_bad_arguments():
    for bad in (np.zeros((2, 3)), np.zeros(3), np.zeros((0, 0))):
        with pytest.raises(ValueError, match="square"):
            info_nce(bad, 0.1)
    for tau in (0.0, -0.1, np.nan):
        with pytest.raises(ValueError, match="tau"):
            info_nce(np.eye(2), tau)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), b=st.integers(1, 12))
def test_info_nce_sweep_is_info_nce_at_each_tau(seed, b):
    from compute import info_nce, info_nce_sweep

    s = np.random.default_rng(seed).uniform(-1, 1, size=(b, b))
    taus = np.geomspace(0.01, 1.0, 6)
    losses, positive = info_nce_sweep(s, taus)
    for i, tau in enumerate(taus):
        r = info_nce(s, tau)
        assert losses[i] == pytest.approx(r.loss, rel=1e-12, abs=1e-15)
        assert positive[i] == pytest.approx(r.positive.mean(), rel=1e-12, abs=1e-300)
