"""Errors the command line turns into one clear line and an exit status."""

from __future__ import annotations


class N2FError(Exception):
    """An error meant for the user: its message is printed as is, without a traceback."""

    exit_code = 1


class InputError(N2FError):
    """Bad usage or bad input: unknown run, unreadable file, unreachable endpoint, bad spec."""

    exit_code = 2


class RuntimeFailure(N2FError):
    """The work could not be completed (e.g. items left in status error)."""

    exit_code = 1
