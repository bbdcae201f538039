"""Data files: presets and the UI texts (one JSON file per language)."""

from pathlib import Path

RESOURCES = Path(__file__).resolve().parent
