"""The distribution version, in a module of its own so low-level modules can quote it."""

__version__ = "0.1.0"
