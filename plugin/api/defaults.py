"""Defaults the tools quote in their descriptions at start-up, in a module that costs nothing to
import (the provider API re-exports them)."""

#: How many characters of a page's text ``web_fetch`` returns when the call does not say.
DEFAULT_TEXT_MAX_CHARACTERS = 12000

#: The tool that serves each capability.
TOOL_FOR = {"search": "web_search", "fetch": "web_fetch", "summarize": "summarize"}
