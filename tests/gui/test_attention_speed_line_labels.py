"""Line labels: the memo of which boxes a curve crosses answers as hits_curve does and forgets a changed
curve; placing with it (and leaving a label that is where it belongs alone) places as without it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gui.widgets.line_labels import CurveHits, hits_curve

coords = st.floats(-3, 3, allow_nan=False, width=64)
boxes = st.tuples(coords, coords, coords, coords).map(lambda b: (min(b[0], b[1]), max(b[0], b[1]),
                                                                 min(b[2], b[3]), max(b[2], b[3])))


@settings(max_examples=60, deadline=None)
@given(st.lists(boxes, min_size=1, max_size=8), st.floats(0.1, 3), st.floats(-1, 1))
def test_the_memo_counts_as_hits_curve_and_forgets_a_changed_curve(bs, a, b):
    x = np.linspace(-3, 3, 50)
    memo = CurveHits()
    for y in (a * np.sin(x) + b, a * np.sin(x) + b, np.tanh(x) * a - b):
        count = memo.counter([(x, y)])
        for box in bs + bs:  # each box twice: the second from the memo
            assert count(box) == int(hits_curve(box, x, y))


def test_precision_and_temperature_labels_land_where_a_fresh_placement_puts_them(qtbot, make_view, lab):
    from gui.widgets.line_labels import place_labels

    for name, param, values in (("precision", "scale", (2.0, 3.5, 2.0)),
                                ("temperature", "temperature", (0.3, 4.0, 0.3))):
        view = make_view(name)
        plot = view.overflow if name == "precision" else view.entropy
        ll = plot.line_labels
        for v in values:
            lab.models[name].set_param(param, v)
            view.flush()
            qtbot.wait(10)
            kept = [(line.label.isVisible(), list(line.label.anchors), line.label.orthoPos, line.label.pos())
                    for line in ll.lines]
            boxes = place_labels(ll.item, ll.lines, ll.curves(), ll.verticals)  # no memo: from scratch
            assert boxes == ll.place()
            fresh = [(line.label.isVisible(), list(line.label.anchors), line.label.orthoPos, line.label.pos())
                     for line in ll.lines]
            assert kept == fresh
            for line in ll.lines:  # no label was left where an update would move it
                label = line.label
                if label.isVisible():
                    pos, anchor = label.pos(), tuple(label.anchor)
                    label.setPosition(label.orthoPos)
                    assert (label.pos(), tuple(label.anchor)) == (pos, anchor)
