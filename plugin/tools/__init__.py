"""The three tools: their model-facing specs (light) and their execution (lazy)."""
