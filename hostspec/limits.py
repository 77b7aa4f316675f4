"""pi's default output limits, in a module of their own so tool specs can quote them cheaply."""

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES"]
