"""The Atari VLM workstation: everything headless (docs/house.md: one folder per layer)."""

from workstation.base import moved

moved.install()  # the import paths from before the layer folders still import (base/moved.py)
