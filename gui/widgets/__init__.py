"""Reusable widgets: themed plots, bar charts, parameter sliders, the score table."""
