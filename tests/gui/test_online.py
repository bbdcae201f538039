"""The Online-softmax view: its model (Qt-free) and its widget, driven as a user drives it."""

import json
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

import compute
from compute import flash_attention, online_softmax_trace, tree_merge_trace
from gui.export import export_view, read_npz
from gui.model.online import (
    MAX_STEP,
    RESULT_COLUMNS,
    STEP_COLUMNS,
    TREE_COLUMNS,
    OnlineModel,
    random_qkv,
    random_row,
)
from gui.model.scores import ScoreRow
from tests.conftest import run_main

DEFAULT = [2.0, 1.0, 0.5, -1.0]


def row(values):
    r = ScoreRow()
    r.set_values(list(values))
    return r


# -- the model ------------------------------------------------------------------------------


def test_defaults_open_at_the_first_step():
    model = OnlineModel()
    r = model.result(row(DEFAULT))
    assert model.step == 1
    assert r.step == 1
    assert r.n_steps == 4
    assert not r.done
    assert r.current.index == 0
    x = random_row(16, 0)
    np.testing.assert_allclose(r.partial[:4], compute.softmax(x[:4]), rtol=1e-13)
    assert np.isnan(r.partial[4:]).all()  # nothing known yet about the blocks not read


def test_the_finished_sequential_run_over_a_random_row():
    model = OnlineModel(step=MAX_STEP)
    r = model.result(row(DEFAULT))
    x = random_row(16, 0)
    assert np.array_equal(r.values, x)
    assert r.labels[0] == "1"
    assert len(r.labels) == 16
    assert r.n_steps == 4
    assert r.step == 4
    assert r.done
    assert model.step == MAX_STEP
    np.testing.assert_allclose(r.online, compute.softmax(x), rtol=1e-13)
    assert r.max_abs_difference < 1e-15
    assert np.array_equal(r.partial, r.online)


def test_steps_array_is_the_trace():
    model = OnlineModel(row="scores", block_size=3, temperature=0.5, step=MAX_STEP)
    scores = row([-1.0, 0.5, 2.0, 1.0, 3.0])
    a = model.arrays(scores)
    assert set(a) == {"steps", "result", "passes", "summary"}
    assert a["steps"].columns == STEP_COLUMNS
    trace = online_softmax_trace(np.array([-1.0, 0.5, 2.0, 1.0, 3.0]), 3, 0.5)
    assert a["steps"].data[:, 7].tolist() == [s.m_after for s in trace] == [2.0, 3.0]
    assert a["steps"].data[1, 9] == trace[1].rescale == pytest.approx(math.exp((2.0 - 3.0) / 0.5))
    assert a["result"].columns == RESULT_COLUMNS
    assert a["result"].rows == scores.labels
    assert a["result"].data[:, 1].tolist() == [0, 0, 0, 1, 1]  # the block of each score
    np.testing.assert_allclose(a["result"].data[:, 3], compute.softmax(scores.values, temperature=0.5))
    assert a["passes"].rows == ("safe", "online", "fused")
    assert a["passes"].data[:, 0].tolist() == [3, 2, 1]
    assert a["passes"].data[:, 3].tolist() == [5 * 4 * 4, 5 * 4 * 3, 5 * 4 * 2]  # float32 bytes
    summary = dict(zip(a["summary"].columns, a["summary"].data[0]))
    assert summary["steps"] == 2
    assert summary["step"] == 2
    assert summary["m"] == 3.0


def test_step_is_clamped_and_partial_covers_what_was_read():
    model = OnlineModel(row="scores", block_size=1, step=0)
    scores = row(DEFAULT)
    r = model.result(scores)
    assert r.step == 0
    assert r.current is None
    assert np.isnan(r.partial).all()
    model.step = 2
    r = model.result(scores)
    assert r.current.index == 1
    assert r.current.m_after == 2.0
    np.testing.assert_allclose(r.partial[:2], compute.softmax(np.array(DEFAULT[:2])))
    assert np.isnan(r.partial[2:]).all()
    assert r.partial_difference > 0.1
    model.step = 9999
    assert model.result(scores).step == 4 == model.n_steps(scores)


def test_trace_is_cached_while_only_the_step_moves():
    model = OnlineModel()
    scores = row(DEFAULT)
    first = model.result(scores).steps
    model.step = 3
    assert model.result(scores).steps is first
    model.block_size = 2
    assert model.result(scores).steps is not first


