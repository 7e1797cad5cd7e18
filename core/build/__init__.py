"""The format-agnostic index builder: interning, pairing, lanes, flows and tracks, into a
TraceIndex.
"""
