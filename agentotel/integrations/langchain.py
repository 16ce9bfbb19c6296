"""(in progress)"""


def patches() -> list:
    return []
