"""The on-disk cache: index files, rank states, summary tables, discoveries and seek points, one
directory.
"""
