"""Look at runs in a browser: `agentotel view` (a local, read-only web app over a store) and
`agentotel report` (one run, or a diff of two, as a single self-contained HTML file).

Both draw the same page (assets/: plain HTML, CSS and JavaScript shipped in the package, nothing fetched
from a network); the view feeds it from a small JSON API, a report carries its data inline.
"""

from agentotel.view._page import report_html

__all__ = ["report_html"]
