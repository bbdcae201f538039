"""The CUDA kernels compile, with no GPU: NVRTC for sm_75/80/90, and ptxas reports no spills.

NVRTC comes from ``cupy-cuda13x`` + ``nvidia-cuda-nvrtc`` (the test extras).
Without them the NVRTC tests skip, except under CI (``CI`` set), where a
missing compiler is a failure: CI installs the extras and must not skip.
The ptxas test needs ``nvcc`` (``/usr/local/bin/nvcc`` or on ``PATH``) and
skips without it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from compute.backends import kernels

ARCHS = ("sm_75", "sm_80", "sm_90")


def _need_nvrtc():
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as exc:  # ImportError, or the NVRTC library is missing
        if os.environ.get("CI"):
            pytest.fail(f"CI must compile the CUDA kernels, but cupy/NVRTC is unavailable: {exc!r}")
        pytest.skip(f"cupy/NVRTC unavailable: {exc!r}")
    return nvrtc


@pytest.fixture(scope="module")
def compiled():
    """``{(source, arch): (ptx, lowered)}``, compiled once for the module."""
    _need_nvrtc()
    cache: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}

    def get(source: str, arch: str):
        if (source, arch) not in cache:
            cache[source, arch] = kernels.compile_ptx(source, arch)
        return cache[source, arch]

    return get


def _entries(ptx: str) -> dict[str, str]:
    """Mangled entry name -> its PTX body."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"\.entry\s+(\w+)\s*\(", ptx)]
    bounds = [s for s, _ in starts[1:]] + [len(ptx)]
    return {name: ptx[s:e] for (s, name), e in zip(starts, bounds)}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", kernels.SOURCES)
def test_every_instantiation_compiles(compiled, source, arch):
    ptx, lowered = compiled(source, arch)
    assert re.search(rf"^\.target {arch}\b", ptx, re.M), "PTX for the wrong architecture"
    names = kernels.name_expressions(source)
    assert len(names) == len(set(names)) > 0
    assert set(lowered) == set(names)
    entries = _entries(ptx)
    for name in names:
        assert lowered[name] in entries, f"{name} has no entry in the PTX"


def test_vector_variants_use_16_byte_packets(compiled):
    ptx, lowered = compiled("softmax.cu", "sm_90")
    entries = _entries(ptx)
    wide = {"half_t": "ld.global.nc.v4.u32", "float": "ld.global.nc.v4.f32", "double": "ld.global.nc.v2.f64"}
    for name in kernels.name_expressions("softmax.cu"):
        ctype, vec = re.match(r"\w+<(\w+), (\d+)", name).groups()
        body = entries[lowered[name]]
        if int(vec) > 1:
            assert wide[ctype] in body, f"{name} does not load 16-byte packets"
        else:
            assert "ld.global.nc.v" not in body and "st.global.v" not in body, name


def test_a_syntax_error_fails_the_compile():
    _need_nvrtc()
    src = (kernels.CUDA_DIR / "softmax.cu").read_text()
    broken = src.replace("m = warp_max(m);", "m = warp_max(m)", 1)
    assert broken != src
    with pytest.raises(kernels.CompileError, match="softmax.cu"):
        kernels.compile_ptx("softmax.cu", "sm_90", source=broken)
    # and a template that only breaks when instantiated
    broken = (kernels.CUDA_DIR / "attention.cu").read_text().replace("acc[i][c] *= r;", "acc[i][c] *= undefined_r;")
    with pytest.raises(kernels.CompileError, match="undefined_r"):
        kernels.compile_ptx("attention.cu", "sm_80", source=broken)


def test_header_is_inlined_and_constants_need_no_cuda_headers():
    for source in kernels.SOURCES:
        code = kernels.kernel_source(source)
        assert not re.search(r'^#include "softmax_common\.cuh"', code, re.M)
        assert "template <typename C> __device__ __forceinline__ C warp_max" in code
        assert not re.search(r"^\s*#include\s*<", code, re.M), "NVRTC has no system include path here"
        code_only = re.sub(r"//[^\n]*", "", code)
        assert not re.search(r"\bINFINITY\b|\bNAN\b", code_only), "NVRTC predefines neither INFINITY nor NAN"


def test_the_launcher_only_asks_for_instantiated_kernels():
    names = set(kernels.name_expressions("softmax.cu"))
    sizes = [1, 2, 31, 32, 33, 100, 1000, 1023, 1024, 1025, 4096, 50257, 60000, 151936, 1 << 20, (1 << 20) + 3]
    for dtype in (np.float16, np.float32, np.float64):
        for n in sizes:
            for rows in (1, 8, 300, 100_000):
                for aligned in (True, False):
                    plan = kernels.launch_plan(rows, n, dtype, aligned=aligned)
                    assert set(plan.kernels) <= names, plan
    attention = set(kernels.name_expressions("attention.cu"))
    for dtype in (np.float16, np.float32, np.float64):
        for d in (1, 32, 33, 64, 65, 128):
            assert kernels.attention_plan(2, 100, d, d, dtype).kernel in attention
            assert kernels.attention_plan(2, 100, d, d, dtype).smem <= 48 * 1024


# --------------------------------------------------------------------------
# ptxas: registers and spills
# --------------------------------------------------------------------------
def _nvcc() -> str | None:
    return shutil.which("nvcc") or next((p for p in ("/usr/local/bin/nvcc", "/usr/local/cuda/bin/nvcc") if os.path.exists(p)), None)


def _ptxas_report(text: str) -> dict[str, tuple[int, int, int]]:
    """Mangled kernel -> (registers, spill store bytes, spill load bytes)."""
    out = {}
    for block in re.split(r"Compiling entry function '", text)[1:]:
        name = block.split("'", 1)[0]
        regs = re.search(r"Used (\d+) registers", block)
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", block)
        assert regs and spill, f"unexpected ptxas output for {name}:\n{block[:400]}"
        out[name] = (int(regs.group(1)), int(spill.group(1)), int(spill.group(2)))
    return out


def test_ptxas_report_parser():
    text = (
        "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\n"
        "ptxas info    : Function properties for _Z1kPf\n"
        "    8 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 0 barriers, 376 bytes cmem[0]\n"
    )
    assert _ptxas_report(text) == {"_Z1kPf": (40, 4, 8)}


@pytest.mark.skipif(_nvcc() is None, reason="nvcc not installed")
def test_no_kernel_spills_on_sm_90(tmp_path):
    nvcc = _nvcc()

    def build(source: str):
        path = tmp_path / source
        path.write_text(kernels.instantiation_source(source))
        cmd = [nvcc, "-cubin", "-arch=sm_90", "-std=c++17", "-Xptxas", "-v", str(path), "-o", str(path) + ".cubin"]
        return source, subprocess.run(cmd, capture_output=True, text=True, timeout=300)

    with ThreadPoolExecutor(len(kernels.SOURCES)) as pool:
        results = list(pool.map(build, kernels.SOURCES))
    for source, res in results:
        assert res.returncode == 0, f"nvcc failed on {source}:\n{res.stderr[-3000:]}"
        report = _ptxas_report(res.stderr)
        assert len(report) == len(kernels.name_expressions(source)), "not every instantiation was built"
        spilling = {k: v for k, v in report.items() if v[1] or v[2]}
        assert not spilling, f"{source}: kernels spill (registers, store bytes, load bytes): {spilling}"
