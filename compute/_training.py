"""Softmax classifiers trained by mini-batch gradient descent, with the gradients written out.

Plain NumPy, float64.  Two models:

* ``"linear"``: softmax regression, ``z = x W + b``;
* ``"mlp"``: one hidden layer, ``h = relu(x W1 + b1)``, ``z = h W2 + b2``.

A step takes a mini-batch, computes the logits, the loss's gradient with
respect to them (``p - y`` for cross-entropy; see :mod:`compute._losses`),
and back-propagates it by hand: ``dW2 = h^T dz``, ``dh = dz W2^T``,
``dh[h <= 0] = 0``, ``dW1 = x^T dh``.  No autograd is used; the tests check
these against finite differences and torch.

:func:`train_classifier_steps` is a generator: it yields ``(fraction, TrainRun so far)``
after every epoch and returns the finished :class:`TrainRun`.  Everything
random (the initial weights, each epoch's order) comes from one
``np.random.default_rng(seed)``, so a seed gives the same run bit for bit.
A distillation run passes the teacher's logits for the training rows: the
loss is then Hinton's mixture (:func:`compute.distillation_loss`).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field

import numpy as np

from compute._distill import distillation_loss
from compute._gradients import smoothed_target
from compute._losses import LOSSES, loss_rows
from compute._softmax import log_softmax

__all__ = [
    "TRAIN_HISTORY",
    "MODELS",
    "balanced_weights",
    "classifier_features",
    "TrainConfig",
    "TrainRun",
    "classifier_logits",
    "classifier_gradients",
    "init_classifier",
    "train_classifier",
    "train_classifier_steps",
]

MODELS = ("linear", "mlp")
#: The history's columns, one value per epoch (epoch 0 is the initial weights).
TRAIN_HISTORY = ("train_loss", "val_loss", "train_nll", "val_nll", "train_accuracy", "val_accuracy",
           "max_logit_norm", "mean_logit_norm", "grad_true_ce", "grad_true_mse")

Params = dict[str, np.ndarray]


@dataclass(frozen=True)
class TrainConfig:
    """What a training run needs besides the data."""

    model: str = "mlp"
    hidden: int = 64
    epochs: int = 30
    learning_rate: float = 0.3
    batch_size: int = 32
    loss: str = "cross_entropy"
    label_smoothing: float = 0.0
    convention: str = "others"
    gamma: float = 2.0
    #: the weighted loss's class weights (None: inverse class frequency of the training labels)
    class_weights: tuple[float, ...] | None = None
    seed: int = 0
    #: distillation (used when the teacher's logits are given)
    temperature: float = 4.0
    alpha: float = 0.9

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}, got {self.model!r}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        for name in ("hidden", "epochs", "batch_size"):
            if int(getattr(self, name)) < (0 if name == "epochs" else 1):
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")


def init_classifier(model: str, n_in: int, n_out: int, hidden: int, rng: np.random.Generator) -> Params:
    """Initial weights: He-normal for the ReLU layer, Glorot-normal for the logits, zero biases."""
    if model == "linear":
        return {"W": rng.normal(0.0, np.sqrt(2.0 / (n_in + n_out)), (n_in, n_out)), "b": np.zeros(n_out)}
    return {"W1": rng.normal(0.0, np.sqrt(2.0 / n_in), (n_in, hidden)), "b1": np.zeros(hidden),
            "W2": rng.normal(0.0, np.sqrt(2.0 / (hidden + n_out)), (hidden, n_out)), "b2": np.zeros(n_out)}


def classifier_features(params: Params, x: np.ndarray) -> np.ndarray:
    """What the last layer reads: the hidden activations (MLP) or the input itself (linear)."""
    if "W" in params:
        return x
    return np.maximum(x @ params["W1"] + params["b1"], 0.0)


def classifier_logits(params: Params, x: np.ndarray) -> np.ndarray:
    """The logits of the rows of ``x``."""
    if "W" in params:
        return x @ params["W"] + params["b"]
    return classifier_features(params, x) @ params["W2"] + params["b2"]


def classifier_gradients(params: Params, x: np.ndarray, dz: np.ndarray) -> Params:
    """Back-propagate ``dz = dLoss/dlogits`` (already divided by the batch) to every weight."""
    if "W" in params:
        return {"W": x.T @ dz, "b": dz.sum(axis=0)}
    pre = x @ params["W1"] + params["b1"]
    h = np.maximum(pre, 0.0)
    dh = dz @ params["W2"].T
    dh[pre <= 0] = 0.0
    return {"W1": x.T @ dh, "b1": dh.sum(axis=0), "W2": h.T @ dz, "b2": dz.sum(axis=0)}


def balanced_weights(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Inverse class frequency, ``N / (K count_k)`` (1 for every class of a balanced set)."""
    counts = np.bincount(labels, minlength=n_classes).astype(np.float64)
    return np.where(counts > 0, len(labels) / (n_classes * np.maximum(counts, 1)), 0.0)


@dataclass(frozen=True)
class TrainRun:
    """A training run: its configuration, the curves, and the weights after every epoch."""

    config: TrainConfig
    history: dict[str, np.ndarray]  # TRAIN_HISTORY -> (epochs_done + 1,)
    params: tuple[Params, ...]  # the weights after 0, 1, ..., epochs_done epochs
    class_weights: np.ndarray = field(repr=False)

    @property
    def epochs_done(self) -> int:
        return len(self.params) - 1

    @property
    def finished(self) -> bool:
        return self.epochs_done == self.config.epochs

    def at(self, epoch: int) -> Params:
        """The weights after ``epoch`` epochs (clamped to the epochs done)."""
        return self.params[min(max(int(epoch), 0), self.epochs_done)]


