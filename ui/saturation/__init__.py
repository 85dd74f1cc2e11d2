"""UI of the saturation page: data.py (cached data), charts.py (Altair builders), sections.py."""
