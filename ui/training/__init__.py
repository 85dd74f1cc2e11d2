"""UI of the training page: data.py (cached runs and sweep), charts.py (Altair builders), sections.py (one run), sweep.py (LR sweep and the myth card)."""
