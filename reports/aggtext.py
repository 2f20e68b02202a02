"""The figures' Agg text, drawn with the same pixels in less time.

matplotlib 3.11's `RendererAgg.draw_text` lays a string out, then renders it glyph by glyph, and before
every glyph sets the font's size again and builds its transform with numpy: FreeType then sets the size up
anew (with hinting, the font's size program runs again), about 0.06 ms a glyph where the rendering itself
takes 0.04 ms. The six PNGs of a report draw about 1,700 glyphs, and their text took a fifth of the figures'
drawing time (0.24 s of 1.26 s CPU for a 900-task report). `Renderer` draws a string as matplotlib does, but
sets the size once for each run of glyphs in one font and builds the transform once per string: 0.16 s.
The files are the same byte for byte (tests/reports draw every figure of a report both ways). It mirrors
that one matplotlib's code: with another version (`MIRRORED` false) the figures keep matplotlib's own
canvas, and mathtext is drawn by matplotlib's `draw_text`.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.ft2font import RenderMode

# The matplotlib whose RendererAgg.draw_text and _draw_text_glyphs_and_boxes `Renderer.draw_text` repeats
MIRRORED = matplotlib.__version__.startswith("3.11.") and hasattr(RendererAgg, "_draw_text_glyphs_and_boxes")


class Renderer(RendererAgg):
    """RendererAgg whose plain text sets each font's size once per string (see the module docstring)."""

    def draw_text(
        self,
        gc: Any,
        x: float,
        y: float,
        s: str,
        prop: Any,
        angle: float,
        ismath: Any = False,
        mtext: Any = None,
    ) -> None:
        """Draw `s` as `RendererAgg.draw_text` does (its arguments; y is downwards)."""
        if ismath:
            super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
            return
        font = self._prepare_font(prop)
        items = font._layout(
            s,
            flags=get_hinting_flag(),
            features=mtext.get_fontfeatures() if mtext is not None else None,
            language=mtext.get_language() if mtext is not None else None,
        )
        size = prop.get_size_in_points()
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        # matplotlib's transform for a glyph with no slant and no extension, the same for every glyph
        transform = (0x10000 * np.array([[cos, -sin], [sin, cos]]) @ [[1, 0], [0, 1]]).round().astype(int)
        load_flags = get_hinting_flag()
        antialiased = gc.get_antialiased()
        mode = RenderMode.NORMAL if antialiased else RenderMode.MONO
        sized = None  # the font whose size was set last (a glyph may come from a fallback font)
        for item in items:
            glyph_font = item.ft_object
            if glyph_font is not sized:
                glyph_font.set_size(size, self.dpi)
                sized = glyph_font
            dx, dy = item.x, item.y  # dy is upwards, as FreeType's y
            origin = [
                round(0x40 * (x + dx * cos - dy * sin)),
                round(0x40 * (self.height - y + dx * sin + dy * cos)),
            ]
            glyph_font._set_transform(transform, origin)
            bitmap = glyph_font._render_glyph(item.glyph_index, load_flags, mode)
            buffer = bitmap.buffer
            if not antialiased:
                buffer *= 0xFF
            # draw_text_image's y is downwards and the bitmap's bottom side
            self._renderer.draw_text_image(
                buffer, bitmap.left, int(self.height) - bitmap.top + buffer.shape[0], 0, gc
            )


class Canvas(FigureCanvasAgg):
    """An Agg canvas that draws with `Renderer` (`Canvas(fig)` makes it the figure's canvas)."""

    def get_renderer(self) -> RendererAgg:
        """The canvas's renderer, made anew when the canvas's size or dpi changed (as FigureCanvasAgg's)."""
        width, height = self.get_width_height(physical=True)
        key = (width, height, self.figure.dpi)
        if self._lastKey != key:
            self.renderer = Renderer(width, height, self.figure.dpi)
            self._lastKey = key
        return self.renderer
