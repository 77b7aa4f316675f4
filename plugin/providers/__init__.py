"""The built-in provider types (kagi, exa, brave, tavily, ddgs, direct), each written against
the provider API (:mod:`pi_web_tools.api`) exactly as a third-party plugin would be."""