def _targets(config: TrainConfig, labels: np.ndarray, k: int) -> np.ndarray:
    return smoothed_target(k, labels, config.label_smoothing, config.convention)


def _true_class_gradients(z: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """Mean |dL/dz_true| under cross-entropy (1 - p_t) and under softmax + MSE."""
    k = z.shape[1]
    y = smoothed_target(k, labels)
    rows = np.arange(len(labels))
    _, g_ce = loss_rows("cross_entropy", z, y)
    _, g_mse = loss_rows("mse", z, y)
    return float(np.abs(g_ce[rows, labels]).mean()), float(np.abs(g_mse[rows, labels]).mean())


def _measure(config: TrainConfig, params: Params, data, weights: np.ndarray, teacher) -> dict[str, float]:
    x_tr, t_tr, x_va, t_va = data
    out: dict[str, float] = {}
    for split, x, t in (("train", x_tr, t_tr), ("val", x_va, t_va)):
        z = classifier_logits(params, x)
        k = z.shape[1]
        rows = np.arange(len(t))
        lp = log_softmax(z, axis=-1)
        out[f"{split}_nll"] = float(-lp[rows, t].mean())
        out[f"{split}_accuracy"] = float((z.argmax(axis=1) == t).mean())
        if teacher is not None and split == "train":
            loss, _ = distillation_loss(z, teacher, t, config.temperature, config.alpha)
            out["train_loss"] = float(loss.mean())
        elif teacher is not None:
            out["val_loss"] = out["val_nll"]
        else:
            losses, _ = loss_rows(config.loss, z, _targets(config, t, k), gamma=config.gamma, weights=weights)
            out[f"{split}_loss"] = float(losses.sum() / (weights[t].sum() if config.loss == "weighted"
                                                          else len(t)))
        if split == "train":
            norms = np.linalg.norm(z, axis=1)
            out["max_logit_norm"] = float(norms.max())
            out["mean_logit_norm"] = float(norms.mean())
            out["grad_true_ce"], out["grad_true_mse"] = _true_class_gradients(z, t)
    return out


def train_classifier_steps(config: TrainConfig, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray,
                y_val: np.ndarray, *, teacher: np.ndarray | None = None,
                n_classes: int | None = None) -> Generator[tuple[float, TrainRun], None, TrainRun]:
    """Train ``config.model`` on the training rows; yield ``(fraction, run so far)`` after each epoch.

    ``teacher``: the teacher's logits for the training rows (distillation at
    ``config.temperature`` with weight ``config.alpha``).
    """
    x_tr = np.ascontiguousarray(x_train, dtype=np.float64)
    x_va = np.ascontiguousarray(x_val, dtype=np.float64)
    t_tr, t_va = np.asarray(y_train, dtype=np.intp), np.asarray(y_val, dtype=np.intp)
    k = int(n_classes if n_classes is not None else max(t_tr.max(), t_va.max()) + 1)
    if teacher is not None:
        teacher = np.asarray(teacher, dtype=np.float64)
        if teacher.shape != (len(t_tr), k):
            raise ValueError(f"teacher logits must be ({len(t_tr)}, {k}), got {teacher.shape}")
    weights = (np.asarray(config.class_weights, dtype=np.float64) if config.class_weights is not None
               else balanced_weights(t_tr, k))
    rng = np.random.default_rng(config.seed)
    params = init_classifier(config.model, x_tr.shape[1], k, config.hidden, rng)
    y_tr = _targets(config, t_tr, k)
    data = (x_tr, t_tr, x_va, t_va)
    history: dict[str, list[float]] = {name: [] for name in TRAIN_HISTORY}
    snapshots: list[Params] = []

    def record() -> TrainRun:
        for name, value in _measure(config, params, data, weights, teacher).items():
            history[name].append(value)
        snapshots.append({name: a.copy() for name, a in params.items()})
        return TrainRun(config, {name: np.array(v) for name, v in history.items()}, tuple(snapshots), weights)

    run = record()
    n, b, lr = len(t_tr), int(config.batch_size), float(config.learning_rate)
    for epoch in range(config.epochs):
        order = rng.permutation(n)
        for start in range(0, n, b):
            idx = order[start:start + b]
            x = x_tr[idx]
            z = classifier_logits(params, x)
            if teacher is not None:
                _, g = distillation_loss(z, teacher[idx], t_tr[idx], config.temperature, config.alpha)
                dz = g / len(idx)
            else:
                _, g = loss_rows(config.loss, z, y_tr[idx], gamma=config.gamma, weights=weights)
                dz = g / (weights[t_tr[idx]].sum() if config.loss == "weighted" else len(idx))
            for name, grad in classifier_gradients(params, x, dz).items():
                params[name] -= lr * grad
        run = record()
        yield (epoch + 1) / max(config.epochs, 1), run
    return run


def train_classifier(config: TrainConfig, x_train, y_train, x_val, y_val, **kw) -> TrainRun:
    """:func:`train_classifier_steps` run to its end."""
    steps = train_classifier_steps(config, x_train, y_train, x_val, y_val, **kw)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


