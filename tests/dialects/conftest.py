import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="module")
def traces(store: Path):
    """The store a test module made (its `store` fixture), opened."""
    import agentotel

    return agentotel.open(store)
