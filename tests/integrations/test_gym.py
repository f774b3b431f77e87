"""The Gymnasium door: the env checker passes, seeding picks problems, the planner's verdict comes through."""

from __future__ import annotations

import warnings

import gymnasium
import pytest
from door_helpers import play_gym
from gymnasium.utils.env_checker import check_env

from shoparena.integrations.gym import ENV_ID, ShopGymEnv


def test_env_checker_passes(door_bank, synth) -> None:
    env = gymnasium.make(ENV_ID, suite=str(door_bank), index=str(synth.index.index_dir), max_steps=4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    env.close()
    assert [str(w.message) for w in caught if "WARN" in str(w.message)] == []


def test_seed_picks_the_same_problem_and_options_name_one(tasks) -> None:
    env = ShopGymEnv(tasks)
    first = [env.reset(seed=s)[1]["problem_id"] for s in range(6)]
    again = [env.reset(seed=s)[1]["problem_id"] for s in range(6)]
    assert first == again and len(set(first)) > 1
    target = tasks.problems[-1].problem_id
    obs, info = env.reset(seed=0, options={"problem_id": target})
    assert info["problem_id"] == target and tasks.problems[-1].query in obs
    with pytest.raises(ValueError, match="no problem 'nope'"):
        env.reset(options={"problem_id": "nope"})


def test_garbage_action_ends_the_episode_with_zero_reward(tasks) -> None:
    env = ShopGymEnv(tasks)
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step("no tags at all")
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["termination_reason"] == "empty_step" and info["verdict"]["success"] is False
    with pytest.raises(RuntimeError, match="reset"):
        env.step("again")


def test_planner_through_gym_solves_some_problems(tasks) -> None:
    env = ShopGymEnv(tasks)
    verdicts = [play_gym(env, p.problem_id) for p in tasks.problems]
    assert any(v["success"] for v in verdicts)


def test_env_options_reach_shopenv_unchanged(tasks) -> None:
    """The doors take ShopEnv's own options (here the render profile): they pass through unchanged."""
    env = ShopGymEnv(tasks, render_profile="compact", max_steps=3)
    assert (env._env.render_profile, env._env.max_steps) == ("compact", 3)
    with pytest.raises(ValueError, match="profile"):
        ShopGymEnv(tasks, render_profile="no-such-profile")
