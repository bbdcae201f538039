"""The Simplex view's model: three weights as one point of a triangle.

Three weights that sum to 1 are one point of the probability simplex, an
equilateral triangle whose corners are the one-hot distributions and whose
centre is the uniform one.  Everything the view draws is computed here, in
plain NumPy: the softmax point and its temperature path, the sparsemax and
entmax points, the iso-lines of p1/p2, the field of Jacobian columns, and the
contours of KL(p || q) to a pinned reference q.

Coordinates
    :func:`to_xy` and :func:`from_xy` are the one place that maps weights to
    the plane and back: token 1 sits at the top corner (0.5, sqrt(3)/2),
    token 2 at the bottom left (0, 0), token 3 at the bottom right (1, 0).

State
    ``temperature``, ``alpha`` and ``arrows`` (which score the arrow field
    differentiates by, 1 to 3) are parameters: controls in the window,
    ``--temperature``, ``--alpha`` and ``--arrows`` on the command line, saved
    in sessions.  ``q`` (the pinned reference) and ``show_kl`` are plain
    fields: view state that undo records but sessions and the command line do
    not carry, so an export from the command line always has q uniform and no
    KL contours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, param
from gui.model.scores import ScoreRow

SQRT3_2 = math.sqrt(3.0) / 2.0
#: Corner of each token in the plane (rows: token 1, 2, 3).
CORNERS = np.array([[0.5, SQRT3_2], [0.0, 0.0], [1.0, 0.0]])
CENTRE = CORNERS.mean(axis=0)
_TO_XY1 = np.vstack([CORNERS.T, np.ones(3)])  # [x, y, 1] = _TO_XY1 @ p
_FROM_XY1 = np.linalg.inv(_TO_XY1)

#: Smallest weight a dragged or pinned point may have, so that log p is finite.
P_MIN = 1e-6
#: Temperatures at which the softmax path is sampled (log-spaced, 0.01..100).
PATH_T = np.logspace(-2.0, 2.0, 241)
#: Iso-lines p1/p2 = e^k.
ISO_K = np.arange(-3, 4)
#: Subdivisions of the arrow grid (arrows at the interior points).
FIELD_N = 10
#: Subdivisions of the KL grid, and the KL levels drawn (nats).
KL_N = 72
KL_LEVELS = (0.02, 0.1, 0.25, 0.5, 1.0, 2.0)
#: The longest arrow, as a fraction of the arrow grid's spacing.
ARROW_FILL = 0.8
_HEAD_ANGLE = math.radians(28.0)
_HEAD_FRACTION = 0.35


# -- the map between weights and the plane --------------------------------------------
def to_xy(p) -> np.ndarray:
    """Weights (..., 3) to points (..., 2) of the triangle (a weighted mean of the corners)."""
    return np.asarray(p, dtype=np.float64) @ CORNERS


def from_xy(xy) -> np.ndarray:
    """Points (..., 2) to barycentric weights (..., 3) summing to 1.

    The inverse of :func:`to_xy` on the plane; outside the triangle some
    weights come out negative.
    """
    xy = np.asarray(xy, dtype=np.float64)
    h = np.concatenate([xy, np.ones(xy.shape[:-1] + (1,))], axis=-1)
    return h @ _FROM_XY1.T


def project(p) -> np.ndarray:
    """The nearest admissible weights: negatives clipped, sum 1, each at least P_MIN.

    Weights already at least P_MIN pass through unchanged (but renormalized).
    """
    p = np.maximum(np.asarray(p, dtype=np.float64), 0.0)
    total = p.sum()
    p = np.full(3, 1.0 / 3.0) if not np.isfinite(total) or total <= 0 else p / total
    if p.min() < P_MIN:
        p = P_MIN + (1.0 - 3.0 * P_MIN) * p
    return p


def scores_for(p, old_scores, temperature: float) -> np.ndarray:
    """Scores s with softmax(s / T) = p: s = T log p + c.

    softmax is shift invariant, so any c works; c is chosen so the mean of
    the three scores stays that of ``old_scores`` (0 when those are not all
    finite).  ``p`` is first moved inside the triangle (:func:`project`).
    """
    p = project(p)
    old = np.asarray(old_scores, dtype=np.float64)
    mean = float(old.mean()) if np.all(np.isfinite(old)) else 0.0
    logp = temperature * np.log(p)
    return logp - logp.mean() + mean


def jacobian_column(p, j: int, temperature: float = 1.0) -> np.ndarray:
    """d softmax(s / T) / d s_j at weights p (..., 3), j counted from 0: p * (e_j - p) / T."""
    return compute.softmax_jacobian(np.asarray(p, dtype=np.float64))[..., :, j] / temperature


def kl_divergence(p, q) -> np.ndarray:
    """KL(p || q) = sum p log(p / q) in nats over the last axis, with 0 log 0 = 0."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    safe = np.where(p > 0, p, 1.0)
    return np.sum(np.where(p > 0, p * np.log(safe / q), 0.0), axis=-1)


