"""Modal screens and dialogs: help, the run chooser, the column chooser, the export dialog."""
