"""The size of an exported figure: pixels, resolution and what follows from them.

A figure is laid out at its physical size in CSS pixels (1/96 inch), the
unit the plots use on screen, so a 9 pt axis label stays 9 pt on paper;
the PNG is that layout drawn ``dpi / 96`` times larger, text, legends,
line widths and symbols together.  The SVG is the same layout, sized in
inches.  Nothing here imports Qt.

>>> o = ExportOptions()
>>> (o.width, o.height, o.dpi), o.inches
((1200, 800, 200.0), (6.0, 4.0))
>>> ExportOptions.from_args(dpi="300").pixels
(1800, 1200)
>>> ExportOptions.from_args(size="1600x900").layout
(768.0, 432.0)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from gui.model.texts import tr

#: CSS pixels per inch: the unit of the on-screen layout and of the SVG's user space.
CSS_DPI = 96.0
DEFAULT_DPI = 200.0
#: The default figure, landscape 3:2 whatever the plot's shape on screen.
DEFAULT_INCHES = (6.0, 4.0)
DPI_RANGE = (50.0, 1200.0)
PIXEL_RANGE = (100, 10000)
MAX_PIXELS = 40_000_000
#: The smallest layout (CSS px) a plot is drawn at: below it axes and legends collide.
MIN_LAYOUT = (240.0, 160.0)

_SIZE = re.compile(r"^\s*(\d+)\s*[x×X*,]\s*(\d+)\s*$")


@dataclass(frozen=True)
class ExportOptions:
    """A PNG of ``width`` x ``height`` pixels at ``dpi``; see the module docstring."""

    width: int = round(DEFAULT_INCHES[0] * DEFAULT_DPI)
    height: int = round(DEFAULT_INCHES[1] * DEFAULT_DPI)
    dpi: float = DEFAULT_DPI

    def __post_init__(self) -> None:
        object.__setattr__(self, "width", int(self.width))
        object.__setattr__(self, "height", int(self.height))
        object.__setattr__(self, "dpi", float(self.dpi))
        problem = self.problem()
        if problem:
            raise ValueError(problem)

    def problem(self) -> str | None:
        """Why these numbers make no figure, or None."""
        lo, hi = DPI_RANGE
        if not (math.isfinite(self.dpi) and lo <= self.dpi <= hi):
            return tr("export.error.dpi_range", low=f"{lo:g}", high=f"{hi:g}", dpi=f"{self.dpi:g}")
        lo, hi = PIXEL_RANGE
        for key, v in (("export.error.width_range", self.width), ("export.error.height_range", self.height)):
            if not lo <= v <= hi:
                return tr(key, low=lo, high=hi, value=v)
        if self.width * self.height > MAX_PIXELS:
            return tr("export.error.too_many_pixels", width=self.width, height=self.height,
                      limit=MAX_PIXELS // 1_000_000)
        lw, lh = self.layout
        if lw < MIN_LAYOUT[0] or lh < MIN_LAYOUT[1]:
            w_in, h_in = (m / CSS_DPI for m in MIN_LAYOUT)
            return tr("export.error.too_small", width=self.width, height=self.height, dpi=f"{self.dpi:g}",
                      w_in=f"{self.inches[0]:g}", h_in=f"{self.inches[1]:g}", min_w=f"{w_in:g}", min_h=f"{h_in:g}")
        return None

    @classmethod
    def from_args(cls, *, size: str | None = None, dpi: str | float | None = None) -> ExportOptions:
        """From ``--size WxH`` and ``--dpi N`` (either, both or neither).

        ``--dpi`` alone keeps the default 6 x 4 in figure and changes its
        pixels; ``--size`` alone keeps 200 dpi.  Raises ValueError.
        """
        if dpi is None:
            res = DEFAULT_DPI
        else:
            try:
                res = float(dpi)
            except ValueError:
                raise ValueError(tr("export.error.dpi_not_number", value=repr(dpi))) from None
            lo, hi = DPI_RANGE
            if not (math.isfinite(res) and lo <= res <= hi):
                raise ValueError(tr("export.error.dpi_option_range", low=f"{lo:g}", high=f"{hi:g}", value=dpi))
        if size is None:
            w, h = (round(v * res) for v in DEFAULT_INCHES)
        else:
            m = _SIZE.match(size)
            if m is None:
                raise ValueError(tr("export.error.size_format", value=repr(size)))
            w, h = int(m.group(1)), int(m.group(2))
        return cls(w, h, res)

    @property
    def pixels(self) -> tuple[int, int]:
        return self.width, self.height

    @property
    def scale(self) -> float:
        """PNG pixels per layout pixel."""
        return self.dpi / CSS_DPI

    @property
    def layout(self) -> tuple[float, float]:
        """The size the plot is laid out at, in CSS pixels (the SVG's user units)."""
        return self.width * CSS_DPI / self.dpi, self.height * CSS_DPI / self.dpi

    @property
    def inches(self) -> tuple[float, float]:
        return round(self.width / self.dpi, 3), round(self.height / self.dpi, 3)

    def with_dpi(self, dpi: float) -> ExportOptions:
        """The same physical size at another resolution (the pixels follow)."""
        w_in, h_in = self.width / self.dpi, self.height / self.dpi
        return ExportOptions(round(w_in * dpi), round(h_in * dpi), dpi)
