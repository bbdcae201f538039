"""Tests for compute.precision: thresholds against real overflow and np.finfo,
bfloat16 rounding against plain bit loops and exact arithmetic, softmax in
each format against step-by-step scalar references, masking outcomes and
Hypothesis properties.

Reference values are computed with NumPy's own scalars and Python integers,
under ``np.errstate`` where they overflow on purpose; pyproject.toml makes
any warning from *our* code an error.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compute
from compute import (
    PRECISION_DTYPES,
    SOFTMAX_METHODS,
    exp_in,
    lowest_finite,
    nextafter_in,
    overflow_threshold,
    precision_info,
    renormalize_in,
    softmax_in,
    to_bfloat16,
    underflow_threshold,
)

NATIVE = ("float16", "float32", "float64")
INF, NAN = math.inf, math.nan


def f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f32_from_bits(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


def bf16_loop(bits: int) -> int:
    """Round one float32 bit pattern to bfloat16 the slow, obvious way (returns float32 bits)."""
    exponent, mantissa = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exponent == 0xFF and mantissa:  # NaN: quiet, same sign
        return (bits & 0x80000000) | 0x7FC00000
    upper, lower = bits >> 16, bits & 0xFFFF
    if lower > 0x8000 or (lower == 0x8000 and upper & 1):
        upper += 1  # may carry into the exponent, up to inf: that is rounding past the max
    return upper << 16


def bf16_exact(x: float) -> float:
    """The bfloat16 nearest to the float64 ``x`` (ties to even), by exact rational arithmetic."""
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    _, e = math.frexp(abs(x))  # |x| in [2**(e-1), 2**e)
    spacing = Fraction(2) ** (max(e - 1, -126) - 7)  # 8 significant bits; subnormals below 2**-126
    q = round(Fraction(x) / spacing)  # Python rounds a Fraction half to even
    value = q * spacing
    if abs(value) >= Fraction(2) ** 128 - Fraction(2) ** (127 - 8):  # at or past the halfway point above max
        return math.copysign(INF, x)
    return math.copysign(float(value), x) if value == 0 else float(value)


# -- formats and thresholds ------------------------------------------------------------


@pytest.mark.parametrize("name", NATIVE)
def test_info_matches_finfo(name):
    info, fi = precision_info(name), np.finfo(name)
    assert (info.eps, info.max, info.lowest) == (float(fi.eps), float(fi.max), float(fi.min))
    assert info.smallest_normal == float(fi.smallest_normal)
    assert info.smallest_subnormal == float(fi.smallest_subnormal)
    assert lowest_finite(name) == float(fi.min) and not info.emulated
    assert precision_info(np.dtype(name)) == precision_info(getattr(np, name)) == info


def test_bfloat16_info_from_its_bit_patterns():
    info = precision_info("bfloat16")
    assert info.emulated
    assert info.max == f32_from_bits(0x7F7F0000) == pytest.approx(3.3895313892515355e38, rel=1e-15)
    assert lowest_finite("bfloat16") == f32_from_bits(0xFF7F0000) == -info.max
    assert info.smallest_normal == f32_from_bits(0x00800000) == 2.0**-126
    assert info.smallest_subnormal == f32_from_bits(0x00010000) == 2.0**-133
    assert info.eps == f32_from_bits(0x3F810000) - 1.0 == 2.0**-7


@pytest.mark.parametrize(("name", "expected"), [
    ("float16", 11.0859375), ("bfloat16", 88.5), ("float32", 88.72283172607422), ("float64", 709.782712893384),
])
def test_overflow_threshold_is_exact_in_the_format(name, expected):
    t = overflow_threshold(name)
    assert t == expected
    assert t == pytest.approx(math.log(precision_info(name).max), abs=0.25)
    with np.errstate(over="ignore"):
        if name == "bfloat16":
            up = f32_from_bits(f32_bits(t) + 0x10000)  # the next bfloat16
            assert np.isfinite(to_bfloat16(np.exp(np.float32(t))))
            assert to_bfloat16(np.exp(np.float32(up))) == np.inf
            assert to_bfloat16(t) == t  # a bfloat16 value
        else:
            d = getattr(np, name)
            assert d(t) == t  # a value of the format
            assert np.isfinite(np.exp(d(t)))
            assert np.exp(np.nextafter(d(t), d(np.inf))) == np.inf
    assert exp_in(nextafter_in(t, INF, name), name) == np.inf


@pytest.mark.parametrize("name", PRECISION_DTYPES)
def test_underflow_threshold_is_the_last_x_with_exp_zero(name):
    t = underflow_threshold(name)
    sub = precision_info(name).smallest_subnormal
    assert t == pytest.approx(math.log(sub) - math.log(2.0), abs=0.6)
    with np.errstate(under="ignore"):
        if name == "bfloat16":
            up = f32_from_bits(f32_bits(t) - 0x10000)  # t < 0: the next bfloat16 up has a smaller magnitude
            assert to_bfloat16(np.exp(np.float32(t))) == 0
            assert to_bfloat16(np.exp(np.float32(up))) >= sub
        else:
            d = getattr(np, name)
            assert np.exp(d(t)) == 0
            assert np.exp(np.nextafter(d(t), d(np.inf))) >= d(sub)
    assert exp_in(np.linspace(t - 50, t, 11), name).max() == 0  # and everything below


def test_unknown_formats_are_refused():
    for bad in ("float8", "int32", None, np.int64, "bfloat"):
        with pytest.raises(ValueError, match="dtype must be one of"):
            softmax_in([1.0], bad)
    with pytest.raises(ValueError, match="method must be one of"):
        softmax_in([1.0], "float32", "fast")
    with pytest.raises(TypeError):
        softmax_in(np.array([1 + 2j]), "float32")


# -- bfloat16 rounding -----------------------------------------------------------------


def test_to_bfloat16_known_values():
    f32max = float(np.finfo(np.float32).max)
    cases = {
        1.0: 1.0,
        1.00390625: 1.0,  # exactly halfway between 1 and 1 + 2**-7: ties to even
        1.01171875: 1.015625,  # halfway between 1.0078125 (odd) and 1.015625 (even)
        1.0078125: 1.0078125,
        1.005: 1.0078125,
        f32max: INF,  # rounds past bfloat16's max
        -f32max: -INF,
        3.3895313892515355e38: 3.3895313892515355e38,
        INF: INF,
        -INF: -INF,
        1e-40: 9.183549615799121e-41,  # a float32 subnormal to a bfloat16 subnormal (2**-133)
        -1e9: -998244352.0,  # 238 * 2**22: bfloat16 values near 1e9 are 4194304 apart
    }
    out = to_bfloat16(np.array(list(cases), dtype=np.float32))
    assert out.dtype == np.float32
    assert out.tolist() == list(cases.values())
    assert math.isnan(to_bfloat16(np.float32(NAN))[()])
    neg_zero = to_bfloat16(-0.0)
    assert neg_zero == 0 and math.copysign(1.0, float(neg_zero)) == -1.0
    assert to_bfloat16(np.ones((2, 3), dtype=np.float16)).shape == (2, 3)


def test_to_bfloat16_matches_a_bit_loop_on_every_kind_of_float32():
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**32, size=20000, dtype=np.uint64).astype(np.uint32)
    special = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7F800001, 0xFFFFFFFF, 0x7FC00000,
               0x7F7FFFFF, 0x7F7F7FFF, 0x7F7F8000, 0x7F7E8000, 0x00008000, 0x00018000, 0x3F808000, 0x3F818000]
    bits = np.concatenate([bits, np.array(special, dtype=np.uint32)])
    got = to_bfloat16(bits.view(np.float32)).view(np.uint32)
    assert got.tolist() == [bf16_loop(int(b)) for b in bits]


def test_float64_input_is_rounded_once_not_twice():
    x = 1.0 + 2.0**-8 + 2.0**-40  # just above a tie; float32 would round it onto the tie
    assert np.float32(x) == np.float32(1.00390625)
    assert to_bfloat16(np.float32(x)) == 1.0  # from float32: the tie goes to even
    assert to_bfloat16(x) == 1.0078125  # from float64: nearest
    assert to_bfloat16(-x) == -1.0078125
    tiny = 2.0**-134 + 2.0**-160  # just above half the smallest subnormal, below float32's range
    assert np.float32(tiny) == np.float32(2.0**-134)
    assert to_bfloat16(tiny) == 2.0**-133


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True, width=64))
def test_to_bfloat16_of_float64_is_the_exactly_nearest(x):
    got = float(to_bfloat16(x))
    want = bf16_exact(x)
    assert (math.isnan(got) and math.isnan(want)) or got == want


def test_nextafter_in_steps_through_each_format():
    assert nextafter_in(1.0, 2.0, "bfloat16") == 1.0078125
    assert nextafter_in(1.0, 0.0, "bfloat16") == 1.0 - 2.0**-8
    assert nextafter_in(0.0, 1.0, "bfloat16") == 2.0**-133
    assert nextafter_in(0.0, -1.0, "bfloat16") == -(2.0**-133)
    assert nextafter_in(-1.0, -INF, "bfloat16") == -1.0078125
    assert nextafter_in(precision_info("bfloat16").max, INF, "bfloat16") == INF
    assert nextafter_in(INF, INF, "bfloat16") == INF
    assert math.isnan(nextafter_in(NAN, 1.0, "bfloat16"))
    assert nextafter_in(np.array([1.0, -2.0]), 5.0, "bfloat16").tolist() == [1.0078125, -1.9921875]
    for name in NATIVE:
        d = getattr(np, name)
        assert nextafter_in(1.0, 2.0, name) == np.nextafter(d(1), d(2))


# -- softmax in a format ---------------------------------------------------------------


def stepwise(x, name: str, method: str) -> list[float]:
    """Softmax one scalar operation at a time, each rounded to the format (rows of fewer than 8).

    NumPy sums fewer than 8 float16 values by adding them one by one in float32
    and rounds once; the emulated bfloat16 does the same, so the reference does too.
    """
    if name == "bfloat16":
        def r(v):
            return np.float32(f32_from_bits(bf16_loop(f32_bits(float(np.float32(v))))))
        d = np.float32
    else:
        d = getattr(np, name)
        r = d
    acc = np.float64 if name == "float64" else np.float32
    with np.errstate(all="ignore"):
        a = [np.float32(bf16_exact(float(v))) if name == "bfloat16" else d(v) for v in x]
        if method == "naive":
            e = [r(np.exp(v)) for v in a]
        else:
            m = max(a)
            z = [r(v - m) for v in a]
            e = [r(np.exp(v)) for v in z]
        total = acc(0)
        for v in e:
            total = acc(total + acc(v))
        total = r(total)
        if method == "log_sum_exp":
            lse = r(np.log(total))
            return [float(r(np.exp(r(v - lse)))) for v in z]
        return [float(r(v / total)) for v in e]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.floats(-30, 30), min_size=1, max_size=7),
    st.sampled_from(PRECISION_DTYPES),
    st.sampled_from(SOFTMAX_METHODS),
    st.floats(1, 8),
)
def test_softmax_in_is_the_format_step_by_step(row, name, method, scale):
    x = np.array(row) * scale
    got = softmax_in(x, name, method).astype(np.float64)
    np.testing.assert_array_equal(got, stepwise(x, name, method))


def test_results_are_in_the_format():
    x = np.array([2.0, 1.0, 0.5, -1.0])
    for name in PRECISION_DTYPES:
        for method in SOFTMAX_METHODS:
            p = softmax_in(x, name, method)
            assert p.dtype == (np.float32 if name == "bfloat16" else np.dtype(name))
            if name == "bfloat16":
                assert np.array_equal(to_bfloat16(p), p)
    # computed in float16, not in float64 and rounded at the end: the last weight differs
    f16 = softmax_in(x, "float16", "max_shifted")
    assert not np.array_equal(f16, compute.softmax(x).astype(np.float16))


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 12)),
                  elements=st.floats(-1e6, 1e6)))
def test_float64_max_shifted_is_compute_softmax_bit_for_bit(x):
    assert np.array_equal(softmax_in(x, "float64", "max_shifted"), compute.softmax(x))
    assert np.array_equal(softmax_in(x, "float64", "max_shifted", axis=0), compute.softmax(x, axis=0))


def test_rows_are_independent_and_axis_and_layout_do_not_matter():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 300)) * 4
    for name in PRECISION_DTYPES:
        for method in SOFTMAX_METHODS:
            full = softmax_in(x, name, method)
            for i in (0, 3):
                assert np.array_equal(full[i], softmax_in(x[i], name, method), equal_nan=True)
            transposed = softmax_in(np.asfortranarray(x.T), name, method, axis=0)
            assert np.array_equal(transposed, full.T, equal_nan=True)


@pytest.mark.parametrize("name", PRECISION_DTYPES)
def test_naive_overflows_exactly_past_the_threshold(name):
    t = overflow_threshold(name)
    fine = softmax_in([t, 0.0], name, "naive")
    assert np.all(np.isfinite(fine)) and fine[0] > 0.99
    broken = softmax_in([float(nextafter_in(t, INF, name)), 0.0], name, "naive")
    assert np.isnan(broken[0]) and broken[1] == 0  # inf / inf, and finite / inf
    for method in ("max_shifted", "log_sum_exp"):  # the shifted formulas do not care
        assert softmax_in([float(nextafter_in(t, INF, name)), 0.0], name, method)[0] == 1


def test_the_issue_numbers():
    assert np.isnan(softmax_in([89.0, 0.0], "float32", "naive")[0])
    assert np.isnan(softmax_in([11.1, 0.0], "float16", "naive")[0])
    assert np.isfinite(softmax_in([89.0, 0.0], "float64", "naive")).all()
    assert np.isnan(softmax_in([89.0, 0.0], "bfloat16", "naive")[0])  # 89 > 88.5


@pytest.mark.parametrize("method", ["max_shifted", "log_sum_exp"])
def test_masking_outcomes(method):
    row = [2.0, 1.0, -1e9, -1e9]
    for name in PRECISION_DTYPES:
        p = softmax_in(row, name, method)
        assert p[2] == 0 and p[3] == 0 and abs(float(p[:2].sum()) - 1) < 4 * precision_info(name).eps
    assert np.isnan(softmax_in([-1e9], "float16")).all()  # -inf - (-inf)
    with np.errstate(over="ignore"):
        assert np.float16(-1e9) == -np.inf  # why
    for name in PRECISION_DTYPES:
        assert np.isnan(softmax_in([-INF] * 4, name, method)).all()  # fully masked with -inf
        for mask in (-1e4, lowest_finite(name)):  # a finite mask: uniform (all equal)
            p = softmax_in([mask] * 4, name, method)
            assert len(set(p.tolist())) == 1 and abs(4 * float(p[0]) - 1) <= 4 * precision_info(name).eps
            if method == "max_shifted":
                assert p.tolist() == [0.25] * 4  # exp(0) / 4; log-sum-exp rounds log(4) first
        lowest = lowest_finite(name)
        one_left = softmax_in([lowest, 3.0, lowest], name, method)
        assert one_left.tolist() == [0.0, 1.0, 0.0]
    fully_1e9 = {name: softmax_in([-1e9] * 4, name, method) for name in PRECISION_DTYPES}
    assert np.isnan(fully_1e9["float16"]).all()  # -1e9 became -inf in float16
    for name in ("bfloat16", "float32", "float64"):
        assert len(set(fully_1e9[name].tolist())) == 1  # uniform


def test_naive_turns_any_fully_masked_row_into_nan():
    for name in PRECISION_DTYPES:
        for mask in (-INF, -1e9, -1e4, lowest_finite(name)):
            assert np.isnan(softmax_in([mask] * 3, name, "naive")).all()
        assert np.isnan(softmax_in([-200.0, -201.0], name, "naive")).all() == (name != "float64")


def test_scores_beyond_the_format_become_inf():
    assert np.isnan(softmax_in([1e5, 0.0], "float16", "max_shifted")[0])  # inf - inf
    assert softmax_in([1e5, 0.0], "float32", "max_shifted").tolist() == [1.0, 0.0]


def test_shapes_empty_and_scalars():
    assert softmax_in(np.zeros((2, 0)), "float16").shape == (2, 0)
    assert softmax_in(3.0, "bfloat16").shape == () and softmax_in(3.0, "bfloat16") == 1
    assert softmax_in([[1, 2], [3, 4]], "float32").dtype == np.float32  # ints become numbers
    np.testing.assert_array_equal(renormalize_in([1.0, 1.0, 2.0], "float64"), [0.25, 0.25, 0.5])
    assert renormalize_in(np.ones((3, 4), dtype=np.float32), "bfloat16").dtype == np.float32
    assert renormalize_in(2.0, "float16") == 1


def _tolerance(name: str, n: int) -> float:
    return precision_info(name).eps * (n + 2)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(PRECISION_DTYPES),
    st.sampled_from(["max_shifted", "log_sum_exp"]),
    st.integers(1, 40),
    st.floats(0.1, 500.0),
    st.integers(0, 2**32 - 1),
)
def test_shifted_formulas_sum_to_one_within_the_format(name, method, n, spread, seed):
    x = np.random.default_rng(seed).uniform(-spread, spread, n)
    if name == "float16":
        x = np.clip(x, -30000, 30000)  # rows that fit float16, including x - max
    p = softmax_in(x, name, method).astype(np.float64)
    assert np.all(np.isfinite(p)) and np.all(p >= 0) and p.max() > 0
    assert abs(p.sum() - 1.0) <= _tolerance(name, n)
