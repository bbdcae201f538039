"""The Normalizers model's shortcuts: each method runs once on its row stacked over the probe rows, and
only entmax is recomputed when α moves; both must give exactly the numbers of the plain path.

References: each method called on the row alone and on the probe rows alone (what the model did before
the shortcut), and compute.entmax for the α shown; comparisons are exact.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.normalizers import METHODS, PROPERTIES, NormalizersModel, _probes
from gui.model.scores import ScoreRow
from gui.views.normalizers import NO, YES

ROWS = st.lists(st.one_of(st.floats(-50, 50, allow_nan=False), st.integers(-3, 3).map(float)),  # ties too
                min_size=1, max_size=40)
ALPHAS = st.one_of(st.sampled_from([1.0, 1.5, 2.0, 3.0]), st.floats(1.0, 3.0))


@settings(max_examples=60, deadline=None)
@given(ROWS, ALPHAS)
def test_one_stacked_call_gives_the_weights_and_properties_of_separate_calls(values, alpha):
    x = np.array(values)
    m = NormalizersModel(alpha=alpha)
    for name, f in m.functions().items():
        w_ref = np.asarray(f(x), dtype=np.float64)
        props_ref = m.properties_of(f, x, w_ref)
        w, props = m.weights_and_properties(f, x)
        np.testing.assert_array_equal(w, w_ref, err_msg=name)
        assert props == props_ref, name
        rows, _h, _n = _probes(x)  # and the stacked rows are each method's rows, bit for bit
        np.testing.assert_array_equal(f(np.vstack([x, rows]))[1:], f(rows), err_msg=name)


def test_non_finite_scores_take_the_plain_path():
    x = np.array([1.0, np.inf, -2.0])
    m = NormalizersModel()
    for name, f in m.functions().items():
        w, props = m.weights_and_properties(f, x)
        np.testing.assert_array_equal(w, np.asarray(f(x), dtype=np.float64), err_msg=name)
        assert props == [False] * len(PROPERTIES)


def test_an_alpha_move_recomputes_entmax_alone_and_exactly():
    row = ScoreRow()
    row.set_values([2.0, 1.2, 1.1, -0.5, 0.0])
    m = NormalizersModel(alpha=1.5)
    before = m.result(row)
    m.set_param("alpha", 1.8)
    after = m.result(row)
    x = row.values
    np.testing.assert_array_equal(after.weights_of("entmax"), compute.entmax(x, 1.8))
    assert not np.array_equal(after.weights_of("entmax"), before.weights_of("entmax"))
    for method in METHODS:
        if method != "entmax":
            np.testing.assert_array_equal(after.weights_of(method), before.weights_of(method))
    fresh = NormalizersModel(alpha=1.8).result(row)  # no cache at all
    np.testing.assert_array_equal(after.weights, fresh.weights)
    np.testing.assert_array_equal(after.properties, fresh.properties)
    row.set_value(0, -3.0)  # new scores: nothing kept
    again = m.result(row)
    np.testing.assert_array_equal(again.weights, NormalizersModel(alpha=1.8).result(row).weights)


def test_the_table_follows_alpha_and_the_scores(qtbot, make_view, lab):
    lab.scores.set_values([0.3, 0.2, 0.1])
    view = make_view("normalizers")
    m = view.model

    def shown_table():
        r = m.result(lab.scores)
        return [[YES if ok else NO for ok in row] for row in r.properties]

    for alpha, values in ((1.5, [0.3, 0.2, 0.1]), (2.7, [0.3, 0.2, 0.1]), (2.7, [10.0, 0.0, -10.0]),
                          (1.2, [10.0, 0.0, -10.0])):
        m.set_param("alpha", alpha)
        lab.scores.set_values(values)
        view.flush()
        assert view.table.symbols() == shown_table()
        heads = [view.table.verticalHeaderItem(r).text() for r in range(len(METHODS))]
        assert f"{alpha:.2f}" in heads[METHODS.index("entmax")]
        ok = [[view.table.item(r, c).foreground().color() for c in range(len(PROPERTIES))]
              for r in range(len(METHODS))]
        assert len({c.name() for row in ok for c in row}) == len({s for row in shown_table() for s in row})
