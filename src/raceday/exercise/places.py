"""Where exercises live on disk: the bundled folder and the current directory's own.

Its own module because both finding exercises (`catalog.py`) and reading one
(`read_debrief.py`, a debrief's shared file may be a bundled one) name the bundled folder,
and the catalog loads through the loader: neither reader imports the catalog back.
"""

from __future__ import annotations

from pathlib import Path

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "bundled"
"""Bundled exercises: a symlink to the repository's `exercises/` (copied into wheels)."""

LOCAL_DIR = Path("exercises")
"""The current directory's own exercises, relative so messages stay short."""
