"""Export recordings as video (MP4, GIF) and as one self-contained web page.

``command`` is the CLI entry (``workstation export``); ``timeline`` gives per-frame
figures of a run; ``panel`` draws the text panel in palette space; ``layout`` puts
frames and panels on one canvas; ``video`` and ``html`` write the files.
"""
