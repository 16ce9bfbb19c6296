"""`python -m agentotel`: the same as the `agentotel` command."""

from agentotel.cli import main

raise SystemExit(main())
