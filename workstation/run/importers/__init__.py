"""Importers: runs recorded by other harnesses, re-executed into our own recordings."""
