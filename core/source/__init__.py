"""Bytes to read: trace files as streams (plain or gzip, with seek points) and SQLite files opened
read-only.
"""
