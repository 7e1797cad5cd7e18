"""Exceptions a person can cause, each carrying one readable sentence."""


class ProftuiError(Exception):
    """An error whose message is meant to be shown to the user as it is."""


class NotATraceError(ProftuiError):
    """The input is readable but is not a trace proftui understands."""


class Cancelled(ProftuiError):
    """A load was cancelled by the caller."""


class ExportError(ProftuiError):
    """The export could not be written (a directory, no such folder, no permission, disk full)."""


class ExportExists(ExportError):
    """The target file exists and `overwrite` is False."""
