"""The screens' typed way to the app: ``self.n2f`` is the ``N2FApp`` (its jobs, formats, openers).

Textual types ``Screen.app`` as a plain ``App``; a screen of this inspector only ever
runs inside ``N2FApp``, and saying so once here keeps every call to the app checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual.screen import Screen

if TYPE_CHECKING:
    from n2f_tui.app import N2FApp


class AppScreen(Screen[Any]):
    """A full screen of the inspector."""

    @property
    def n2f(self) -> "N2FApp":
        return cast("N2FApp", self.app)

