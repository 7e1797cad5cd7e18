"""Text for the terminal, shared by the commands and the app: durations and counts in words,
untrusted text made safe to print, a width shared among columns.
"""
