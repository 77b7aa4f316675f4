"""pi_web_tools: web_search, web_fetch and summarize for pi-style hosts."""

__version__ = "0.1.0"
__all__ = ["__version__"]
