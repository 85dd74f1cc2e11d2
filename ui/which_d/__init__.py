"""UI of the which_d page: data.py (cached data), charts.py (Altair builders), sections.py."""
