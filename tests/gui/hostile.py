"""Builders of broken and hostile .npy/.npz files (shared by the loader, session and window tests)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format


class Marker:
    """Unpickling this creates the file ``path``: proof that a loader ran pickled code."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def npy_header(path: Path, shape, descr: str = "<f8", data: bytes = b"", version=(1, 0)) -> Path:
    """A .npy whose header declares ``shape`` of ``descr``, followed by ``data`` only."""
    with open(path, "wb") as fh:
        header = {"descr": descr, "fortran_order": False, "shape": tuple(shape)}
        if version == (2, 0):
            npy_format.write_array_header_2_0(fh, header)
        else:
            npy_format.write_array_header_1_0(fh, header)
        fh.write(data)
    return path


def raw_npy(header_text: str, version=(1, 0)) -> bytes:
    """The bytes of a .npy with ``header_text`` as its header (no data)."""
    text = header_text.encode("latin1") + b"\n"
    length = len(text).to_bytes(2 if version == (1, 0) else 4, "little")
    return b"\x93NUMPY" + bytes(version) + length + text


def npz_members(path: Path, members: dict[str, bytes], compression=zipfile.ZIP_STORED) -> Path:
    """A .npz holding raw member bytes (``name`` -> ``name.npy``)."""
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(f"{name}.npy", data)
    return path


def npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def _member_data_offset(raw: bytes, name: str) -> tuple[int, int]:
    """(offset, size) of member ``name``'s stored (compressed) bytes inside the zip ``raw``."""
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        info = zf.getinfo(name)
    start = info.header_offset
    name_len = int.from_bytes(raw[start + 26:start + 28], "little")
    extra_len = int.from_bytes(raw[start + 28:start + 30], "little")
    return start + 30 + name_len + extra_len, info.compress_size


def qkv(n: int = 4, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, d)) for _ in range(3))


