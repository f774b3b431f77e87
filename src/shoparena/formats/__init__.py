"""Adapters between :class:`~shoparena.records.trajectory.Trajectory` and the upstream formats.

- :mod:`~shoparena.formats.tagged`: ShoppingBench tagged messages (prompts, parser, ids, stop rules).
- :mod:`~shoparena.formats.native`: OpenAI chat messages, Qwen3/Hermes text and the SN15 argument adapter.
- :mod:`~shoparena.formats.oro`: ORO ``output.jsonl`` envelopes and proxy-call bucketing.
- :mod:`~shoparena.formats.sb`: ShoppingBench rollout lines.
- :mod:`~shoparena.formats.io`: per-line format detection, quarantine, writers.
"""

from shoparena.formats._common import FormatError, ujson_dumps
from shoparena.formats.io import (
    read_chat_rows,
    read_trajectories,
    read_trajectory_file,
    write_oro_envelopes,
    write_sb_rollouts,
    write_trajectories,
)
from shoparena.formats.native import chat_to_trajectory, parse_hermes_completion, trajectory_to_chat
from shoparena.formats.oro import all_proxy_calls, attach_proxy_calls, from_oro_envelope, to_oro_envelope
from shoparena.formats.sb import from_sb_rollout, to_sb_rollout
from shoparena.formats.tagged import (
    ParsedStep,
    build_history_message,
    build_system_prompt,
    parse_completion,
    render_step_content,
    should_stop,
    tool_call_id,
)

__all__ = [
    "FormatError",
    "ParsedStep",
    "all_proxy_calls",
    "attach_proxy_calls",
    "build_history_message",
    "build_system_prompt",
    "chat_to_trajectory",
    "from_oro_envelope",
    "from_sb_rollout",
    "parse_completion",
    "parse_hermes_completion",
    "read_chat_rows",
    "read_trajectories",
    "read_trajectory_file",
    "render_step_content",
    "should_stop",
    "to_oro_envelope",
    "to_sb_rollout",
    "tool_call_id",
    "trajectory_to_chat",
    "ujson_dumps",
    "write_oro_envelopes",
    "write_sb_rollouts",
    "write_trajectories",
]
