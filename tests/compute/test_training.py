"""Tests for compute._training: softmax regression and a one-hidden-layer MLP trained by mini-batch SGD.

The hand-written back-propagation against finite differences of the mean
batch loss and against torch autograd of the same network; seeded runs bit
for bit; the yielded partial runs; training on separable Gaussian blobs;
a distillation run; the weighted loss's balanced class weights (against
scikit-learn); the configuration's checks.  Every run here is small.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sps
from sklearn.metrics import log_loss
from sklearn.utils.class_weight import compute_class_weight

from compute import (
    LOSSES,
    MODELS,
    TRAIN_HISTORY,
    TrainConfig,
    TrainRun,
    balanced_weights,
    batch_mean,
    classifier_features,
    classifier_gradients,
    classifier_logits,
    init_classifier,
    loss_rows,
    smoothed_target,
    train_classifier,
    train_classifier_steps,
    weighted_cross_entropy,
)

torch = pytest.importorskip("torch")
F = torch.nn.functional

#: The history's columns (one value per epoch, epoch 0 the initial weights), as the module documents them.
HISTORY = ("train_loss", "val_loss", "train_nll", "val_nll", "train_accuracy", "val_accuracy",
           "max_logit_norm", "mean_logit_norm", "grad_true_ce", "grad_true_mse")


def blobs(seed, n_per_class=(30, 30, 30), spread=0.6):
    """Gaussian blobs around three well separated centres in 2-D."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 3.0], [-2.6, -1.5], [2.6, -1.5]])
    x = np.concatenate([rng.normal(c, spread, size=(n, 2)) for c, n in zip(centres, n_per_class, strict=True)])
    y = np.concatenate([np.full(n, k) for k, n in enumerate(n_per_class)])
    order = rng.permutation(len(y))
    return x[order], y[order]


def small_params(model, seed=0, n_in=3, k=3, hidden=4):
    rng = np.random.default_rng(seed)
    params = init_classifier(model, n_in, k, hidden, rng)
    for name in params:  # non-zero biases, so their gradients are tested too
        if name.startswith("b"):
            params[name] = rng.normal(size=params[name].shape) * 0.5
    return params


def mean_loss_and_dz(loss, z, t, weights, gamma=2.0, a=0.1):
    y = smoothed_target(z.shape[1], t, a)
    rows, g = loss_rows(loss, z, y, gamma=gamma, weights=weights)
    denom = weights[t].sum() if loss == "weighted" else len(t)
    return rows.sum() / denom, g / denom


# --------------------------------------------------------------------------
# the hand-written gradients
# --------------------------------------------------------------------------
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("model", MODELS)
def test_classifier_gradients_match_finite_differences(model, loss):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 3))
    t = rng.integers(0, 3, size=6)
    w = np.array([0.5, 1.0, 2.0])
    params = small_params(model)
    if model == "mlp":  # away from the ReLU's kink, where the difference quotient means nothing
        assert np.abs(x @ params["W1"] + params["b1"]).min() > 1e-3
    _, dz = mean_loss_and_dz(loss, classifier_logits(params, x), t, w)
    grads = classifier_gradients(params, x, dz)
    assert set(grads) == set(params)
    h = 1e-6
    for name, value in params.items():
        fd = np.empty_like(value)
        for idx in np.ndindex(value.shape):
            moved = []
            for sign in (1, -1):
                p2 = {k: v.copy() for k, v in params.items()}
                p2[name][idx] += sign * h
                moved.append(mean_loss_and_dz(loss, classifier_logits(p2, x), t, w)[0])
            fd[idx] = (moved[0] - moved[1]) / (2 * h)
        assert grads[name].shape == value.shape
        np.testing.assert_allclose(grads[name], fd, rtol=1e-5, atol=1e-8, err_msg=name)


def torch_network(params, x):
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    xt = torch.tensor(x)
    if "W" in tp:
        z = xt @ tp["W"] + tp["b"]
    else:
        z = torch.relu(xt @ tp["W1"] + tp["b1"]) @ tp["W2"] + tp["b2"]
    return tp, z


@pytest.mark.parametrize("model", MODELS)
def test_classifier_gradients_match_torch(model):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(8, 3))
    t = rng.integers(0, 3, size=8)
    params = small_params(model, seed=3, hidden=5)
    tp, z = torch_network(params, x)
    np.testing.assert_allclose(classifier_logits(params, x), z.detach().numpy(), rtol=1e-13, atol=1e-14)
    if model == "mlp":
        h = torch.relu(torch.tensor(x) @ tp["W1"] + tp["b1"]).detach().numpy()
        np.testing.assert_allclose(classifier_features(params, x), h, rtol=1e-13, atol=1e-14)
    else:
        np.testing.assert_array_equal(classifier_features(params, x), x)
    F.cross_entropy(z, torch.tensor(t)).backward()
    dz = (sps.softmax(classifier_logits(params, x), axis=1) - np.eye(3)[t]) / len(t)
    grads = classifier_gradients(params, x, dz)
    for name in params:
        np.testing.assert_allclose(grads[name], tp[name].grad.numpy(), rtol=1e-11, atol=1e-14, err_msg=name)


