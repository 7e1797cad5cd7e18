"""Colour themes and the app stylesheet."""
