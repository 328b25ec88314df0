"""A virtual list on Textual's line API: only the visible rows are ever rendered.

The owner gives the number of rows, a function drawing one row as ``rich.text.Text``
and a key per row (rows are cached by key: bump the key when a row changes). Ten
thousand rows cost nothing until they scroll into view, and re-ordering or filtering is
a new row count plus a refresh (DataTable needs about a second to add 10,000 rows).
"""

from __future__ import annotations

from typing import Callable, Hashable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

RowRenderer = Callable[[int], Text]
RowKey = Callable[[int], Hashable]
CACHE_ROWS = 600


class VirtualList(ScrollView, can_focus=True):
    """A cursor over ``count`` rows drawn on demand."""

    DEFAULT_CSS = """
    VirtualList { background: $surface; overflow-x: hidden; }
    VirtualList > .virtual-list--cursor { background: $accent 40%; text-style: bold; }
    VirtualList:focus > .virtual-list--cursor { background: $accent 70%; }
    VirtualList > .virtual-list--empty { color: $text-muted; text-style: italic; }
    """
    COMPONENT_CLASSES = {"virtual-list--cursor", "virtual-list--empty"}
    BINDINGS = [
        Binding("down", "cursor(1)", "Next", show=False),
        Binding("up", "cursor(-1)", "Previous", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("enter", "select", "Select", show=False),
    ]

    class Highlighted(Message):
        """The cursor moved to ``position`` (a row number)."""

        def __init__(self, vlist: "VirtualList", position: int) -> None:
            super().__init__()
            self.vlist = vlist
            self.position = position

        @property
        def control(self) -> "VirtualList":
            return self.vlist

    class Selected(Highlighted):
        """Enter was pressed (or a row double-clicked) on ``position``."""

    def __init__(self, render_row: RowRenderer, row_key: RowKey | None = None, empty: str = "no rows",
                 *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.render_row = render_row
        self.row_key = row_key or (lambda position: position)
        self.empty = empty
        self.count = 0
        self.cursor = 0
        self._cache: dict[Hashable, Strip] = {}
        self._cache_width = -1
        self._styles: tuple[Style, Style, Style] | None = None

    # ------------------------------------------------------------------- data

    def set_count(self, count: int, cursor: int | None = None) -> None:
        """New rows (after a filter, sort or new data); keeps the cursor in range."""
        self.count = count
        self.virtual_size = Size(self.scrollable_content_region.width, count)
        target = self.cursor if cursor is None else cursor
        self.cursor = max(0, min(target, count - 1)) if count else 0
        self._cache.clear()
        self._scroll_cursor_into_view()
        self.refresh()

    def refresh_rows(self) -> None:
        """Redraw the visible rows (those whose key changed are rendered again)."""
        self.refresh()

    def move_to(self, position: int, announce: bool = True) -> None:
        if not self.count:
            return
        position = max(0, min(position, self.count - 1))
        if position == self.cursor:
            return
        old = self.cursor
        self.cursor = position
        self._refresh_position(old)
        self._refresh_position(position)
        self._scroll_cursor_into_view()
        if announce:
            self.post_message(self.Highlighted(self, position))

    def move(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    # ----------------------------------------------------------------- actions

    def action_cursor(self, delta: int) -> None:
        self.move(delta)

    def action_page(self, direction: int) -> None:
        self.move(direction * max(1, self.scrollable_content_region.height - 1))

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(self.count - 1)

    def action_select(self) -> None:
        if self.count:
            self.post_message(self.Selected(self, self.cursor))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        position = offset.y + round(self.scroll_y)
        if 0 <= position < self.count:
            self.move_to(position)
            if event.chain >= 2:
                self.post_message(self.Selected(self, position))

    # --------------------------------------------------------------- rendering

    def _refresh_position(self, position: int) -> None:
        y = position - round(self.scroll_y)
        if 0 <= y < self.size.height:
            self.refresh_line(position)

    def _scroll_cursor_into_view(self) -> None:
        height = self.scrollable_content_region.height or self.size.height
        if height <= 0:
            return
        top = round(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, self.count)
        self._scroll_cursor_into_view()

    def render_lines(self, crop: Region) -> list[Strip]:
        # styles once per paint: computing them per line costs more than drawing the row
        self._styles = (self.rich_style, self.get_component_rich_style("virtual-list--cursor"),
                        self.get_component_rich_style("virtual-list--empty"))
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        position = y + scroll_y
        width = self.scrollable_content_region.width or self.size.width
        if self._styles is None:
            self._styles = (self.rich_style, self.get_component_rich_style("virtual-list--cursor"),
                            self.get_component_rich_style("virtual-list--empty"))
        base, cursor_style, empty_style = self._styles
        if not self.count:
            if y == 0:
                style = empty_style
                return Strip([Segment(self.empty, base + style)]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        if position >= self.count:
            return Strip.blank(width, base)
        strip = self._row_strip(position, width)
        if position == self.cursor:
            base = base + cursor_style
        return strip.apply_style(base).crop(scroll_x, scroll_x + width)

    def _row_strip(self, position: int, width: int) -> Strip:
        """The row's own segments (no widget style yet: the cursor style goes under them)."""
        if width != self._cache_width:
            self._cache.clear()
            self._cache_width = width
        key = self.row_key(position)
        strip = self._cache.get(key)
        if strip is None:
            text = self.render_row(position)
            text.no_wrap = True
            text.end = ""
            segments = list(text.render(self.app.console))
            strip = Strip(segments).adjust_cell_length(width)
            if len(self._cache) >= CACHE_ROWS:
                self._cache.clear()
            self._cache[key] = strip
        return strip