def test_tree_mode():
    model = OnlineModel(mode="tree", row="scores", block_size=1)
    scores = row(DEFAULT)
    a = model.arrays(scores)
    assert set(a) == {"tree", "result", "passes", "summary"}
    assert a["tree"].columns == TREE_COLUMNS
    levels = tree_merge_trace(np.array(DEFAULT), 1)
    assert a["tree"].data.shape == (4 + 2 + 1, len(TREE_COLUMNS))
    assert np.isnan(a["tree"].data[:4, 6]).all()  # leaves have no children
    assert a["tree"].data[4, 6:8].tolist() == [0, 1]
    assert a["tree"].data[-1, 4] == levels[-1][0].m == 2.0
    model.step = 2  # the first merge level: each pair's own softmax
    r = model.result(scores)
    np.testing.assert_allclose(r.partial[:2], compute.softmax(np.array(DEFAULT[:2])))
    np.testing.assert_allclose(r.partial[2:], compute.softmax(np.array(DEFAULT[2:])))
    assert r.n_steps == 3
    assert len(r.current_level) == 2


def test_attention_mode_matches_compute_attention():
    model = OnlineModel(mode="attention", n=9, d_k=5, tile=4, causal="on", seed=3)
    a = model.arrays(ScoreRow())
    assert set(a) == {"tiles", "output", "reference", "lse", "accumulator", "summary"}
    q, k, v = random_qkv(9, 5, 3)
    _w, expected = compute.attention(q, k, v, causal=True)
    np.testing.assert_allclose(a["output"].data, expected, rtol=1e-12, atol=1e-14)
    assert np.array_equal(a["reference"].data, expected)
    assert np.array_equal(a["output"].data, flash_attention(q, k, v, causal=True, tile=4)[0])
    assert a["accumulator"].npz_data.shape == (3 + 1, 9, 5)
    assert a["tiles"].data.shape == (3 * 9, 10)
    summary = dict(zip(a["summary"].columns, a["summary"].data[0]))
    assert summary["steps"] == 3
    assert summary["causal"] == 1.0
    assert summary["max_abs_difference"] < 1e-14


@pytest.mark.parametrize("mode", ["sequential", "tree"])
@pytest.mark.parametrize("values", [[7.0], [math.inf, 1.0, math.inf], [-math.inf, -math.inf], [1.0, math.nan],
                                    [1e308, -1e308, 0.0]])
def test_special_rows_compute_without_warnings(mode, values):
    model = OnlineModel(mode=mode, row="scores", block_size=2)
    r = model.result(row(values))
    expected = compute.softmax(np.array(values))
    assert np.array_equal(np.isnan(r.online), np.isnan(expected))
    np.testing.assert_allclose(r.online, expected, equal_nan=True)
    model.arrays(row(values))


