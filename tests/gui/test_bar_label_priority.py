"""When bar labels must thin, the series being read keeps its labels (gui/widgets/bar_labels.py).

The rule: undefined-value tags first, then every label of the lead series
(softmax in the Normalizers view, else the first shown series), then the rest
by the size of the value.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gui.model.normalizers import METHODS
from gui.widgets import bar_labels


def grouped(values: np.ndarray, pitch: float, height: float):
    """Pixel geometry of a grouped chart: values[s, i] for series s at category i, bars side by side."""
    series, n = values.shape
    bar = 0.8 * pitch / series
    x = np.array([[(i + 0.5) * pitch + (s - (series - 1) / 2) * bar for i in range(n)] for s in range(series)])
    zero = height * 0.8
    end = zero - values * height * 0.7
    rects = np.column_stack([x.ravel() - bar / 2, np.minimum(end, zero).ravel(),
                             x.ravel() + bar / 2, np.maximum(end, zero).ravel()])
    return x.ravel(), end.ravel(), np.full(x.size, zero), rects, bar


def run_place(values, pitch, height, keep=None, lead=None):
    """Place the labels of ``values`` (only the flat indices in ``keep``, if given); where each went."""
    x, end, base, rects, bar = grouped(values, pitch, height)
    series = np.repeat(np.arange(values.shape[0]), values.shape[1])
    k = np.arange(x.size) if keep is None else np.asarray(keep)
    tier = None if lead is None else (series[k] == lead).astype(float)
    width = np.full(k.size, 30.0)
    r = bar_labels.place(x[k], end[k], base[k], width, np.full(k.size, 14.0), slot=bar, bar_width=bar,
                         plot_height=height, priority=np.abs(values.ravel()[k]), bars=rects, own_bar=k,
                         tier=tier, thickness=np.full(k.size, 10.0))
    return dict(zip(k.tolist(), r.where.tolist())), r


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5), st.integers(1, 6), st.floats(20, 120), st.data())
def test_the_lead_series_places_every_label_it_would_place_alone(series, n, pitch, data):
    """Other series never take a lead label's place: with them or without them, the lead keeps the same labels."""
    values = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=series * n, max_size=series * n)))
    values = values.reshape(series, n)
    lead = data.draw(st.integers(0, series - 1))
    lead_keys = [lead * n + i for i in range(n)]
    together, r = run_place(values, pitch, 220.0, lead=lead)
    alone, _ = run_place(values, pitch, 220.0, keep=lead_keys, lead=lead)
    assert {k: together[k] for k in lead_keys} == alone
    shown = r.rects[r.where != bar_labels.HIDDEN]  # and still nothing overlaps
    for a in range(len(shown)):
        assert not bar_labels._overlaps(shown[a], np.delete(shown, a, axis=0)).any()


def test_without_a_lead_the_tallest_bars_win_and_with_one_the_lead_does():
    """Two series whose upright labels cannot stand side by side: the rule decides who keeps them."""
    values = np.array([[0.5, 0.4, 0.45], [0.55, 0.45, 0.5]])  # series 1 a little taller
    # 10 px bars, 10 px of ink: each label fits its bar, but two neighbours' labels (with their
    # padding) cannot stand side by side at about the same height
    by_size, _ = run_place(values, 25.0, 220.0)
    led, _ = run_place(values, 25.0, 220.0, lead=0)
    first = [0, 1, 2]
    second = [3, 4, 5]
    assert all(by_size[k] == bar_labels.HIDDEN for k in first)  # the taller neighbours took the room
    assert all(led[k] != bar_labels.HIDDEN for k in first)
    assert all(led[k] == bar_labels.HIDDEN for k in second)


def test_the_lead_is_the_named_series_while_shown_else_the_first_shown():
    assert bar_labels.lead_series([True, True, True], 2) == 2
    assert bar_labels.lead_series([True, True, False], 2) == 0
    assert bar_labels.lead_series([False, True, True], None) == 1
    assert bar_labels.lead_series([False, False], 0) is None


def test_an_upright_label_is_as_thick_as_its_ink(qapp):
    from PySide6.QtGui import QFontMetricsF

    metrics = QFontMetricsF(bar_labels.value_font())
    for text in ("60.9%", "-40.0%", "0%"):
        ink = metrics.tightBoundingRect(text)
        thick = bar_labels.ink_thickness(metrics, text)
        assert ink.height() <= thick <= metrics.height()
        assert thick < metrics.height()  # digits have no descenders: thinner than the line box


# -- in the Normalizers view ---------------------------------------------------------------------

SCORES = [2.0, 1.0, 0.5, -1.0, 0.2, 1.5]


def visible(chart, series):
    return {i for s, i, t in chart.values.items() if s == series and t.isVisible()}


def assert_no_two_labels_overlap(chart):
    """No two labels' ink overlaps (mapped from each text's own coordinates to the scene)."""
    from PySide6.QtGui import QFontMetricsF

    metrics = QFontMetricsF(bar_labels.value_font())
    rects = []
    for _s, _i, t in chart.values.items():
        if t.isVisible():
            ink = metrics.tightBoundingRect(t.toPlainText()).translated(0, metrics.ascent())
            rects.append(t.textItem.mapRectToScene(ink))
    for a in range(len(rects)):
        for b in range(a + 1, len(rects)):
            assert not rects[a].intersects(rects[b].adjusted(0.5, 0.5, -0.5, -0.5)), "labels overlap"


def narrower_and_narrower(qtbot, view, lead: int):
    """Narrow the chart step by step while its bars are still as wide as a label's ink; at each
    width the lead series has every label, and somewhere on the way the others had to thin."""
    from PySide6.QtGui import QFontMetricsF

    ink = bar_labels.ink_thickness(QFontMetricsF(bar_labels.value_font()), "60.9%")
    chart = view.bars
    thinned = False
    for width in range(1000, 250, -20):
        chart.setFixedWidth(width)
        qtbot.wait(20)
        view.flush()
        qtbot.wait(5)
        vb = chart.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        if chart._geometry()[0] * vb.width() / (x1 - x0) < ink:
            break
        assert visible(chart, lead) == set(range(len(SCORES))), width
        assert_no_two_labels_overlap(chart)
        others = [METHODS.index(m) for m in view.model.shown if METHODS.index(m) != lead]
        thinned = thinned or any(len(visible(chart, s)) < len(SCORES) for s in others)
    assert thinned, "the labels had to thin before the bars got narrower than a label"


def test_normalizers_with_all_seven_shown_keeps_the_softmax_labels(qtbot, make_view, lab):
    view = make_view("normalizers")
    lab.scores.set_values(SCORES)
    assert view.model.shown == METHODS
    narrower_and_narrower(qtbot, view, METHODS.index("softmax"))


def test_with_softmax_hidden_the_first_shown_method_keeps_its_labels(qtbot, make_view, lab):
    view = make_view("normalizers")
    lab.scores.set_values(SCORES)
    view.model.set_shown(tuple(m for m in METHODS if m != "softmax"))
    narrower_and_narrower(qtbot, view, METHODS.index(view.model.shown[0]))
