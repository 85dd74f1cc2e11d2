"""UI of the sqrt_vs_d page: data.py (cached data), charts.py (Altair builders), sections.py."""
