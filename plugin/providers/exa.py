"""exa provider (being written)."""
