"""Exported SVGs show what the PNG shows, in renderers other than Qt's.

An SVG is opened in Inkscape, LaTeX pipelines (librsvg, CairoSVG) and
browsers, not in Qt.  Every view's plots are exported (PNG and SVG, light
theme; the first plot of each view in the dark theme too), each SVG is
rendered by resvg and by CairoSVG at the PNG's size, and the renderings
are compared with the PNG:

- most of the PNG's ink (pixels that are not the background) is inked in
  the rendering too, within 2 px (bars, curves, heatmap cells, text);
- most of the rendering's ink is ink in the PNG (no black blocks, no
  outlines grown over what they outline);
- the title band has text in it.

Before the SVGs were fixed up (gui/export/svg_fix.py), resvg drew no text
at all and 1-7 % of the PNG's ink in bar plots; CairoSVG drew 4-13 % of
bar plots and a black block over heatmaps.
"""

import numpy as np
import pytest
from PySide6.QtGui import QImage

from gui import registry
from gui import theme as themes
from gui.export import ExportOptions, export_view

cairosvg = pytest.importorskip("cairosvg")
resvg_py = pytest.importorskip("resvg_py")

#: The default figure's layout (6 x 4 in) at fewer pixels, to keep the test quick.
OPTIONS = ExportOptions(600, 400, 100)
#: Share of the PNG's ink a rendering must reproduce, and of its own ink the PNG must have.
MIN_COVERED = 0.8
MIN_FAITHFUL = 0.8
INK = 40  # a channel this far from the background is ink
NEAR = 2  # pixels of misregistration forgiven (anti-aliasing, hinting)
DARK_VIEWS = ("calculator", "normalizers", "gradients", "attention", "sampling", "online")


def pixels(data: bytes) -> np.ndarray:
    """An RGB array of a PNG, alpha composited over nothing (renderings are opaque)."""
    image = QImage()
    assert image.loadFromData(data), "not an image"
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h = image.width(), image.height()
    rows = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(h, image.bytesPerLine())
    return rows[:, : 3 * w].reshape(h, w, 3).copy()


def ink(rgb: np.ndarray, background: str) -> np.ndarray:
    bg = np.array([int(background[i:i + 2], 16) for i in (1, 3, 5)])
    return np.abs(rgb.astype(int) - bg).max(axis=-1) > INK


def near(mask: np.ndarray, r: int = NEAR) -> np.ndarray:
    """``mask`` grown by ``r`` pixels in every direction."""
    padded = np.pad(mask, r)
    out = np.zeros_like(mask)
    h, w = mask.shape
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            out |= padded[dy:dy + h, dx:dx + w]
    return out


def title_band(mask: np.ndarray) -> np.ndarray:
    h, w = mask.shape
    return mask[: int(0.09 * h), int(0.15 * w): int(0.85 * w)]


def render(renderer: str, svg: bytes, width: int, height: int) -> bytes:
    if renderer == "resvg":
        return bytes(resvg_py.svg_to_bytes(svg_string=svg.decode("utf-8"), width=width, height=height))
    return cairosvg.svg2png(bytestring=svg, output_width=width, output_height=height)


def compare(png: bytes, svg: bytes, background: str) -> dict[str, dict[str, float]]:
    """For each renderer: covered (PNG ink reproduced), faithful (rendered ink in the PNG), title ink."""
    ref = pixels(png)
    h, w = ref.shape[:2]
    ref_ink = ink(ref, background)
    out = {}
    for renderer in ("resvg", "cairosvg"):
        got = pixels(render(renderer, svg, w, h))
        assert got.shape == ref.shape, f"{renderer} rendered {got.shape[1]}x{got.shape[0]}, not {w}x{h}"
        got_ink = ink(got, background)
        out[renderer] = {
            "covered": float((ref_ink & near(got_ink)).sum() / max(ref_ink.sum(), 1)),
            "faithful": float((got_ink & near(ref_ink)).sum() / max(got_ink.sum(), 1)),
            "title": float(title_band(got_ink).sum() / max(title_band(ref_ink).sum(), 1)),
        }
    return out


