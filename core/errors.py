"""Exceptions a person can cause, each carrying one readable sentence."""


class ProftuiError(Exception):
    """An error whose message is meant to be shown to the user as it is."""


class NotATraceError(ProftuiError):
    """The input is readable but is not a trace proftui understands."""


class Cancelled(ProftuiError):
    """A load was cancelled by the caller."""
