"""A reply being generated, as a UI watches it: the backend feeds text deltas, the UI polls.

The backend calls ``feed`` from the event loop for every delta of a streamed reply
(``CallRequest.on_text``); the inspector reads ``text`` and ``rate`` on its timer, a few
times a second, so a fast stream costs an append per token and no redraw per token.
Each delta counts as one token: OpenAI, vLLM and llama.cpp stream one token per event.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class LiveReply:
    step: int = -1  # the step being generated (-1: none yet)
    step_name: str = ""
    outputs: list[str] = field(default_factory=list)  # earlier steps' finished replies
    pieces: list[str] = field(default_factory=list)
    first_at: float | None = None
    last_at: float | None = None
    done: bool = False
    _text: str = ""
    _joined: int = 0

    def begin(self, step: int, step_name: str = "") -> None:
        """A new model step starts: the previous step's text becomes an output."""
        if self.pieces:
            self.outputs.append(self.text)
        self.step, self.step_name = step, step_name
        self.pieces, self._text, self._joined = [], "", 0
        self.first_at = self.last_at = None

    def feed(self, delta: str) -> None:
        now = time.monotonic()
        if self.first_at is None:
            self.first_at = now
        self.last_at = now
        self.pieces.append(delta)

    @property
    def tokens(self) -> int:
        return len(self.pieces)

    @property
    def text(self) -> str:
        if self._joined != len(self.pieces):
            self._text += "".join(self.pieces[self._joined:])
            self._joined = len(self.pieces)
        return self._text

    @property
    def rate(self) -> float:
        """Tokens per second since the first one (0 until two have arrived)."""
        if self.first_at is None or self.last_at is None or self.last_at <= self.first_at:
            return 0.0
        return (self.tokens - 1) / (self.last_at - self.first_at)
