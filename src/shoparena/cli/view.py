"""``shoparena view RUNDIR...``: serve a local page over run directories (corpus, eval run, arena race)."""

from __future__ import annotations

from pathlib import Path

import typer


def view(
    run_dirs: list[Path] = typer.Argument(..., exists=True, file_okay=False, help="Run directories."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port (0: any free port)."),
) -> None:
    """List trajectories with outcome, labels and scores; filter, search, open one, compare two runs."""
    from shoparena.runs.ports import PortInUseError, check_port_free
    from shoparena.viewer import ViewerError, ViewerServer

    check_port_free(host, port)  # in use: one line, exit 2
    try:
        server = ViewerServer(list(run_dirs), host=host, port=port)
    except ViewerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    except OSError as exc:  # taken between the check and the bind
        raise PortInUseError(f"--port {port} on {host}: {exc.strerror or exc}") from None
    rows = sum(len(r.items) for r in server.runs)
    typer.echo(f"serving {rows} trajectories of {len(server.runs)} run(s) on {server.url} (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()


def register(app: typer.Typer) -> None:
    app.command("view")(view)
