"""One module per view; each is listed in gui.registry."""