def iso_ratio_segments() -> np.ndarray:
    """Segments (2 * len(ISO_K), 2) of the lines p1/p2 = e^k.

    Each runs from token 3's corner (p3 = 1) to the opposite edge (p3 = 0),
    where p1 = r / (1 + r) and p2 = 1 / (1 + r) for r = e^k.
    """
    r = np.exp(ISO_K.astype(np.float64))
    ends = np.column_stack([r / (1 + r), 1 / (1 + r), np.zeros_like(r)])
    starts = np.tile([0.0, 0.0, 1.0], (len(r), 1))
    return to_xy(np.stack([starts, ends], axis=1).reshape(-1, 3))


def _barycentric_grid(n: int, interior: bool = False) -> np.ndarray:
    """Weights (i, j, n - i - j) / n for every grid vertex (or interior ones only)."""
    lo = 1 if interior else 0
    pts = [(i, j, n - i - j) for i in range(lo, n + 1) for j in range(lo, n + 1 - i) if n - i - j >= lo]
    return np.array(pts, dtype=np.float64) / n


def _grid_triangles(n: int) -> np.ndarray:
    """Vertex indices (m, 3) of the n^2 small triangles tiling the grid of ``_barycentric_grid(n)``."""
    vertices = [(i, j) for i in range(n + 1) for j in range(n + 1 - i)]  # the order of _barycentric_grid
    index = {v: k for k, v in enumerate(vertices)}
    tris = []
    for i in range(n):
        for j in range(n - i):
            tris.append((index[i, j], index[i + 1, j], index[i, j + 1]))
            if i + j <= n - 2:
                tris.append((index[i + 1, j], index[i + 1, j + 1], index[i, j + 1]))
    return np.array(tris, dtype=np.intp)


def contour_segments(xy: np.ndarray, values: np.ndarray, triangles: np.ndarray,
                     levels) -> tuple[np.ndarray, np.ndarray]:
    """Iso-lines of a function sampled on a triangle mesh (marching triangles).

    Returns ``(segments, level_of_segment)``: segments is (2 m, 2), one pair of
    end points per segment.  A triangle whose vertices lie on both sides of a
    level is crossed by one straight segment, between the two edges where
    linear interpolation meets the level.  Lines end exactly on the mesh's
    outer edge.
    """
    v = values[triangles]  # (m, 3)
    p = xy[triangles]  # (m, 3, 2)
    out, lev = [], []
    for level in levels:
        above = v > level
        cut = above.any(axis=1) & ~above.all(axis=1)
        if not cut.any():
            continue
        vc, pc, ac = v[cut], p[cut], above[cut]
        ends = []
        for a, b in ((0, 1), (1, 2), (2, 0)):
            crosses = ac[:, a] != ac[:, b]
            step = np.where(crosses, vc[:, b] - vc[:, a], 1.0)  # nonzero where it crosses
            t = np.where(crosses, (level - vc[:, a]) / step, 0.0)
            point = pc[:, a] + t[:, None] * (pc[:, b] - pc[:, a])
            ends.append((crosses, point))
        # every cut triangle crosses exactly two of its three edges
        first = np.where(ends[0][0][:, None], ends[0][1], ends[1][1])
        second = np.where(ends[2][0][:, None], ends[2][1], ends[1][1])
        out.append(np.stack([first, second], axis=1).reshape(-1, 2))
        lev.append(np.full(len(first), float(level)))
    if not out:
        return np.zeros((0, 2)), np.zeros(0)
    return np.concatenate(out), np.concatenate(lev)


