"""A report to attach: a profile's answers as one self-contained HTML page or as Markdown."""
