"""The TSV block parser shared by the score table and the Q/K/V tables."""

from hypothesis import given
from hypothesis import strategies as st

from gui.widgets.cell_table import split_tsv, strip_header


def number(cell):
    try:
        float(cell)
    except (TypeError, ValueError):
        return False
    return True


def test_split_tsv_takes_any_line_ending_and_drops_blank_lines():
    assert split_tsv("a\tb\r\n1\t2\r3\t4\n\n \t \n5\t6") == [["a", "b"], ["1", "2"], ["3", "4"], ["5", "6"]]


def test_a_header_is_dropped_only_above_mostly_numbers():
    assert strip_header([["x", "y"], ["1", "2"], ["3", "4"]], number) == [["1", "2"], ["3", "4"]]
    assert strip_header([["x", "y"], ["1", "q"], ["r", "s"]], number)[0] == ["x", "y"]  # half is not most
    assert strip_header([["1", "y"], ["1", "2"]], number)[0] == ["1", "y"]  # a number in it: data
    assert strip_header([["x"]], number) == [["x"]]  # one line is never a header


def test_cells_picks_which_cells_count():
    lines = [["Label", "Score"], ["a", "1"], ["b", "2"]]
    second = lambda cells: cells[1:2]  # noqa: E731
    assert strip_header(lines, number, second) == lines[1:]
    assert strip_header(lines, number, lambda cells: []) == lines  # no value cell: no header


@given(st.lists(st.lists(st.sampled_from(["1", "-2.5", "x", "", "nan"]), min_size=1, max_size=4),
                min_size=2, max_size=8))
def test_strip_header_matches_its_rule(lines):
    got = strip_header(lines, number)
    rest = [number(c) for line in lines[1:] for c in line]
    header = not any(number(c) for c in lines[0]) and 2 * sum(rest) > len(rest)
    assert got == (lines[1:] if header else lines)
