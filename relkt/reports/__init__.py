"""Rendering results for people: text/Markdown tables, the coverage report, figures. No analysis here."""
