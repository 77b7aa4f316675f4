"""Built-in providers (kagi, exa, direct) and the provider interface in :mod:`.base`."""
