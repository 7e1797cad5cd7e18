"""proftui: a terminal trace explorer for AI-training performance profiles."""

__version__ = "0.1.0"
