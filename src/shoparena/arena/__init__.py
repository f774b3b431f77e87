"""The ORO-compatible arena runtime: sandbox runner, trusted proxy, run directories, races and weights.

Import-free on purpose (several modules need FastAPI or bubblewrap); import the submodules you need:
:mod:`shoparena.arena.sandbox`, :mod:`shoparena.arena.proxy`, :mod:`shoparena.arena.nonce`,
:mod:`shoparena.arena.agent_runner`, :mod:`shoparena.arena.run_directory`.
"""
