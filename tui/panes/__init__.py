"""The panes under the timeline, one module each."""
