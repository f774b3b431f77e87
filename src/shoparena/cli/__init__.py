"""Typer CLI. Each module in this package defines ``register(app)`` and adds its noun group or command."""