def arrow_segments(base: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """Segments (6 m, 2) drawing m arrows: a shaft centred on ``base`` and two barbs at its tip."""
    tail = base - vec / 2
    tip = base + vec / 2
    back = -vec * _HEAD_FRACTION
    c, s = math.cos(_HEAD_ANGLE), math.sin(_HEAD_ANGLE)
    left = tip + np.column_stack([c * back[:, 0] - s * back[:, 1], s * back[:, 0] + c * back[:, 1]])
    right = tip + np.column_stack([c * back[:, 0] + s * back[:, 1], -s * back[:, 0] + c * back[:, 1]])
    return np.stack([tail, tip, tip, left, tip, right], axis=1).reshape(-1, 2)


# Geometry that never changes: computed once.
FIELD_P = _barycentric_grid(FIELD_N, interior=True)
FIELD_XY = to_xy(FIELD_P)
KL_P = _barycentric_grid(KL_N)
KL_XY = to_xy(KL_P)
KL_TRIANGLES = _grid_triangles(KL_N)
ISO_SEGMENTS = iso_ratio_segments()
OUTLINE = np.vstack([CORNERS, CORNERS[:1]])


@dataclass(frozen=True)
class SimplexResult:
    """Everything the Simplex view draws, for one state."""

    ok: bool  # the row has at least three scores
    n_scores: int  # length of the whole row
    labels: tuple[str, ...]  # of the first three (fewer when the row is shorter)
    scores: np.ndarray  # (3,) the first three scores; NaN when missing
    temperature: float
    alpha: float
    p: np.ndarray  # (3,) softmax(s / T)
    xy: np.ndarray  # (2,)
    entropy: float
    path_t: np.ndarray  # (K,)
    path_p: np.ndarray  # (K, 3)
    path_xy: np.ndarray  # (K, 2)
    sparsemax: np.ndarray  # (3,) sparsemax(s / T)
    entmax: np.ndarray  # (3,) entmax(s / T, alpha)
    q: np.ndarray  # (3,)
    kl_pq: float  # KL(p || q)
    arrows: int  # j, from 1: the arrows show d p / d s_j
    field_xy: np.ndarray  # (M, 2) arrow positions
    field_d: np.ndarray  # (M, 2) d(x, y) / d s_j there
    arrow_segments: np.ndarray  # (6 M, 2) what is drawn
    iso_segments: np.ndarray  # (2 len(ISO_K), 2)
    show_kl: bool
    kl_values: np.ndarray  # (V,) KL(p || q) on the grid KL_XY (empty when hidden)
    kl_segments: np.ndarray  # (2 S, 2) contour segments (empty when hidden)
    kl_levels: np.ndarray  # (S,) the level of each segment

    @property
    def sparsemax_xy(self) -> np.ndarray:
        return to_xy(self.sparsemax)

    @property
    def entmax_xy(self) -> np.ndarray:
        return to_xy(self.entmax)

    @property
    def q_xy(self) -> np.ndarray:
        return to_xy(self.q)


_UNIFORM = (1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0)


@evented
@dataclass
class SimplexModel(ViewModel):
    name: ClassVar[str] = "simplex"
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    alpha: float = param(1.5, minimum=1.0, maximum=3.0)
    arrows: int = param(1, minimum=1, maximum=3, integer=True)
    # View state (not parameters: no CLI option, not in sessions).
    q: tuple[float, float, float] = _UNIFORM
    show_kl: bool = False

    def __post_init__(self) -> None:
        self._path_key: bytes | None = None
        self._path: np.ndarray | None = None
        self._kl_key: tuple | None = None
        self._kl: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    # -- writing view state ------------------------------------------------------------
    def pin_q(self, p) -> None:
        """Pin the reference q at ``p`` (moved inside the triangle first)."""
        self.q = tuple(float(v) for v in project(p))

    # -- computing -------------------------------------------------------------------
    def path(self, s: np.ndarray) -> np.ndarray:
        """softmax(s / T) for every T in PATH_T, shape (K, 3); cached on s.

        One 2-D pass (:func:`compute.softmax_over_temperatures`), the same bits
        as one softmax call per T.
        """
        key = s.tobytes()
        if key != self._path_key:
            self._path = compute.softmax_over_temperatures(s, PATH_T)
            self._path_key = key
        return self._path

    def kl_grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(KL(p || q) at KL_P, contour segments, their levels); cached on q."""
        key = tuple(self.q)
        if key != self._kl_key:
            values = kl_divergence(KL_P, np.array(self.q))
            segments, levels = contour_segments(KL_XY, values, KL_TRIANGLES, KL_LEVELS)
            self._kl = (values, segments, levels)
            self._kl_key = key
        return self._kl

    def arrow_field(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positions, d(x, y)/d s_j at the current T, arrow segments to draw)."""
        d = to_xy(jacobian_column(FIELD_P, self.arrows - 1, self.temperature))
        longest = float(np.max(np.hypot(d[:, 0], d[:, 1])))
        scale = ARROW_FILL / FIELD_N / longest
        return FIELD_XY, d, arrow_segments(FIELD_XY, d * scale)

    def result(self, scores: ScoreRow) -> SimplexResult:
        values = scores.values
        ok = len(values) >= 3
        nan3 = np.full(3, np.nan)
        q = np.array(self.q, dtype=np.float64)
        t = self.temperature
        empty2 = np.zeros((0, 2))
        if not ok:
            return SimplexResult(
                ok=False, n_scores=len(values), labels=scores.labels[:3],
                scores=np.concatenate([values, nan3])[:3], temperature=t, alpha=self.alpha,
                p=nan3, xy=np.full(2, np.nan), entropy=math.nan,
                path_t=np.zeros(0), path_p=np.zeros((0, 3)), path_xy=empty2,
                sparsemax=nan3, entmax=nan3, q=q, kl_pq=math.nan, arrows=self.arrows,
                field_xy=empty2, field_d=empty2, arrow_segments=empty2,
                iso_segments=empty2, show_kl=self.show_kl, kl_values=np.zeros(0),
                kl_segments=empty2, kl_levels=np.zeros(0),
            )
        s = values[:3]
        p = compute.softmax(s, temperature=t)
        path = self.path(s)
        sparse = compute.sparsemax(s / t)
        ent = compute.entmax(s / t, self.alpha)
        field_xy, field_d, segments = self.arrow_field()
        if self.show_kl:
            kl_values, kl_segments, kl_levels = self.kl_grid()
        else:
            kl_values, kl_segments, kl_levels = np.zeros(0), empty2, np.zeros(0)
        return SimplexResult(
            ok=True, n_scores=len(values), labels=scores.labels[:3], scores=s,
            temperature=t, alpha=self.alpha, p=p, xy=to_xy(p),
            entropy=float(compute.entropy(p)),
            path_t=PATH_T, path_p=path, path_xy=to_xy(path),
            sparsemax=sparse, entmax=ent, q=q,
            kl_pq=float(kl_divergence(p, q)) if np.all(np.isfinite(p)) else math.nan,
            arrows=self.arrows, field_xy=field_xy, field_d=field_d, arrow_segments=segments,
            iso_segments=ISO_SEGMENTS, show_kl=self.show_kl, kl_values=kl_values,
            kl_segments=kl_segments, kl_levels=kl_levels,
        )

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        r = self.result(scores)
        points = np.vstack([r.p, r.sparsemax, r.entmax, r.q])
        out = {
            "point": ExportArray(
                np.concatenate([[r.temperature, r.alpha], r.scores, r.p, r.xy,
                                [r.entropy, r.kl_pq, r.arrows]])[None, :],
                ("temperature", "alpha", "s1", "s2", "s3", "p1", "p2", "p3", "x", "y",
                 "entropy_nats", "kl_p_q_nats", "arrows_score"),
            ),
            "points": ExportArray(
                np.column_stack([points, to_xy(points)]),
                ("p1", "p2", "p3", "x", "y"),
                ("softmax", "sparsemax", "entmax", "q"),
            ),
            "path": ExportArray(
                np.column_stack([r.path_t, r.path_p, r.path_xy]).reshape(-1, 6),
                ("T", "p1", "p2", "p3", "x", "y"),
            ),
            "field": ExportArray(
                np.column_stack([r.field_xy, r.field_d]).reshape(-1, 4), ("x", "y", "dx", "dy"),
            ),
            "iso_lines": ExportArray(
                np.column_stack([ISO_K, np.exp(ISO_K), r.iso_segments.reshape(-1, 4)])
                if r.ok else np.zeros((0, 6)),
                ("k", "p1_over_p2", "x0", "y0", "x1", "y1"),
            ),
        }
        if r.show_kl and r.ok:
            out["kl_grid"] = ExportArray(
                np.column_stack([KL_XY, KL_P, r.kl_values]), ("x", "y", "p1", "p2", "p3", "kl_nats"),
            )
            out["kl_contours"] = ExportArray(
                np.column_stack([r.kl_levels, r.kl_segments.reshape(-1, 4)]),
                ("level_nats", "x0", "y0", "x1", "y1"),
            )
        return out
