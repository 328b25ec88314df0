"""A run's items for the inspector: read from the store one at a time, the last few hundred kept."""

from __future__ import annotations

from collections import OrderedDict

from engines.core import Item, OnDemand
from sessions.store.runs import RunStore


class ItemsOnDemand(OnDemand[Item]):
    """The run's items, each read from the store when first asked for and a few hundred kept.

    A 100,000-item dedc run holds 180 MB of items: parsing them all would cost seconds
    before the first paint, while a screen shows a few dozen at a time.
    """

    KEEP = 512

    def __init__(self, store: RunStore):
        self.store = store
        self._kept: OrderedDict[int, Item] = OrderedDict()

    def __len__(self) -> int:
        return self.store.total

    def element(self, index: int) -> Item:
        item = self._kept.get(index)
        if item is None:
            item = self._kept[index] = self.store.item(index)
            if len(self._kept) > self.KEEP:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(index)
        return item
