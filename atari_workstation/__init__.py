"""The Inspect AI face of the workstation: ``inspect eval atari_workstation/atari`` (docs/inspect.md).

Its own top-level package because Inspect names a registered task after the package its function is
defined in; everything it does is in ``workstation.studies.inspect_task``.
"""
