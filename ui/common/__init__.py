"""What every page shares: controls, i18n, workshop tools, chart theme, page registry."""
