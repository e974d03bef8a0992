"""Our runs as Inspect AI eval logs, written with our own code (inspect-ai is not needed to write them).

``sources`` turns the paths given to ``workstation export --inspect`` (recordings, batch directories,
session directories) into groups of runs, one group per setting and game; ``sample`` makes one Inspect
sample of one recording (a model event and an info event per turn, frames as attachments stored once);
``log`` puts a group's samples in one log and writes it as a ``.eval`` zip or a plain ``.json``.
docs/inspect.md has the mapping and what is lost either way.
"""
