"""The ``hami-summary`` command line: one module per subcommand, gathered in ``main``."""
