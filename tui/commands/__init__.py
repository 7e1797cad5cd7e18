"""The headless commands, one module each declaring its arguments once (`SPEC`, see `spec`);
what they share is in `common`, the shell completion scripts in `completion`."""
