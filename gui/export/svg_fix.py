"""Make pyqtgraph's SVG render the same in every renderer, not only in Qt and browsers.

pyqtgraph's SVGExporter lets Qt write each item and then moves paths and
polylines into the document's coordinates.  Rectangles and images keep
their item's transform, which for bars and heatmaps is a huge anisotropic
scale (one data unit = 160 px), and their outlines are kept thin only by
``vector-effect="non-scaling-stroke"``, which librsvg, CairoSVG and resvg
ignore: a bar's 1 px outline becomes 160 px wide and hides the bar, and a
heatmap's highlight becomes a black block.  Text names the Qt alias
"Sans Serif", which no other renderer knows.

:func:`fix_svg` rewrites the document (xml.etree):

- rectangles under a transform are moved into document coordinates (a
  ``rect`` when the transform keeps axes, a ``path`` otherwise), so an
  outline is as wide as its pen; ``vector-effect`` goes everywhere, so line
  widths scale with the figure as they do in the PNG;
- embedded images with at most :data:`MAX_CELLS` pixels (heatmaps, colour
  bars) become one rectangle per run of equal cells, crisp in every
  renderer; larger ones are enlarged with nearest-neighbour sampling and
  marked ``image-rendering: pixelated``;
- every ``font-family`` becomes a real list ending in a generic family;
- the background is one rectangle of the document's size, first in the
  document, and the root gets its size (CSS pixels, 96 to the inch).
"""

from __future__ import annotations

import base64
import math
import re
import xml.etree.ElementTree as ET

from gui.fonts import CJK_FAMILIES
from gui.model.texts import tr

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

#: Images up to this many pixels are written as rectangles.
MAX_CELLS = 4096
#: Larger images are enlarged (nearest neighbour) up to this many pixels a side.
MAX_UPSCALED_SIDE = 4096
#: Families tried after the one the PNG used: Latin ones, then CJK ones (Chinese
#: titles and labels), and last CSS's generic family.
FALLBACK_FONTS = ("DejaVu Sans", "Noto Sans", "Liberation Sans", "Arial", "Helvetica",
                  *CJK_FAMILIES[:6], "sans-serif")

_MATRIX = re.compile(r"^\s*matrix\(([^)]*)\)\s*$")
_SHAPES = {"rect"}
_HREF = f"{{{XLINK_NS}}}href"


def _tag(el: ET.Element) -> str:
    return el.tag.rpartition("}")[2]


def _q(name: str) -> str:
    return f"{{{SVG_NS}}}{name}"


def _n(v: float) -> str:
    return f"{v:.6g}"


def font_list(first: str | None = None) -> str:
    """A CSS font-family list: ``first`` (the family Qt drew with), then the fallbacks."""
    names = [f for f in (first, *FALLBACK_FONTS) if f]
    out: list[str] = []
    for name in names:
        if name.lower() in (o.strip("'").lower() for o in out) or name.lower() == "sans serif":
            continue
        generic = name in ("sans-serif", "serif", "monospace")
        out.append(name if generic or " " not in name else f"'{name}'")
    return ", ".join(out)


def _matrix(el: ET.Element) -> tuple[float, ...] | None:
    m = _MATRIX.match(el.get("transform", ""))
    if m is None:
        return None
    vals = tuple(float(v) for v in re.split(r"[\s,]+", m.group(1).strip()))
    return vals if len(vals) == 6 else None


