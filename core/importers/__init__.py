"""Importers: one module or package per input format, each pushing what it reads into the
format-agnostic builder (see :class:`~proftui.core.build.builder.TraceBuilder`)."""
