"""An MCP server in a process of its own (stdio), instrumented by agentotel into the store named by argv[1].

Started by tests/integrations/test_mcp.py: mcp 2.x records the server's own span of each request, and
that span reaches the store in another process's batch than the client's spans of the same call.
"""

from __future__ import annotations

import sys

import agentotel
from mcp.server.mcpserver import MCPServer

server = MCPServer("weather-server")


@server.tool()
def get_weather(city: str) -> str:
    """Current weather of a city."""
    return f"18C, cloudy in {city}"


CONTACTS = [{"name": "Alex Chen", "email": "alex.chen@example.com"}, {"name": "Alex Kim", "email": "alex.kim@example.com"}]


@server.tool()
def find_contacts(name: str) -> list[dict[str, str]]:
    """People in the address book whose name contains `name`."""
    return [c for c in CONTACTS if name.lower() in c["name"].lower()]


@server.tool()
def get_alerts(city: str) -> str:
    """Weather alerts of a city."""
    raise ValueError("alerts service down")


if __name__ == "__main__":
    agentotel.instrument(sys.argv[1])
    try:
        server.run("stdio")
    finally:
        agentotel.shutdown()
