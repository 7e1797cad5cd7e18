"""`python -m proftui` runs the command line."""

from proftui.tui.cli import main

raise SystemExit(main())