def test_init_classifier_shapes_and_seed():
    a = init_classifier("mlp", 5, 3, 7, np.random.default_rng(4))
    b = init_classifier("mlp", 5, 3, 7, np.random.default_rng(4))
    assert {k: v.shape for k, v in a.items()} == {"W1": (5, 7), "b1": (7,), "W2": (7, 3), "b2": (3,)}
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    np.testing.assert_array_equal(a["b1"], 0.0)
    lin = init_classifier("linear", 5, 3, 7, np.random.default_rng(4))
    assert {k: v.shape for k, v in lin.items()} == {"W": (5, 3), "b": (3,)}


# --------------------------------------------------------------------------
# class weights and the configuration
# --------------------------------------------------------------------------
@pytest.mark.parametrize("counts", [(10, 10, 10), (40, 10, 5), (1, 7, 3, 20)])
def test_balanced_weights_match_sklearn(counts):
    rng = np.random.default_rng(len(counts))
    labels = rng.permutation(np.concatenate([np.full(n, k) for k, n in enumerate(counts)]))
    k = len(counts)
    want = compute_class_weight("balanced", classes=np.arange(k), y=labels)
    np.testing.assert_allclose(balanced_weights(labels, k), want, rtol=1e-14)
    # a class with no rows gets weight 0 (sklearn refuses such a class)
    np.testing.assert_allclose(balanced_weights(labels, k + 1)[:k], want * k / (k + 1), rtol=1e-14)
    assert balanced_weights(labels, k + 1)[k] == 0.0


@pytest.mark.parametrize("kwargs", [{"model": "cnn"}, {"loss": "hinge"}, {"loss": "CE"},
                                    {"learning_rate": 0.0}, {"learning_rate": -0.1},
                                    {"learning_rate": float("nan")}, {"hidden": 0}, {"batch_size": 0},
                                    {"epochs": -1}])
