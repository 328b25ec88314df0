"""The parts items share, stored once per run and referenced (``shared.jsonl``).

The items of a run repeat large parts of each other: a dedc item's demonstrations are
other samples' questions and answers, drawn again and again from one pool; a logic item's
gold formula is its input. Written whole, a 100,000-item dedc run stored each
demonstration about three times (179 MB of items). A run whose items are of format 2
(``sessions.store.items``) writes each distinct part once:

  shared.jsonl    one JSON value a line, each distinct value once (found by its 128-bit
                  BLAKE2b digest while the run is written)

and puts in its place, in the item's line, a reference ``{"\\u0000": [offset, length]}``:
where that value's JSON lies in shared.jsonl. One item is read with one read per
reference, whatever the size of the run.

Which parts: every string whose JSON is at least ``MIN_SHARED`` bytes, and every list or
object that holds no such part and whose JSON is at least ``MIN_SHARED`` bytes (the
smallest parts of that size). The rule is the same for every engine and knows nothing of
what the values mean; a part that turns out not to repeat costs its reference (about 25
bytes), a smaller one stays in the line. An object of the item's own with the key
``"\\u0000"`` is written ``{"\\u0000": [[key, value], ...]}``, so it never reads as a reference.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from array import array
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C string scanner json.decoder exports; typeshed does not list it
from json.encoder import encode_basestring
from typing import IO, Any, Callable

from sessions.errors import InputError

SHARED = "shared.jsonl"
MIN_SHARED = 64  # bytes of JSON: below this a reference would save little or cost more than the part
REF = "\x00"  # the key of a reference (or of an escaped object of the item's own)
_DIGEST = struct.Struct("<QQ")
# One encoder for every value: ``json.dumps`` with a keyword makes a new one a call (a third of
# the cost of a short string), and the writer encodes about ten values an item.
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def dumps(value: Any) -> bytes:
    """The JSON of ``value`` as every item file writes it (UTF-8, no ASCII escapes)."""
    return _ENCODE(value).encode("utf-8")


class _Seen:
    """Digest -> place in shared.jsonl of every value written, in flat arrays.

    The one thing the writer keeps per distinct value: about 40 bytes each (an open-addressing
    table of 4-byte slots at most two-thirds full, and the digest and place of each value),
    where a dict of digests would take about 150."""

    def __init__(self) -> None:
        self.slots = array("I", bytes(4 * 1024))  # 1 + the value's number, 0 for a free slot
        self.digests = array("Q")  # two words per value
        self.places = array("Q")  # offset and length per value

    def _slot(self, high: int, low: int) -> int:
        """The slot holding this digest, or the free slot where it goes."""
        slots, digests, mask = self.slots, self.digests, len(self.slots) - 1
        at = low & mask
        while (number := slots[at]) and not (digests[2 * number - 2] == high and digests[2 * number - 1] == low):
            at = (at + 1) & mask
        return at

    def place(self, digest: bytes, offset: int, length: int) -> tuple[int, int]:
        """Where the value with this digest was written; a new one is recorded at (offset, length)."""
        high, low = _DIGEST.unpack(digest)
        at = self._slot(high, low)
        number = self.slots[at]
        if number:
            return self.places[2 * number - 2], self.places[2 * number - 1]
        self.digests.extend((high, low))
        self.places.extend((offset, length))
        count = len(self.places) // 2
        if 3 * count > 2 * len(self.slots):
            self.slots = array("I", bytes(8 * len(self.slots)))
            for number in range(1, count):
                self.slots[self._slot(self.digests[2 * number - 2], self.digests[2 * number - 1])] = number
            at = self._slot(high, low)
        self.slots[at] = count
        return offset, length


class SharedWriter:
    """Writes the shared parts of a new run's items to shared.jsonl, each distinct one once."""

    def __init__(self, handle: IO[bytes]):
        self.handle = handle
        self.size = 0
        self.seen = _Seen()

    def compact(self, value: Any) -> Any:
        """``value`` with its shared parts replaced by references (written to shared.jsonl if new)."""
        return self._part(value)[0]

    def _part(self, value: Any) -> tuple[Any, bool]:
        """(the value to write, whether it holds a reference)."""
        if isinstance(value, str):
            if 6 * len(value) + 2 < MIN_SHARED:  # even escaped throughout its JSON is shorter
                return value, False
            text = encode_basestring(value).encode("utf-8")  # what dumps gives a string, without its dispatch
            return (self._reference(text), True) if len(text) >= MIN_SHARED else (value, False)
        holds = False
        if isinstance(value, dict):
            out: Any = {}
            for key, member in value.items():
                out[key], held = self._part(member)
                holds = holds or held
            if REF in out:
                out = {REF: [[key, part] for key, part in out.items()]}
        elif isinstance(value, (list, tuple)):
            out = []
            for member in value:
                part, held = self._part(member)
                out.append(part)
                holds = holds or held
        else:
            return value, False
        if holds:
            return out, True
        text = dumps(out)
        return (self._reference(text), True) if len(text) >= MIN_SHARED else (out, False)

    def _reference(self, text: bytes) -> dict[str, list[int]]:
        offset, length = self.seen.place(hashlib.blake2b(text, digest_size=16).digest(), self.size, len(text))
        if offset == self.size:  # not written before
            self.handle.write(text + b"\n")
            self.size += length + 1
        return {REF: [offset, length]}


def decoder(resolve: Callable[[int, int], Any]) -> json.JSONDecoder:
    """A JSON decoder that gives back each reference as ``resolve(offset, length)``'s value."""

    def hook(obj: dict[str, Any]) -> Any:
        if len(obj) == 1 and REF in obj:
            inner = obj[REF]
            if inner and isinstance(inner[0], list):  # an object of the item's own with the key REF
                return {key: member for key, member in inner}
            return resolve(inner[0], inner[1])
        return obj

    return json.JSONDecoder(object_hook=hook)


def _decoded(decoder: json.JSONDecoder, data: bytes) -> Any:
    """One shared value read back; a string (most of them) by the decoder's string scanner alone."""
    text = data.decode("utf-8")
    if text[:1] == '"':
        found, end = scanstring(text, 1)
        if end == len(text):
            return found
    return decoder.decode(text)


class SharedFile:
    """shared.jsonl read a value at a time (one item, the inspector): one ``pread`` per reference."""

    def __init__(self, fd: int, label: str):
        self.fd, self.label = fd, label
        self.decoder = decoder(self.value)

    def value(self, offset: int, length: int) -> Any:
        data = os.pread(self.fd, length, offset)
        if len(data) != length:
            raise InputError(f"run {self.label}: {SHARED} is shorter than its items say; the run cannot be read")
        return _decoded(self.decoder, data)


class SharedBytes:
    """shared.jsonl held whole (every item of a run at once): a string shared by many items is one object."""

    def __init__(self, data: bytes, label: str):
        self.data, self.label = data, label
        self.decoder = decoder(self.value)
        self._strings: dict[int, str] = {}

    def value(self, offset: int, length: int) -> Any:
        known = self._strings.get(offset)
        if known is not None:
            return known
        if offset + length > len(self.data):
            raise InputError(f"run {self.label}: {SHARED} is shorter than its items say; the run cannot be read")
        found = _decoded(self.decoder, self.data[offset:offset + length])
        if isinstance(found, str):  # lists and objects are made afresh: an item may change its own
            self._strings[offset] = found
        return found
