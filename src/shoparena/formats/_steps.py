"""Step records <-> upstream step objects (``{prompt?, completion, extra_info}``), shared by ORO and SB.

Reading is lenient about agent-controlled content (steps are untrusted, arena spec §5.2): a value of the wrong
type is kept raw for writing back and explained in ``Step.parse_errors``; only a step that is not an object is
an error. Writing reproduces the source object's keys, order and raw values, so a read-then-write round trip
gives the same JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from shoparena.formats._common import (
    MISSING,
    FormatError,
    emit,
    is_number,
    known,
    message_dict,
    type_name,
    unknown_fields,
)
from shoparena.formats.tagged import build_prompt_messages, render_model_output
from shoparena.records.trajectory import Step, ToolCall, Trajectory

Mode = Literal["oro", "sb"]

_CALL_KEYS = ("name", "parameters", "tool_call_id", "result")
_MESSAGE_KEYS = ("think", "tool_call", "obs", "response")
_COMPLETION_KEYS = ("reasoning_content", "content", "message")
_STEP_KEYS = ("prompt", "completion", "extra_info")


def tool_call_from_dict(obj: dict[str, Any]) -> ToolCall:
    """A :class:`ToolCall` from an upstream ``{name, parameters, tool_call_id?, result?}`` object."""
    unknown = {k: v for k, v in obj.items() if k not in _CALL_KEYS}
    reasons: list[str] = []
    name = obj.get("name", "")
    if "name" not in obj:
        reasons.append("name is missing")
    elif not isinstance(name, str):
        unknown["name"] = name
        reasons.append(f"name is not a string ({type_name(name)})")
        name = ""
    parameters = obj.get("parameters", {})
    if "parameters" not in obj:
        reasons.append("parameters is missing")
    elif not isinstance(parameters, dict):
        unknown["parameters"] = parameters
        reasons.append(f"parameters is not a JSON object ({type_name(parameters)})")
        parameters = {}
    call_id = obj.get("tool_call_id", "")
    if not isinstance(call_id, str):
        unknown["tool_call_id"] = call_id
        call_id = ""
    return ToolCall(
        name=name,
        parameters=parameters,
        tool_call_id=call_id,
        result=obj.get("result"),
        has_result="result" in obj,
        invalid_reason="; ".join(reasons) or None,
        unknown_keys=unknown,
        key_order=list(obj),
    )


def _attach_obs(step: Step, obs: list[Any]) -> bool:
    """Give each ``{tool_call_id, results}`` entry to the first call with that id still lacking a result.

    Returns:
        True when rebuilding ``obs`` from the calls reproduces the list exactly.
    """
    for entry in obs:
        if not isinstance(entry, dict) or "tool_call_id" not in entry:
            continue
        for call in step.tool_calls:
            if call.tool_call_id == entry["tool_call_id"] and not call.has_result:
                call.result, call.has_result = entry.get("results"), True
                break
    rebuilt = [{"tool_call_id": c.tool_call_id, "results": c.result} for c in step.tool_calls if c.has_result]
    return rebuilt == obs and all(isinstance(e, dict) and list(e) == ["tool_call_id", "results"] for e in obs)


def _read_message(step: Step, message: dict[str, Any], path: str) -> None:
    raw = step.unknown_keys.setdefault("message", {})
    step.key_order["message"] = list(message)
    for key in ("think", "response"):
        if key in message:
            if isinstance(message[key], str):
                setattr(step, key, message[key])
            else:
                raw[key] = message[key]
                step.parse_errors.append(f"{path}.{key}: expected a string, got {type_name(message[key])}")
    if "tool_call" in message:
        calls = message["tool_call"]
        if not isinstance(calls, list):
            raw["tool_call"] = calls
            step.parse_errors.append(f"{path}.tool_call: expected a list, got {type_name(calls)}")
        else:
            for i, obj in enumerate(calls):
                if isinstance(obj, dict):
                    call = tool_call_from_dict(obj)
                    if call.invalid_reason:
                        step.parse_errors.append(f"{path}.tool_call[{i}]: {call.invalid_reason}")
                    step.tool_calls.append(call)
                else:
                    step.parse_errors.append(
                        f"{path}.tool_call[{i}]: expected an object, got {type_name(obj)}"
                    )
            if len(step.tool_calls) != len(calls):
                # Non-object elements cannot be modelled: write the list back as it was.
                raw["tool_call"] = calls
    if "obs" in message:
        obs = message["obs"]
        if not isinstance(obs, list) or not _attach_obs(step, obs):
            raw["obs"] = obs
    for key, value in message.items():
        if key not in _MESSAGE_KEYS:
            raw[key] = value


def _read_extra_info(step: Step, extra: dict[str, Any], path: str) -> None:
    step.key_order["extra_info"] = list(extra)
    for key, value in extra.items():
        if key == "step" and isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            step.index = value
        elif key == "timestamp" and is_number(value):
            step.timestamp = value
        elif key == "proxy_calls" and isinstance(value, list):
            step.proxy_calls = value
        else:
            if key in {"step", "timestamp", "proxy_calls"}:
                step.parse_errors.append(f"{path}.{key}: unexpected value {type_name(value)}")
            step.extra_info[key] = value


def step_from_dict(obj: Any, *, position: int, path: str) -> Step:
    """Read one upstream step object (ORO or SB flavour).

    Args:
        obj: The decoded step.
        position: 0-based position in the dialogue (the index when ``extra_info.step`` is unusable).
        path: Field path for messages, e.g. ``dialogue[3]``.

    Raises:
        FormatError: when ``obj`` is not an object.
    """
    if not isinstance(obj, dict):
        raise FormatError(path, f"expected a step object, got {type_name(obj)}")
    step = Step(index=position + 1, key_order={"step": list(obj)})
    raw_step = step.unknown_keys.setdefault("step", {})
    if "prompt" in obj:
        prompt = obj["prompt"]
        if isinstance(prompt, list) and all(isinstance(m, dict) for m in prompt):
            step.prompt = prompt
        else:
            raw_step["prompt"] = prompt
    if "completion" in obj:
        completion = obj["completion"]
        if isinstance(completion, dict):
            raw = step.unknown_keys.setdefault("completion", {})
            step.key_order["completion"] = list(completion)
            for key in ("reasoning_content", "content"):
                if key in completion:
                    if isinstance(completion[key], str):
                        setattr(step, key, completion[key])
                    else:
                        raw[key] = completion[key]
            if "message" in completion:
                if isinstance(completion["message"], dict):
                    _read_message(step, completion["message"], f"{path}.completion.message")
                else:
                    raw["message"] = message = completion["message"]
                    detail = f"expected an object, got {type_name(message)}"
                    step.parse_errors.append(f"{path}.completion.message: {detail}")
            for key, value in completion.items():
                if key not in _COMPLETION_KEYS:
                    raw[key] = value
        else:
            raw_step["completion"] = completion
            step.parse_errors.append(f"{path}.completion: expected an object, got {type_name(completion)}")
    if "extra_info" in obj:
        extra = obj["extra_info"]
        if isinstance(extra, dict):
            _read_extra_info(step, extra, f"{path}.extra_info")
        else:
            raw_step["extra_info"] = extra
            step.parse_errors.append(f"{path}.extra_info: expected an object, got {type_name(extra)}")
    for key, value in obj.items():
        if key not in _STEP_KEYS:
            raw_step[key] = value
    step.unknown_keys = {k: v for k, v in step.unknown_keys.items() if v}
    return step


def _extra_info_fields(
    step: Step, traj: Trajectory, *, mode: Mode, position: int
) -> list[tuple[str, Any, bool, bool]]:
    """``extra_info`` fields in ORO order: step, query, timestamp, problem_id, execution_time, … proxy_calls.

    Values kept raw in ``step.extra_info`` win; the trajectory-level fill-ins (query, problem_id,
    execution_time) are written only for steps built in memory, as ORO's executor fills them.
    """
    base = dict(step.extra_info)

    def field(key: str, value: Any, *, canonical: bool, force: bool = False) -> tuple[str, Any, bool, bool]:
        if key in base:
            return (key, base.pop(key), True, True)
        return (key, value, canonical, force)

    has_ts = step.timestamp is not None
    fields = [
        field("step", step.index, canonical=True),
        field("query", traj.query, canonical=True),
        field("timestamp", step.timestamp if has_ts else MISSING, canonical=True, force=has_ts),
    ]
    if mode == "oro":
        fields.append(field("problem_id", traj.problem_id, canonical=traj.problem_id is not None))
        first_time = traj.execution_time if position == 0 and traj.execution_time is not None else MISSING
        fields.append(field("execution_time", first_time, canonical=True))
    keep_proxy = bool(step.proxy_calls) or "proxy_calls" in step.key_order.get("extra_info", [])
    proxy = field(
        "proxy_calls", step.proxy_calls if keep_proxy else MISSING, canonical=True, force=keep_proxy
    )
    return [*fields, *unknown_fields(base), proxy]


def step_to_dict(
    step: Step,
    traj: Trajectory,
    *,
    mode: Mode,
    position: int,
    system_prompt: str = "",
) -> dict[str, Any]:
    """Write one step in ORO (results inline) or ShoppingBench (``obs`` list, ``prompt``) flavour.

    Args:
        step: The step.
        traj: Its trajectory (supplies ``query``, ``problem_id`` and ``execution_time`` for steps built in
            memory; steps read from a file keep exactly their own ``extra_info``).
        mode: ``"oro"`` or ``"sb"``.
        position: 0-based position in the dialogue.
        system_prompt: System text for an SB ``prompt`` built for steps that have none.
    """
    raw_step = step.unknown_keys.get("step", {})
    raw_completion = step.unknown_keys.get("completion", {})
    message = message_dict(step, with_results=mode == "oro", with_obs=mode == "sb")
    content = step.content if step.content_format == "tagged" else render_model_output(step)
    completion = emit(
        step.key_order.get("completion"),
        [
            known(raw_completion, "reasoning_content", step.reasoning_content, canonical=True, force=False),
            known(raw_completion, "content", content, canonical=True, force=False),
            known(raw_completion, "message", message, canonical=True, force=bool(message)),
            *unknown_fields({k: v for k, v in raw_completion.items() if k not in _COMPLETION_KEYS}),
        ],
    )
    extra_info = emit(
        step.key_order.get("extra_info"), _extra_info_fields(step, traj, mode=mode, position=position)
    )
    if mode == "sb":
        prompt: Any = step.prompt
        if prompt is None:
            prompt = build_prompt_messages(system_prompt, traj.query, traj.steps[:position])
        prompt_field = known(raw_step, "prompt", prompt, canonical=True, force=True)
    elif traj.source_format != "sb_rollout" and step.prompt is not None:
        prompt_field = known(raw_step, "prompt", step.prompt, canonical=True, force=True)
    else:
        prompt_field = ("prompt", MISSING, False, False)
    fields = [
        prompt_field,
        known(raw_step, "completion", completion, canonical=True, force=False),
        known(raw_step, "extra_info", extra_info, canonical=True, force=False),
    ]
    fields += unknown_fields({k: v for k, v in raw_step.items() if k not in _STEP_KEYS})
    return emit(step.key_order.get("step"), fields)


__all__ = ["step_from_dict", "step_to_dict", "tool_call_from_dict"]
