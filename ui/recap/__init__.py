"""The recap, "What to remember": the story's answers, one sentence and one small chart per
page (drawn from :mod:`ui.story`), and a self-check asked from the story's cards."""
