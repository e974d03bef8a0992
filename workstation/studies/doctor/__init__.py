"""``workstation doctor``: the pre-flight of an OpenAI-compatible model server (see ``checks``)."""
