"""The floor of the house: the error base, default locations, the one plain table."""