def test_parameters_and_session_round_trip(tmp_path):
    from gui.model.lab import Lab
    from gui.model.session import Session

    model = OnlineModel()
    with pytest.raises(ValueError, match="one of sequential, tree, attention"):
        model.set_param("mode", "warp")
    with pytest.raises(ValueError, match="between 1 and 1024"):
        model.set_param("block_size", 0)
    lab = Lab()
    lab.models["online"].update_from_dict({"mode": "tree", "block_size": 3, "step": 1, "row_length": 100})
    lab.session("online").save(tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["views"]["online"]["block_size"] == 3
    other = Lab()
    other.restore(Session.load(tmp_path / "s.json"))
    assert other.models["online"].to_dict() == lab.models["online"].to_dict()


# -- the widget -------------------------------------------------------------------------------


def settle(qtbot, view):
    qtbot.wait(30)
    view.flush()


@pytest.fixture
def view(make_view, lab):
    """The view at the end of the run (it opens at its first step: see test_the_view_opens_at_its_first_step)."""
    lab.models["online"].step = MAX_STEP
    return make_view("online")


def test_the_view_opens_at_its_first_step_and_draws_no_step_to_come(qtbot, make_view, lab):
    view = make_view("online")
    settle(qtbot, view)
    assert view.transport.label.text() == "step 1 of 4"
    assert view.row_plot.bar_state().tolist() == [2] * 4 + [0] * 12
    m, d = view.m_plot.curve.getData(), view.d_plot.curve.getData()
    assert m[0].tolist() == [1.0]  # step 0's m is -inf: not drawn
    assert d[0].tolist() == [0.0, 1.0]
    first = online_softmax_trace(random_row(16, 0), 4)[0]
    assert d[1].tolist() == [0.0, first.d_after]
    assert view.m_plot.getPlotItem().viewRange()[0][1] > 4  # the axis shows every step
    assert view.compare.placeholders() == []  # the scores not read yet get no bar, not a NaN placeholder
    view.transport.end_button.click()
    settle(qtbot, view)
    assert view.d_plot.curve.getData()[0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_stepping_back_and_forward_moves_the_highlight_and_readouts(qtbot, view, lab):
    model = lab.models["online"]
    transport = view.transport
    assert transport.label.text() == "step 4 of 4"
    assert view.row_plot.bar_state().tolist() == [1] * 12 + [2] * 4
    final = view.readouts["online.readout.diff"].text()
    assert not transport.forward_button.isEnabled()
    qtbot.mouseClick(transport.back_button, Qt.MouseButton.LeftButton)
    assert model.step == 3
    settle(qtbot, view)
    assert view.row_plot.bar_state().tolist() == [1] * 8 + [2] * 4 + [0] * 4
    s = model.result(lab.scores).current
    assert view.readouts["online.readout.block"].text() == "block 3 of 4: scores 9–12"
    assert view.readouts["online.readout.m"].text() == f"{s.m_before:.3f} → {s.m_after:.3f}"
    assert view.readouts["online.readout.diff"].text() == "after the last step" != final
    assert view.m_plot.marker.xData.tolist() == [3.0]
    transport.reset_button.click()
    settle(qtbot, view)
    assert model.step == 0
    assert view.row_plot.bar_state().tolist() == [0] * 16
    assert view.readouts["online.readout.m"].text().startswith("–")
    assert not transport.back_button.isEnabled()
    transport.forward_button.click()
    settle(qtbot, view)
    assert model.step == 1
    assert view.readouts["online.readout.m"].text() == f"-inf → {random_row(16, 0)[:4].max():.3f}"
    assert view.readouts["online.readout.rescale"].text().endswith("(empty sum so far)")
    first = online_softmax_trace(random_row(16, 0), 4)[0].partial
    assert np.array_equal(view.compare.heights[0], np.concatenate([first, np.zeros(12)]))  # unread: no bar
    assert view.compare.heights[1].tolist() == compute.softmax(random_row(16, 0)).tolist()


def test_step_slider_and_block_size(qtbot, view, lab):
    model = lab.models["online"]
    view.transport.slider.setValue(2)
    assert model.step == 2
    block = view.controls["block_size"]
    block.slider.setValue(1)
    assert model.block_size == 1
    settle(qtbot, view)
    assert view.transport.slider.maximum() == 16
    assert view.transport.label.text() == "step 2 of 16"
    assert block.spin.maximum() == 16  # never more than the row's length
    assert block.maximum == 16


def test_play_advances_on_the_timer_and_stops_at_the_end(qtbot, view, lab):
    model = lab.models["online"]
    transport = view.transport
    transport.speed.setValue(60)
    transport.play_button.click()  # at the end: starts over from 0
    assert transport.playing
    assert model.step == 0
    assert transport.play_button.text() == "❚❚ Pause"
    qtbot.waitUntil(lambda: model.step == 4 and not transport.playing, timeout=5000)
    assert not transport.play_button.isChecked()
    assert transport.play_button.text() == "▶ Play"
    settle(qtbot, view)
    r = model.result(lab.scores)
    assert view.readouts["online.readout.diff"].text() == f"{r.max_abs_difference:.2e}"


def test_pause_stops_the_timer(qtbot, view, lab):
    model = lab.models["online"]
    model.block_size = 1
    transport = view.transport
    transport.go_to(0)
    transport.speed.setValue(30)
    transport.play_button.click()
    qtbot.waitUntil(lambda: model.step >= 1, timeout=5000)
    transport.play_button.click()
    stopped = model.step
    assert not transport.playing
    qtbot.wait(150)
    assert model.step == stopped < 16


def test_final_difference_matches_compute_for_the_shared_scores(qtbot, view, lab):
    model = lab.models["online"]
    row_choice = view.controls["row"]
    row_choice.combo.setCurrentIndex(0)
    row_choice.combo.activated.emit(0)
    assert model.row == "scores"
    settle(qtbot, view)
    assert view.editor.isVisibleTo(view)
    assert not view.controls["row_length"].isVisibleTo(view)
    lab.scores.set_values([0.5, 3.0, -2.0, 3.0, 1.0])
    model.block_size = 2
    settle(qtbot, view)
    x = lab.scores.values
    last = online_softmax_trace(x, 2)[-1]
    diff = float(np.max(np.abs(last.partial - compute.softmax(x))))
    assert view.readouts["online.readout.diff"].text() == ("0" if diff == 0 else f"{diff:.2e}")
    assert np.array_equal(view.compare.heights[0], last.partial)
    assert view.passes.item(0, 3).text() == "80"
    assert view.passes.item(2, 0).text() == "1"


def test_tree_mode_draws_the_tree(qtbot, view, lab):
    model = lab.models["online"]
    model.mode = "tree"
    settle(qtbot, view)
    assert set(view.plots()) == {"row", "tree", "result"}
    assert view.tree.node_count() == 4 + 2 + 1
    assert view.tree.isVisibleTo(view)
    assert view.readouts["online.readout.block"].text() == "level 2: 1 merge(s)"
    model.step = 1
    settle(qtbot, view)
    assert view.readouts["online.readout.block"].text() == "level 0: 4 blocks at once"
    assert view.row_plot.bar_state().tolist() == [2] * 16  # every block at once
    assert [text != "" for text in view.tree.node_texts()] == [True] * 4 + [False] * 3
    # hovering a level not merged yet tells no (m, d) of the future
    assert view.tree.describe(7.5, 2.0) == "level 2: not merged yet at this step"
    assert view.tree.describe(1.5, 0.0).startswith("level 0: m = ")
    # attention mode: the running lines stop at the current tile
    model.update_from_dict({"mode": "attention", "step": 1})
    settle(qtbot, view)
    assert all(c.getData()[0].tolist() == [1.0] for c in view.m_lines.curves)  # step 0's m is -inf
    assert all(c.getData()[0].tolist() == [0.0, 1.0] for c in view.l_lines.curves)


def test_attention_mode_draws_tiles(qtbot, view, lab):
    model = lab.models["online"]
    model.mode = "attention"
    model.step = 2
    settle(qtbot, view)
    assert set(view.plots()) == {"tile_scores", "accumulator", "rows_m", "rows_l", "rescale"}
    assert view.pages.currentIndex() == 1
    assert view.controls["tile"].isVisibleTo(view)
    assert not view.controls["block_size"].isVisibleTo(view)
    run = model.result(lab.scores)
    rect = view.scores_map.highlight.rect()
    assert (rect.x(), rect.width()) == (3.0, 3.0)
    assert np.array_equal(view.rescale_bars.heights[0], run.current.rescale)
    np.testing.assert_allclose(view.acc_map.matrix, run.current.out_partial)
    assert len(view.m_lines.curves) == 8
    view.transport.end_button.click()
    settle(qtbot, view)
    assert view.readouts["online.readout.diff"].text() == f"{run.max_abs_difference:.2e}"
    np.testing.assert_allclose(view.acc_map.matrix, run.reference, rtol=1e-12)
    view.controls["causal"].setChecked(True)
    assert model.causal == "on"


@pytest.mark.parametrize("values", [[math.nan, 1.0], [math.inf, 1.0], [-math.inf, -math.inf], [5.0],
                                    [1e308, -1e308]])
@pytest.mark.parametrize("mode", ["sequential", "tree"])
def test_special_scores_draw_without_errors(qtbot, view, lab, values, mode):
    model = lab.models["online"]
    model.update_from_dict({"row": "scores", "mode": mode, "block_size": 1})
    lab.scores.set_values(values)
    settle(qtbot, view)
    for plot in view.plots().values():
        plot.grab()  # paint: pyqtgraph would warn on bad data here


def test_a_long_random_row(qtbot, view, lab):
    lab.models["online"].update_from_dict({"row_length": 4096, "block_size": 64, "step": 10})
    settle(qtbot, view)
    assert view.transport.label.text() == "step 10 of 64"
    ticks = view.row_plot.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert len(ticks) <= 25
    view.grab()


def test_theme_switch_recolours_the_bars(qtbot, view, lab):
    from gui import theme as themes

    themes.manager().set_mode("dark")
    settle(qtbot, view)
    assert view.row_plot.running_max.opts["pen"].color().name() == themes.DARK.highlight
    assert view.m_plot.curve.opts["pen"].color().name() == themes.DARK.accent


def test_export_writes_the_shown_plots_and_arrays(view, lab, tmp_path):
    written = {p.name for p in export_view(view, "online", tmp_path)}
    plots = {f"online_{k}.{ext}" for k in ("row", "running_m", "running_d", "result") for ext in ("png", "svg")}
    arrays = {f"online_{k}.csv" for k in ("steps", "result", "passes", "summary")}
    assert written == plots | arrays | {"online.npz"}
    data = read_npz(tmp_path / "online.npz")
    for key, a in lab.models["online"].arrays(lab.scores).items():
        assert np.array_equal(data[key], a.data, equal_nan=True)
        assert data[f"{key}__columns"].tolist() == list(a.columns)


def test_headless_export_subprocess(tmp_path):
    out = tmp_path / "out"
    result = run_main("export", "--view", "online", "--mode", "tree", "--row", "scores", "--scores", "2,1,0.5,-1",
                      "--block_size", "1", "--step", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "online_tree.png").exists()
    assert (out / "online_tree.svg").exists()
    data = read_npz(out / "online.npz")
    expected = OnlineModel(mode="tree", row="scores", block_size=1, step=2).arrays(row(DEFAULT))
    for key, a in expected.items():
        assert np.array_equal(data[key], a.data, equal_nan=True)
    att = run_main("export", "--view", "online", "--mode", "attention", "--n", "12", "--tile", "5",
                   "--causal", "on", "--out", str(tmp_path / "att"), "--arrays-only")
    assert att.returncode == 0, att.stderr
    acc = read_npz(tmp_path / "att" / "online.npz")["accumulator"]
    assert acc.shape == (4, 12, 4)
