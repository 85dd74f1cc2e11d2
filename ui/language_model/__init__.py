"""UI of the language-model page: data.py (the shipped sweep and weights, the prompt),
frames.py and charts.py (chart data and Altair builders), diagram.py (the model's picture),
sections.py (the experiment, loss against rate, over training), prompt.py (your own prompt),
meaning.py (what it means)."""