def check(figures: dict[str, tuple[bytes, bytes]]) -> None:
    """``figures``: {name: (png, svg)}; every SVG must pass in both renderers."""
    background = themes.current().background
    failures = []
    for name, (png, svg) in figures.items():
        assert title_band(ink(pixels(png), background)).sum() > 50, f"{name}: the PNG has no title"
        for renderer, m in compare(png, svg, background).items():
            if m["covered"] < MIN_COVERED or m["faithful"] < MIN_FAITHFUL or m["title"] < 0.5:
                failures.append(f"{name} in {renderer}: {m}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", [s.name for s in registry.VIEWS])
def test_every_plot_renders_alike_in_the_light_theme(make_view, tmp_path, name):
    view = make_view(name)
    export_view(view, name, tmp_path, arrays=False, options=OPTIONS)
    check({f"{name}_{key}": ((tmp_path / f"{name}_{key}.png").read_bytes(),
                             (tmp_path / f"{name}_{key}.svg").read_bytes()) for key in view.plots()})


@pytest.mark.parametrize("name", DARK_VIEWS)
def test_dark_theme_plots_render_alike_on_their_background(make_view, name):
    """The first plot of the view, through the exporter's own two writers."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    from gui.export.figure import render_png, render_svg

    themes.manager().set_mode("dark")
    view = make_view(name)
    view.flush()
    key, plot = next(iter(view.plots().items()))
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    assert render_png(plot, OPTIONS).save(buf, "PNG")
    svg = render_svg(plot, OPTIONS)
    check({f"{name}_{key}": (bytes(data), svg)})
    head = svg.decode("utf-8").split("<g", 1)[0]
    assert f'fill="{themes.current().background}"' in head  # the background comes first


def test_the_comparison_catches_a_missing_bar_and_a_black_block():
    """The measure itself: a bar left out is not covered; a black block is not faithful."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    def png_of(rgb: np.ndarray) -> bytes:
        h, w = rgb.shape[:2]
        image = QImage(rgb.tobytes(), w, h, 3 * w, QImage.Format.Format_RGB888)
        data = QByteArray()
        buf = QBuffer(data)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        image.save(buf, "PNG")
        return bytes(data)

    ref = np.full((100, 200, 3), 255, np.uint8)
    ref[5:12, 60:140] = 0  # a title
    ref[40:100, 20:60] = (31, 111, 209)  # a bar
    bar = png_of(ref)

    def svg(body: str) -> bytes:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100">'
                f'<rect width="200" height="100" fill="#ffffff"/><rect x="60" y="5" width="80" height="7"/>'
                f"{body}</svg>").encode()

    same = compare(bar, svg('<rect x="20" y="40" width="40" height="60" fill="#1f6fd1"/>'), "#ffffff")
    assert all(m["covered"] > 0.95 and m["faithful"] > 0.95 for m in same.values()), same
    missing = compare(bar, svg(""), "#ffffff")
    assert all(m["covered"] < 0.3 for m in missing.values()), missing
    block = compare(bar, svg('<rect x="20" y="20" width="160" height="80" fill="#000000"/>'), "#ffffff")
    assert all(m["faithful"] < 0.3 for m in block.values()), block


def test_a_large_heatmap_renders_alike(make_view, lab, tmp_path):
    """200 x 200 weights: an enlarged image, not 40 000 rectangles, and still the PNG's picture."""
    lab.models["attention"].set_param("n", 200)
    view = make_view("attention")
    export_view(view, "attention", tmp_path, arrays=False, options=OPTIONS)
    svg = (tmp_path / "attention_weights.svg").read_bytes()
    assert svg.count(b"<image") == 1
    assert b"image-rendering:pixelated" in svg
    check({"attention_weights": ((tmp_path / "attention_weights.png").read_bytes(), svg)})


def _png_data_uri(rgb: np.ndarray) -> str:
    import base64

    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    h, w = rgb.shape[:2]
    image = QImage(np.ascontiguousarray(rgb).tobytes(), w, h, 3 * w, QImage.Format.Format_RGB888)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(bytes(data)).decode()


