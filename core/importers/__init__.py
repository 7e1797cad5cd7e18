"""Importers: one module per input format, each turning bytes into events for the builder."""