def test_train_config_refuses(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        TrainConfig(**kwargs)


def test_train_config_accepts_the_known_names():
    for model in MODELS:
        for loss in LOSSES:
            assert TrainConfig(model=model, loss=loss).loss == loss
    assert TrainConfig(epochs=0).epochs == 0


def test_teacher_of_the_wrong_shape_is_refused():
    x, y = blobs(0, (5, 5, 5))
    with pytest.raises(ValueError, match="teacher"):
        train_classifier(TrainConfig(model="linear", epochs=1), x, y, x, y, teacher=np.zeros((15, 4)))


# --------------------------------------------------------------------------
# training runs
# --------------------------------------------------------------------------
def small_config(**kw):
    base = {"model": "mlp", "hidden": 8, "epochs": 4, "learning_rate": 0.3, "batch_size": 16, "seed": 5}
    base.update(kw)
    return TrainConfig(**base)


def test_runs_are_reproducible_bit_for_bit():
    x, y = blobs(1)
    xv, yv = blobs(2, (10, 10, 10))
    a = train_classifier(small_config(), x, y, xv, yv)
    b = train_classifier(small_config(), x, y, xv, yv)
    assert TRAIN_HISTORY == HISTORY and set(a.history) == set(HISTORY)
    for name in HISTORY:
        assert np.array_equal(a.history[name], b.history[name]), name
    assert a.epochs_done == b.epochs_done == 4
    for pa, pb in zip(a.params, b.params, strict=True):
        for name in pa:
            assert np.array_equal(pa[name], pb[name]), name
    c = train_classifier(small_config(seed=6), x, y, xv, yv)
    assert not np.array_equal(a.params[0]["W1"], c.params[0]["W1"])
    assert not np.array_equal(a.history["train_loss"], c.history["train_loss"])


def test_partial_runs_are_prefixes_of_the_final_run():
    x, y = blobs(3)
    config = small_config(model="linear", epochs=5)
    steps = train_classifier_steps(config, x, y, x, y)
    partial = []
    while True:
        try:
            partial.append(next(steps))
        except StopIteration as stop:
            final = stop.value
            break
    assert isinstance(final, TrainRun) and final.finished
    assert [f for f, _ in partial] == pytest.approx([(i + 1) / 5 for i in range(5)])
    for i, (_, run) in enumerate(partial):
        assert run.epochs_done == i + 1 and run.finished == (i == 4)
        for name in HISTORY:
            assert len(run.history[name]) == i + 2
            assert np.array_equal(run.history[name], final.history[name][:i + 2]), name
        for e in range(i + 2):
            for name in final.params[e]:
                assert np.array_equal(run.params[e][name], final.params[e][name])
    np.testing.assert_array_equal(final.at(99)["W"], final.params[-1]["W"])
    np.testing.assert_array_equal(final.at(-3)["W"], final.params[0]["W"])


@pytest.mark.parametrize("model", MODELS)
def test_cross_entropy_training_separates_blobs(model):
    x, y = blobs(4)
    xv, yv = blobs(5, (20, 20, 20))
    run = train_classifier(small_config(model=model, epochs=15, batch_size=10, learning_rate=0.2), x, y, xv, yv)
    hist = run.history
    assert hist["train_accuracy"][-1] >= 0.95 and hist["val_accuracy"][-1] >= 0.9
    assert hist["train_loss"][-1] < 0.5 * hist["train_loss"][0]
    assert hist["val_loss"][-1] < hist["val_loss"][0]
    # the recorded numbers against references, for the first and last weights
    for e in (0, run.epochs_done):
        z = classifier_logits(run.params[e], x)
        p = sps.softmax(z, axis=1)
        assert hist["train_nll"][e] == pytest.approx(log_loss(y, p, labels=[0, 1, 2]), rel=1e-9)
        assert hist["train_loss"][e] == pytest.approx(hist["train_nll"][e], rel=1e-12)  # no smoothing
        assert hist["train_accuracy"][e] == np.mean(z.argmax(axis=1) == y)
        norms = np.sqrt((z ** 2).sum(axis=1))
        assert hist["max_logit_norm"][e] == pytest.approx(norms.max(), rel=1e-12)
        assert hist["mean_logit_norm"][e] == pytest.approx(norms.mean(), rel=1e-12)
        assert hist["grad_true_ce"][e] == pytest.approx(np.mean(1 - p[np.arange(len(y)), y]), rel=1e-10)


def test_one_full_batch_epoch_is_one_gradient_step():
    x, y = blobs(6, (8, 8, 8))
    config = small_config(model="mlp", epochs=1, batch_size=1000, learning_rate=0.5, hidden=6)
    run = train_classifier(config, x, y, x, y)
    start = run.params[0]
    tp, z = torch_network(start, x)
    F.cross_entropy(z, torch.tensor(y)).backward()
    for name in start:
        want = start[name] - 0.5 * tp[name].grad.numpy()
        np.testing.assert_allclose(run.params[1][name], want, rtol=1e-10, atol=1e-13, err_msg=name)


def test_distillation_run_records_hintons_loss():
    x, y = blobs(7)
    teacher_run = train_classifier(small_config(model="mlp", epochs=6), x, y, x, y)
    teacher = classifier_logits(teacher_run.params[-1], x)
    config = small_config(model="linear", epochs=3, temperature=3.0, alpha=0.7, seed=8)
    run = train_classifier(config, x, y, x, y, teacher=teacher)
    assert run.finished
    rows = np.arange(len(y))
    for e in range(run.epochs_done + 1):
        z = classifier_logits(run.params[e], x)
        hard = -sps.log_softmax(z, axis=1)[rows, y]
        q = sps.softmax(teacher / 3.0, axis=1)
        kl = sps.rel_entr(q, sps.softmax(z / 3.0, axis=1)).sum(axis=1)
        assert run.history["train_loss"][e] == pytest.approx(np.mean(0.3 * hard + 0.7 * 9.0 * kl), rel=1e-10)
        assert run.history["val_loss"][e] == run.history["val_nll"][e]
    assert run.history["train_loss"][-1] < run.history["train_loss"][0]
    # one full-batch epoch is one step down the mean Hinton loss (torch autograd)
    full = train_classifier(small_config(model="linear", epochs=1, batch_size=1000, learning_rate=0.4,
                                         temperature=3.0, alpha=0.7), x, y, x, y, teacher=teacher)
    start = full.params[0]
    tp, z = torch_network(start, x)
    q = F.softmax(torch.tensor(teacher) / 3.0, dim=-1)
    kl = F.kl_div(F.log_softmax(z / 3.0, dim=-1), q, reduction="batchmean")
    (0.3 * F.cross_entropy(z, torch.tensor(y)) + 0.7 * 9.0 * kl).backward()
    for name in start:
        want = start[name] - 0.4 * tp[name].grad.numpy()
        np.testing.assert_allclose(full.params[1][name], want, rtol=1e-10, atol=1e-13, err_msg=name)


def test_weighted_run_uses_balanced_weights():
    x, y = blobs(9, (40, 12, 6))
    config = small_config(model="linear", loss="weighted", epochs=3)
    run = train_classifier(config, x, y, x, y)
    want = compute_class_weight("balanced", classes=np.arange(3), y=y)
    np.testing.assert_allclose(run.class_weights, want, rtol=1e-14)
    for e in (0, run.epochs_done):
        z = classifier_logits(run.params[e], x)
        torch_mean = F.cross_entropy(torch.tensor(z), torch.tensor(y), weight=torch.tensor(want)).item()
        assert run.history["train_loss"][e] == pytest.approx(torch_mean, rel=1e-10)
        assert run.history["train_loss"][e] == pytest.approx(
            batch_mean(weighted_cross_entropy(z, y, want), y, want), rel=1e-12)
    given = train_classifier(small_config(model="linear", loss="weighted", epochs=1, class_weights=(1.0, 2.0, 3.0)),
                             x, y, x, y)
    np.testing.assert_array_equal(given.class_weights, [1.0, 2.0, 3.0])
