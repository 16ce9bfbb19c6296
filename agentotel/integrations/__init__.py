"""Agent frameworks' tool execution turned into the same execute_tool spans as @agentotel.tool."""
