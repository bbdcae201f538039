"""The first standard normals of a seed's generator, drawn once and kept (no Qt).

Several views draw ``np.random.default_rng(seed).standard_normal(count)`` for a
count that a slider moves: the Attention view's random Q, K and V
(3 x heads x n x d_k of them), the Sampling view's router embeddings
(tokens x 32) and the noise of its synthetic vocabulary (V).  NumPy's
Generator draws standard normals one after another and carries nothing from
one call to the next (no cached second value), so the first k normals of one
long draw are the k that a fresh generator's calls of any sizes give in turn;
a :class:`NormalStream` keeps the normals drawn so far and hands out views of
them, drawing only the ones not drawn yet.

Where a caller draws something else after the normals (the vocabulary
shuffles its ids with the same generator), :meth:`NormalStream.generator_after`
gives a generator in the state the seed's one has after exactly ``count``
normals: the state is kept every ``every`` normals while they are drawn, and
the few after the last kept state are drawn again.
"""

from __future__ import annotations

import threading

import numpy as np


class NormalStream:
    """The first normals of ``np.random.default_rng(seed)`` for the last seed asked for, grown as needed.

    ``capacity`` normals are kept at most (np.empty: memory is taken as entries are written); a draw
    longer than that is a new array, the kept ones copied and the rest drawn from the state after
    them. ``every > 0`` keeps the generator's state every ``every`` normals (for
    :meth:`generator_after`). Thread-safe: a view's thread and its worker may both draw.
    """

    def __init__(self, capacity: int, every: int = 0):
        if capacity < 1 or every < 0:
            raise ValueError(f"NormalStream needs capacity >= 1 and every >= 0, got {capacity} and {every}")
        self.capacity = int(capacity)
        self.every = int(every)
        self._lock = threading.Lock()
        self._seed: int | None = None
        self._rng: np.random.Generator | None = None
        self._values = np.zeros(0)  # room for capacity normals; the first _have are drawn
        self._have = 0
        self._states: list[dict] = []  # with every > 0: the state after 0, every, 2 * every, ... normals
        self._after: dict | None = None  # the generator's state after capacity normals, once needed

    def _start(self, seed: int) -> None:
        if seed != self._seed or self._rng is None:
            self._seed, self._rng, self._have = seed, np.random.default_rng(seed), 0
            self._values = np.empty(self.capacity)
            self._after = None
            self._states = [self._rng.bit_generator.state] if self.every else []

    def _draw_to(self, kept: int) -> None:
        """Draw the normals up to ``kept <= capacity`` (keeping the states at multiples of ``every``)."""
        if self._have >= kept:
            return
        if not self.every:
            self._rng.standard_normal(out=self._values[self._have:kept])
            self._have = kept
            return
        while self._have < kept:
            boundary = (self._have // self.every + 1) * self.every
            end = min(boundary, kept)
            self._rng.standard_normal(out=self._values[self._have:end])
            self._have = end
            if end == boundary:
                self._states.append(self._rng.bit_generator.state)

    def first(self, seed: int, count: int) -> np.ndarray:
        """The first ``count`` normals of seed ``seed``'s generator, read-only.

        A view of the kept draws, not a copy; a longer draw writes just the missing ones after the
        drawn ones in place, so earlier views keep their numbers. A new seed gets a new array.
        More than ``capacity``: a new array, the kept ones copied and the rest drawn by a generator
        in the state the seed's one had after ``capacity`` normals."""
        with self._lock:
            self._start(seed)
            self._draw_to(min(count, self.capacity))
            if count > self.capacity:
                if self._after is None:
                    self._after = self._rng.bit_generator.state  # (a copy: a dict) after capacity
                tail = np.random.Generator(type(self._rng.bit_generator)())
                tail.bit_generator.state = self._after
                values = np.empty(count)
                values[:self.capacity] = self._values
                tail.standard_normal(out=values[self.capacity:])
                return values
            values = self._values[:count]
            values.flags.writeable = False
            return values

    def generator_after(self, seed: int, count: int) -> np.random.Generator:
        """A new generator in the state ``np.random.default_rng(seed)`` has after ``count`` normals
        (``count <= capacity``; needs ``every > 0``): what it draws next is what that one would."""
        if not self.every or count > self.capacity:
            raise ValueError(f"generator_after needs every > 0 and count <= {self.capacity}, got {count}")
        with self._lock:
            self._start(seed)
            self._draw_to(count)
            state = self._states[count // self.every]
            bit_generator = type(self._rng.bit_generator)()
        bit_generator.state = state
        rng = np.random.Generator(bit_generator)
        rest = count % self.every
        if rest:
            rng.standard_normal(out=np.empty(rest))  # the normals after the kept state, again
        return rng
