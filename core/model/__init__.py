"""The data model every layer shares: the trace index, tables, strings, errors, diagnostics, time
and naming.
"""