def _apply(m: tuple[float, ...], x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def _box(m, x: float, y: float, w: float, h: float, attrs: dict[str, str]) -> ET.Element:
    """The rectangle (x, y, w, h) mapped through ``m``: a rect if axes stay axes, else a path."""
    a, b, c, d, _e, _f = m
    attrs = {k: v for k, v in attrs.items() if k not in ("x", "y", "width", "height", "vector-effect")}
    if abs(b) < 1e-12 and abs(c) < 1e-12:
        x0, y0 = _apply(m, x, y)
        x1, y1 = _apply(m, x + w, y + h)
        attrs.update(x=_n(min(x0, x1)), y=_n(min(y0, y1)), width=_n(abs(x1 - x0)), height=_n(abs(y1 - y0)))
        return ET.Element(_q("rect"), attrs)
    pts = [_apply(m, px, py) for px, py in ((x, y), (x + w, y), (x + w, y + h), (x, y + h))]
    attrs["d"] = "M" + " L".join(f"{_n(px)},{_n(py)}" for px, py in pts) + " Z"
    return ET.Element(_q("path"), attrs)


def _scaled_stroke(group: ET.Element, child: ET.Element, m) -> str | None:
    """The stroke width a non-cosmetic pen gets once the transform is gone."""
    if child.get("vector-effect") == "non-scaling-stroke" or group.get("stroke-width") is None:
        return None
    a, b, c, d, _e, _f = m
    return _n(float(group.get("stroke-width")) * math.sqrt(abs(a * d - b * c)))


def _rect_parts(group: ET.Element, el: ET.Element, m) -> list[ET.Element]:
    x, y = float(el.get("x", 0)), float(el.get("y", 0))
    w, h = float(el.get("width", 0)), float(el.get("height", 0))
    out = _box(m, x, y, w, h, dict(el.attrib))
    width = _scaled_stroke(group, el, m)
    if width is not None:
        out.set("stroke-width", width)
    return [out]


def _decode(href: str):
    from PySide6.QtGui import QImage

    if not href.startswith("data:image/"):
        return None
    image = QImage()
    if not image.loadFromData(base64.b64decode(href.partition(",")[2])):
        return None
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def _image_cells(el: ET.Element, m, image) -> list[ET.Element]:
    """One rectangle per horizontal run of equal pixels, in document coordinates."""
    iw, ih = image.width(), image.height()
    x, y = float(el.get("x", 0)), float(el.get("y", 0))
    cw, ch = float(el.get("width", iw)) / iw, float(el.get("height", ih)) / ih
    cells = ET.Element(_q("g"), {"shape-rendering": "crispEdges", "stroke": "none"})
    for i in range(ih):
        j = 0
        while j < iw:
            rgba = image.pixel(j, i)
            k = j + 1
            while k < iw and image.pixel(k, i) == rgba:
                k += 1
            alpha = (rgba >> 24) & 0xFF
            if alpha:
                attrs = {"fill": f"#{rgba & 0xFFFFFF:06x}"}
                if alpha < 255:
                    attrs["fill-opacity"] = _n(alpha / 255)
                cells.append(_box(m, x + j * cw, y + i * ch, (k - j) * cw, ch, attrs))
            j = k
    return [cells]


def _enlarge(el: ET.Element, m, image) -> None:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt

    iw, ih = image.width(), image.height()
    a, b, c, d, _e, _f = m
    shown_w = math.hypot(a, b) * float(el.get("width", iw))
    shown_h = math.hypot(c, d) * float(el.get("height", ih))
    k = math.ceil(2 * max(shown_w / iw, shown_h / ih))
    k = min(k, MAX_UPSCALED_SIDE // max(iw, ih))
    if k <= 1:
        return
    big = image.scaled(iw * k, ih * k, Qt.AspectRatioMode.IgnoreAspectRatio,
                       Qt.TransformationMode.FastTransformation)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    big.save(buf, "PNG")
    el.set(_HREF, "data:image/png;base64," + base64.b64encode(bytes(data)).decode("ascii"))


def _parts(group: ET.Element, el: ET.Element, m) -> list[ET.Element] | None:
    """``el`` redrawn in document coordinates, or None to keep it under the transform."""
    tag = _tag(el)
    if tag in _SHAPES:
        return _rect_parts(group, el, m)
    if tag == "image":
        image = _decode(el.get(_HREF, ""))
        if image is None or image.isNull():
            return None
        if image.width() * image.height() <= MAX_CELLS:
            return _image_cells(el, m, image)
        _enlarge(el, m, image)
    return None


def _flatten(parent: ET.Element) -> None:
    """Split every transformed group into runs drawn in document coordinates and runs kept."""
    for child in list(parent):
        if _tag(child) != "g":
            continue
        _flatten(child)
        m = _matrix(child)
        if m is None:
            continue
        runs: list[tuple[bool, list[ET.Element]]] = []
        for el in list(child):
            parts = _parts(child, el, m)
            flat = parts is not None
            if not runs or runs[-1][0] != flat:
                runs.append((flat, []))
            runs[-1][1].extend(parts if flat else [el])
        if not any(flat for flat, _ in runs):
            continue
        at = list(parent).index(child)
        parent.remove(child)
        for offset, (flat, elements) in enumerate(runs):
            attrs = dict(child.attrib)
            if flat:
                attrs.pop("transform")
            g = ET.Element(_q("g"), attrs)
            g.extend(elements)
            parent.insert(at + offset, g)


def _images_pixelated(root: ET.Element) -> None:
    for el in root.iter(_q("image")):
        el.set("image-rendering", "optimizeSpeed")
        el.set("style", "image-rendering:pixelated")


def fix_svg(svg: bytes, *, size: tuple[float, float], background: str, fonts: str,
            title: str | None = None, physical: tuple[float, float] | None = None) -> bytes:
    """The document pyqtgraph wrote, made portable (see the module docstring).

    ``size`` is the layout (the viewBox), ``physical`` the document's width
    and height in CSS pixels, 96 to the inch (``size`` when not given),
    ``background`` a ``#rrggbb`` colour.
    """
    root = ET.fromstring(svg)
    w, h = size
    pw, ph = physical or size
    for old in ("baseProfile",):
        root.attrib.pop(old, None)
    root.set("version", "1.1")
    root.set("viewBox", f"0 0 {_n(w)} {_n(h)}")
    # CSS pixels (1/96 in) carry the physical size; "in" units trip some renderers
    # (resvg-py 0.5 renders them at 0 dpi, "invalid size").
    root.set("width", _n(pw))
    root.set("height", _n(ph))
    for el in list(root):
        if _tag(el) == "rect" and el.get("width") == "100%":
            root.remove(el)
        elif _tag(el) == "title":
            el.text = title or tr("export.svg.title")
        elif _tag(el) == "desc":
            el.text = tr("export.svg.desc")
    root.insert(0, ET.Element(_q("rect"), {"x": "0", "y": "0", "width": _n(w), "height": _n(h),
                                           "fill": background, "stroke": "none"}))
    _flatten(root)
    _images_pixelated(root)
    for el in root.iter():
        if "font-family" in el.attrib:
            el.set("font-family", fonts)
        el.attrib.pop("vector-effect", None)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
