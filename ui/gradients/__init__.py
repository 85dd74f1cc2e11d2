"""UI of the gradients page: data.py (cached data), charts.py (Altair builders), sections.py."""
