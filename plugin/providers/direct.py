"""direct provider (being written)."""
