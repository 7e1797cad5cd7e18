"""Operators: what each track and slice is for, how they group, iterations, and statistics of a
window.
"""
