"""`python -m minijax ...`: the command line; see `minijax/cli.py`."""
from .cli import main

raise SystemExit(main())
