"""hami-summary core: pure parsing, summary and rendering (no I/O)."""