def attention_files(folder: Path) -> list[tuple[str, str]]:
    """Hostile attention files in ``folder``: (file name, what the refusal says)."""
    q, k, v = qkv()
    np.savez_compressed(folder / "good.npz", q=q, k=k, v=v)
    good = (folder / "good.npz").read_bytes()
    (folder / "truncated.npz").write_bytes(good[: len(good) // 2])
    (folder / "garbage.npz").write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    corrupt = bytearray(good)
    start, size = _member_data_offset(good, "q.npy")
    corrupt[start + size // 3:start + size // 3 + 24] = b"\xff" * 24
    (folder / "deflate.npz").write_bytes(bytes(corrupt))
    np.savez(folder / "stored.npz", q=q, k=k, v=v)
    crc = bytearray((folder / "stored.npz").read_bytes())
    start, size = _member_data_offset(bytes(crc), "q.npy")
    crc[start + size - 3] ^= 0xFF  # a data byte of q: the member's CRC-32 no longer matches
    (folder / "crc.npz").write_bytes(bytes(crc))
    # a 192-byte .npy whose header claims 10**12 elements
    npy_header(folder / "claims.npy", (3, 10**4, 10**4, 10**4 // 3))
    # within every limit, but the data is not there: nothing may be allocated for it
    npy_header(folder / "empty_data.npy", (3, 16, 2048, 1024), "<f4")
    declared = raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2048, 1024), }")  # 16 MiB, absent
    npz_members(folder / "short_member.npz", {"q": declared, "k": declared, "v": declared})
    # an inflation bomb: a small deflated member that inflates to d = 12,288
    with zipfile.ZipFile(folder / "bomb.npz", "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("q.npy", "w") as m:
            m.write(raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (64, 12288), }"))
            for _ in range(6):
                m.write(bytes(1024**2))
        zf.writestr("k.npy", npy_bytes(np.zeros((64, 12288))))
        zf.writestr("v.npy", npy_bytes(np.zeros((64, 12288))))
    np.savez(folder / "d0.npz", q=np.zeros((4, 0)), k=np.zeros((4, 0)), v=np.zeros((4, 0)))
    np.savez(folder / "dv0.npz", q=q, k=k, v=np.zeros((4, 0)))
    np.savez(folder / "heads.npz", q=np.zeros((17, 2, 3)), k=np.zeros((17, 2, 3)), v=np.zeros((17, 2, 3)))
    np.savez(folder / "tokens.npz", q=np.zeros((2049, 3)), k=np.zeros((2049, 3)), v=np.zeros((2049, 3)))
    (folder / "text.npz").write_text("q k v\n1 2 3\n")
    (folder / "binary.npy").write_bytes(bytes(range(1, 256)) * 8)
    (folder / "empty.npy").write_bytes(b"")
    np.save(folder / "structured.npy", np.zeros((3, 4, 3), dtype=[("a", "<f8")]))
    np.save(folder / "objects.npy", np.array([Marker(str(folder / "PWNED")), 1], dtype=object), allow_pickle=True)
    (folder / "negative.npy").write_bytes(raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, -1, 4), }"))
    (folder / "version3.npy").write_bytes(raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2, 2), }",
                                                  version=(3, 0)))
    (folder / "long_header.npy").write_bytes(raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2, 2), }"
                                                     + " " * 20_000, version=(2, 0)))
    (folder / "nested.npy").write_bytes(raw_npy("{'descr': " + "[" * 3000 + "]" * 3000 + "}", version=(2, 0)))
    return [
        ("truncated.npz", "damaged or truncated"),
        ("garbage.npz", "damaged or truncated"),
        ("deflate.npz", "damaged or truncated"),
        ("crc.npz", "damaged or truncated"),
        ("claims.npy", "10000 heads; expected 1 to 16"),
        ("empty_data.npy", "is truncated"),
        ("short_member.npz", "is truncated"),
        ("bomb.npz", "expected each from 1 to 1024"),
        ("d0.npz", "dₖ = 0 and dᵥ = 0; expected each from 1 to 1024"),
        ("dv0.npz", "dᵥ = 0"),
        ("heads.npz", "17 heads; expected 1 to 16"),
        ("tokens.npz", "expected 1 to 2048"),
        ("text.npz", "is a text file, not a NumPy .npy/.npz"),
        ("binary.npy", "is not a NumPy .npy/.npz file"),
        ("empty.npy", "is empty"),
        ("structured.npy", "structured dtype"),
        ("objects.npy", "pickled data"),
        ("negative.npy", "impossible shape"),
        ("version3.npy", "format version 3.0"),
        ("long_header.npy", "not a readable NumPy file"),
        ("nested.npy", "not a readable NumPy file"),
        ("absent.npz", "there is no such file"),
    ]


def logit_files(folder: Path) -> list[tuple[str, str]]:
    """Hostile logit files in ``folder``: (file name, what the refusal says)."""
    np.savez_compressed(folder / "good.npz", logits=np.linspace(-3, 3, 50))
    good = (folder / "good.npz").read_bytes()
    (folder / "truncated.npz").write_bytes(good[: len(good) // 2])
    npy_header(folder / "claims.npy", (10**12,))
    npy_header(folder / "short.npy", (200_000,), data=b"\0" * 64)
    (folder / "text.npy").write_text("1.5 2.5 -0.5\n0.25 3 4\n")
    np.save(folder / "objects.npy", np.array([Marker(str(folder / "PWNED")), 1], dtype=object), allow_pickle=True)
    np.save(folder / "strings.npy", np.array(["a", "b", "c"]))
    return [
        ("truncated.npz", "damaged or truncated"),
        ("claims.npy", "shape (1000000000000,)"),
        ("short.npy", "is truncated"),
        ("text.npy", "is a text file, not a NumPy .npy/.npz"),
        ("objects.npy", "pickled data"),
        ("strings.npy", "dtype <U1"),
    ]

