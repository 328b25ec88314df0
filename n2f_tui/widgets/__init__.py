"""Widgets of the inspector: the virtual item list, the item detail, the run header."""
