"""The terminal front end of proftui: the command line and the Textual app."""
