"""The Online model's say over its controls: which parameters apply in each mode, and their ranges now."""

import numpy as np
import pytest

from compute import online_softmax_trace, tree_merge_trace
from gui.model.online import MAX_BLOCK, MAX_STEP, OnlineModel, row_steps
from gui.model.scores import ScoreRow

ROW_ONLY = ("row", "block_size", "temperature")
ATTENTION_ONLY = ("n", "d_k", "tile", "causal")


def shared(values) -> ScoreRow:
    r = ScoreRow()
    r.set_values(list(values))
    return r


@pytest.mark.parametrize("mode", ["sequential", "tree"])
def test_the_row_modes_use_the_row_parameters(mode):
    model = OnlineModel(mode=mode, row="random")
    for name in ROW_ONLY + ("row_length", "seed", "mode", "step"):
        assert model.applies(name), name
    for name in ATTENTION_ONLY:
        assert not model.applies(name), name


def test_the_shared_row_needs_no_length_or_seed():
    model = OnlineModel(row="scores")
    assert not model.applies("row_length")
    assert not model.applies("seed")
    assert model.applies("block_size")
    assert model.reads_scores


def test_attention_uses_its_own_parameters_and_the_seed():
    model = OnlineModel(mode="attention", row="scores")
    for name in ATTENTION_ONLY + ("seed", "mode", "step"):
        assert model.applies(name), name
    for name in ROW_ONLY + ("row_length",):
        assert not model.applies(name), name
    assert not model.reads_scores  # the table is not what this mode reads


def test_the_block_size_is_at_most_the_random_row():
    model = OnlineModel(row="random", row_length=16)
    assert model.bounds("block_size") == (1, 16)
    model.row_length = 3000
    assert model.bounds("block_size") == (1, MAX_BLOCK)


def test_the_block_size_is_at_most_the_attached_shared_row():
    model = OnlineModel(row="scores")
    assert model.bounds("block_size") == (1, MAX_BLOCK)  # no row attached: the declared range
    scores = shared([1.0, 2.0, 3.0, 4.0, 5.0])
    model.attach(scores)
    assert model.bounds("block_size") == (1, 5)
    scores.set_values([1.0])
    assert model.bounds("block_size") == (1, 1)


def test_the_tile_is_at_most_n():
    model = OnlineModel(mode="attention", n=8)
    assert model.bounds("tile") == (1, 8)
    model.n = 2
    assert model.bounds("tile") == (1, 2)


def test_the_step_runs_from_the_start_to_the_last_step():
    model = OnlineModel(row="random", row_length=16, block_size=4)
    assert model.bounds("step") == (0, 4)
    model.block_size = 1
    assert model.bounds("step") == (0, 16)
    model.mode = "tree"
    assert model.bounds("step") == (0, 5)  # 16 leaves, then 8, 4, 2, 1
    model.update_from_dict({"mode": "attention", "n": 9, "tile": 4})
    assert model.bounds("step") == (0, 3)


def test_the_step_range_follows_the_attached_row():
    model = OnlineModel(row="scores", block_size=1)
    scores = shared([2.0, 1.0, 0.5])
    model.attach(scores)
    assert model.bounds("step") == (0, 3)
    assert model.n_steps() == model.n_steps(scores) == 3
    scores.set_values([2.0, 1.0, 0.5, -1.0, 3.0, 0.0, 1.5])
    assert model.bounds("step") == (0, 7)


def test_other_ranges_are_the_declared_ones():
    model = OnlineModel()
    specs = model.params()
    for name in ("row_length", "seed", "temperature", "n", "d_k"):
        assert model.bounds(name) == (specs[name].minimum, specs[name].maximum), name


def test_the_step_is_clamped_into_the_run():
    model = OnlineModel(step=MAX_STEP)
    assert model.step == MAX_STEP
    assert model.clamped_step(4) == 4
    model.step = 2
    assert model.clamped_step(4) == 2
    assert model.clamped_step(1) == 1
    assert model.step == 2  # the value is kept; clamping is in what is shown and computed


def test_seed_and_length_ask_for_spin_boxes():
    specs = OnlineModel.params()
    assert specs["seed"].control == "spin"
    assert specs["row_length"].control == "spin"
    assert specs["block_size"].control == ""


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 100])
@pytest.mark.parametrize("block", [1, 2, 3, 4, 8, 64])
def test_the_step_count_is_the_traces_length(length, block):
    x = np.linspace(-2.0, 3.0, length)
    assert row_steps("sequential", length, block) == len(online_softmax_trace(x, block))
    assert row_steps("tree", length, block) == len(tree_merge_trace(x, block))


def test_a_long_tree_run_has_one_step_per_level():
    model = OnlineModel(row="random", row_length=4096, block_size=1, mode="tree")
    assert model.bounds("step") == (0, 13)
    assert model.result(shared([1.0])).n_steps == 13  # the trace agrees
