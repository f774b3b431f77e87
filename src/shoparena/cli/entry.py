"""The ``shoparena`` console script's entry point, light on purpose.

A process started with ``spawn`` runs its parent's main script again before its task (the corpus build's
ingest processes, the catalogue synthesis's workers): with the CLI imported at the script's top, every such
process paid for importing all of it (Typer, Rich and each command's modules). The script imports only this
module; :func:`main` imports the CLI when the command runs, in the parent alone.
"""

from __future__ import annotations


def main() -> None:
    """Run the ``shoparena`` command line (:func:`shoparena.cli.main.main`)."""
    from shoparena.cli.main import main as run

    run()
