"""UI of the variance page: data.py (cached data), charts.py (Altair builders), sections.py."""
