"""The headless ``main.py export`` command, run as a user runs it (a subprocess)."""

import csv

import numpy as np
import pytest

import compute
from gui import registry
from gui.cli import UsageError, build_parser, configure
from gui.export import read_npz
from gui.model.calculator import CalculatorModel
from gui.model.scores import ScoreRow
from tests.conftest import run_main


def test_the_issues_example_writes_every_file(tmp_path):
    out = tmp_path / "out"
    result = run_main("export", "--view", "temperature", "--scores", "5.2,3.1,1.8",
                      "--temperature", "0.5", "--out", str(out), env={"QT_QPA_PLATFORM": "xcb", "DISPLAY": ""})
    assert result.returncode == 0, result.stderr
    names = {p.name for p in out.iterdir()}
    assert {"temperature_bars.png", "temperature_bars.svg", "temperature_entropy.png",
            "temperature_entropy.svg", "temperature.npz", "temperature_probs.csv"} <= names
    assert set(result.stdout.split()) == {str(out / n) for n in names}
    data = read_npz(out / "temperature.npz")
    expected = compute.softmax(np.array([5.2, 3.1, 1.8]), temperature=0.5)
    assert np.array_equal(data["probs"][:, 1], expected)  # to the last bit
    assert np.array_equal(data["probs"][:, 2], compute.softmax(np.array([5.2, 3.1, 1.8])))
    with open(out / "temperature_probs.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["label", "logit", "p_at_T", "p_at_T1"]
    assert np.array_equal([float(r[2]) for r in rows[1:]], expected)


@pytest.mark.parametrize("spec", registry.VIEWS, ids=lambda s: s.name)
def test_every_view_exports_headless(tmp_path, spec):
    result = run_main("export", "--view", spec.name, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no Qt noise either
    arrays = read_npz(tmp_path / f"{spec.name}.npz")
    from gui.model.lab import Lab

    lab = Lab()
    for key, a in lab.models[spec.name].arrays(lab.scores).items():
        assert np.array_equal(arrays[key], a.data if a.npz_data is None else a.npz_data, equal_nan=True)
        assert (tmp_path / f"{spec.name}_{key}.csv").exists() == a.csv  # npz-only arrays get no CSV
    assert any(p.suffix == ".png" for p in tmp_path.iterdir())
    assert any(p.suffix == ".svg" for p in tmp_path.iterdir())


def test_calculator_export_with_labels_and_temperature(tmp_path):
    result = run_main("export", "--view", "calculator", "--scores", "2,1,0.1", "--labels", "a,b,c",
                      "--temperature", "1", "--out", str(tmp_path), "--arrays-only")
    assert result.returncode == 0, result.stderr
    assert not any(p.suffix in (".png", ".svg") for p in tmp_path.iterdir())
    data = read_npz(tmp_path / "calculator.npz")
    row = ScoreRow()
    row.set_values([2, 1, 0.1], ["a", "b", "c"])
    assert np.array_equal(data["steps"], CalculatorModel().arrays(row)["steps"].data)
    assert np.round(data["probs"], 3).tolist() == [0.659, 0.242, 0.099]
    assert data["probs__rows"].tolist() == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--view", "nope"], "invalid choice"),
        (["--view", "temperature"], "--out"),
        (["--view", "temperature", "--scores", "1,abc", "--out", "X"], "'abc' is not a number"),
        (["--view", "temperature", "--temperature", "0", "--out", "X"], "between 0.01 and 100"),
        (["--view", "temperature", "--temperature", "hot", "--out", "X"], "must be a number, got 'hot'"),
        (["--view", "calculator", "--scale", "2", "--out", "X"], "does not apply to the calculator"),
        (["--view", "calculator", "--scores", "1,2", "--labels", "a", "--out", "X"], "1 labels for 2 scores"),
        (["--view", "calculator", "--session", "missing.json", "--out", "X"], "cannot read"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, args, message):
    result = run_main("export", *[a.replace("X", str(tmp_path / "o")) for a in args], cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not (tmp_path / "o").exists()


def test_existing_files_need_overwrite(tmp_path):
    args = ["export", "--view", "calculator", "--out", str(tmp_path), "--arrays-only"]
    assert run_main(*args).returncode == 0
    (tmp_path / "calculator.npz").write_bytes(b"mine")
    again = run_main(*args)
    assert again.returncode == 2
    assert "--overwrite" in again.stderr
    assert (tmp_path / "calculator.npz").read_bytes() == b"mine"
    assert run_main(*args, "--overwrite").returncode == 0
    assert "steps" in read_npz(tmp_path / "calculator.npz")


def test_help_lists_views_and_parameters():
    result = run_main("export", "--help")
    assert result.returncode == 0
    for spec in registry.VIEWS:
        assert spec.name in result.stdout
        for p in spec.model.params():
            assert f"--{p}" in result.stdout
    assert "0.01 to 100" in result.stdout
    # a name shared by views with different ranges lists each range
    assert "0.1 to 10, log scale, default 1 (views: temperature)" in " ".join(result.stdout.split())


def test_export_from_a_session_file(tmp_path):
    from gui.model.lab import Lab

    lab = Lab()
    lab.scores.set_values([3.0, -1.0, 2.0])
    lab.models["temperature"].set_param("scale", 2.0)
    lab.session().save(tmp_path / "s.json")
    out = tmp_path / "out"
    result = run_main("export", "--view", "temperature", "--session", str(tmp_path / "s.json"),
                      "--temperature", "4", "--out", str(out), "--arrays-only")
    assert result.returncode == 0, result.stderr
    probs = read_npz(out / "temperature.npz")["probs"]
    assert np.array_equal(probs[:, 1], compute.softmax(np.array([6.0, -2.0, 4.0]), temperature=4.0))


def test_configure_in_process_matches_the_parser():
    args = build_parser().parse_args(["--view", "temperature", "--out", "x", "--scale", "3"])
    lab = configure(args)
    assert lab.models["temperature"].scale == 3.0
    with pytest.raises(UsageError):
        configure(build_parser().parse_args(["--view", "temperature", "--out", "x", "--labels", "a"]))


def test_main_rejects_unknown_arguments():
    result = run_main("--frobnicate")
    assert result.returncode == 2
    assert "unknown argument" in result.stderr
    assert run_main("--version").stdout.startswith("softmax-lab ")


def test_pip_install_gives_a_softmax_lab_command():
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("softmax-lab")
    except PackageNotFoundError:
        pytest.skip("the project is not pip-installed in this environment")
    (script,) = [ep for ep in dist.entry_points if ep.name == "softmax-lab"]
    from gui.entry import main

    assert script.group == "console_scripts"
    assert script.load() is main


def test_a_stale_setting_in_the_session_is_a_warning(tmp_path):
    import json

    (tmp_path / "s.json").write_text(json.dumps({
        "format": "softmax-lab-session", "version": 1,
        "scores": [{"value": 1.0}, {"value": 3.0}], "views": {"calculator": {"temperature": 0}},
    }))
    result = run_main("export", "--view", "calculator", "--session", str(tmp_path / "s.json"),
                      "--out", str(tmp_path / "o"), "--arrays-only")
    assert result.returncode == 0, result.stderr
    assert "warning: --session: calculator: temperature must be" in result.stderr
    assert read_npz(tmp_path / "o" / "calculator.npz")["probs"].shape == (2,)
