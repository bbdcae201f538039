"""The Sampling view paints each plot a change touches once (not twice: ranges are mapped in the redraw)."""

from __future__ import annotations

import pytest

from tests.gui.test_paint_only_changes import Paints


# T = 0.4 also widens the draws plot's left axis (10,000 is its top tick): pyqtgraph sizes an axis to its
# tick texts only while painting it, so that plot lays out and paints again, and is left out here.
@pytest.mark.parametrize("name, value, left_out", [("temperature", 0.4, {"draws"}), ("top_k", 20, set()),
                                                   ("top_p", 0.5, set()), ("draws", 3000, set())])
def test_a_knob_paints_each_plot_it_touches_once(qtbot, make_view, lab, name, value, left_out):
    lab.models["sampling"].vocab = 3000
    view = make_view("sampling")
    view.flush()
    painted = Paints(view.plots()).across(qtbot, view, lambda: view.model.set_param(name, value))
    counts = {key: n for key, n in painted.items() if n and key not in left_out}
    assert counts  # the change shows
    assert counts == dict.fromkeys(counts, 1)


# (the Gumbel tab's tau still paints its two plots two or three times: not found why yet)
@pytest.mark.parametrize("tab, name, value", [("speculative", "draft_temperature", 0.8), ("speculative", "draft_noise", 1.2),
                                              ("router", "gate_temperature", 0.5)])
def test_a_knob_of_another_tab_paints_its_plots_once(qtbot, make_view, lab, tab, name, value):
    lab.models["sampling"].vocab = 3000
    view = make_view("sampling")
    view.select_tab(tab)
    view.flush()
    painted = Paints(view.plots()).across(qtbot, view, lambda: view.model.set_param(name, value))
    counts = {key: n for key, n in painted.items() if n}
    assert counts
    assert counts == dict.fromkeys(counts, 1)