def _pyqtgraph_like(body: str) -> bytes:
    """A document shaped as pyqtgraph writes one: items under a data-to-pixel transform."""
    return ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
            '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            'version="1.2" baseProfile="tiny" viewBox ="0 0 200 100">\n'
            '<rect width="100%" height="100%" fill="#123456" fill-opacity="1.0" />\n'
            f"{body}</svg>\n").encode()


def test_fix_svg_draws_bars_and_small_images_in_document_coordinates():
    import xml.etree.ElementTree as ET

    from gui.export.svg_fix import fix_svg, font_list

    cells = np.array([[[255, 0, 0], [0, 0, 255]], [[0, 255, 0], [0, 255, 0]]], np.uint8)
    body = ('<g fill="#1f6fd1" stroke="#ffffff" stroke-width="1" transform="matrix(50,0,0,-40,10,90)" '
            'font-family="Sans Serif">'
            '<rect vector-effect="non-scaling-stroke" x="0" y="0" width="0.8" height="1.5"/></g>'
            '<g stroke="#000000" stroke-width="1" transform="matrix(30,0,0,20,120,20)">'
            f'<image x="0" y="0" width="2" height="2" preserveAspectRatio="none" xlink:href="{_png_data_uri(cells)}"/>'
            '</g><g transform="matrix(1,0,0,1,5,5)"><text font-family="&quot;Sans Serif&quot;" '
            'font-size="12" x="0" y="10">Weights</text></g>')
    fixed = fix_svg(_pyqtgraph_like(body), size=(200, 100), background="#123456", fonts=font_list("DejaVu Sans"),
                    title="T")
    root = ET.fromstring(fixed)
    ns = "{http://www.w3.org/2000/svg}"
    first = root[0]
    assert first.tag == f"{ns}rect"
    assert (first.get("width"), first.get("height"), first.get("fill")) == ("200", "100", "#123456")
    assert b"vector-effect" not in fixed
    assert b"Sans Serif" not in fixed
    assert {t.get("font-family") for t in root.iter(f"{ns}text")} == {font_list("DejaVu Sans")}
    assert font_list("DejaVu Sans").endswith("sans-serif")
    assert not list(root.iter(f"{ns}image"))  # 4 cells: rectangles
    bar = next(r for r in root.iter(f"{ns}rect") if r.get("width") == "40")
    assert (bar.get("x"), bar.get("y"), bar.get("height")) == ("10", "30", "60")  # y flipped: 90 - 60
    # rendered, the bar keeps its colour inside its 1 px outline, and each cell its own
    got = pixels(render("resvg", fixed, 200, 100))
    assert tuple(got[60, 30]) == (0x1F, 0x6F, 0xD1)
    assert tuple(got[30, 135]) == (255, 0, 0)
    assert tuple(got[30, 165]) == (0, 0, 255)
    assert tuple(got[50, 150]) == (0, 255, 0)


def test_fix_svg_enlarges_a_large_image_and_keeps_it_crisp():
    import base64
    import xml.etree.ElementTree as ET

    from gui.export.svg_fix import XLINK_NS, fix_svg

    rng = np.random.default_rng(0)
    big = rng.integers(0, 255, size=(100, 80, 3), dtype=np.uint8)
    body = ('<g transform="matrix(2,0,0,0.8,10,10)">'
            f'<image x="0" y="0" width="80" height="100" preserveAspectRatio="none" xlink:href="{_png_data_uri(big)}"/>'
            "</g>")
    fixed = fix_svg(_pyqtgraph_like(body), size=(200, 100), background="#ffffff", fonts="sans-serif")
    (image,) = ET.fromstring(fixed).iter("{http://www.w3.org/2000/svg}image")
    assert image.get("style") == "image-rendering:pixelated"
    decoded = QImage()
    assert decoded.loadFromData(base64.b64decode(image.get(f"{{{XLINK_NS}}}href").partition(",")[2]))
    k = decoded.width() // 80
    assert k >= 2
    assert (decoded.width(), decoded.height()) == (80 * k, 100 * k)
    assert decoded.pixelColor(3 * k + k // 2, 7 * k).getRgb()[:3] == tuple(int(v) for v in big[7, 3])
