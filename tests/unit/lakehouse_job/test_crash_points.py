"""lakehouse_job.crash_points: each armed point fires once, recorded before the kill."""

from pathlib import Path

import pytest

from lakehouse_job.crash_points import CrashPoints, fired_file, fired_points

pytestmark = pytest.mark.unit


class Killed(Exception):
    pass


def _kill() -> None:
    raise Killed


def test_an_armed_point_fires_once_and_is_recorded_first(tmp_path: Path) -> None:
    crash = CrashPoints(["before:hudi_orders_cow", "before-commit"], tmp_path, _kill)
    crash.reached("after:hudi_orders_cow")  # not armed
    with pytest.raises(Killed):
        crash.reached("before:hudi_orders_cow")
    assert fired_points(tmp_path) == {"before:hudi_orders_cow"}
    # The restarted job (a new instance on the same folder) runs past it to the next one.
    again = CrashPoints(["before:hudi_orders_cow", "before-commit"], tmp_path, _kill)
    again.reached("before:hudi_orders_cow")
    with pytest.raises(Killed):
        again.reached("before-commit")
    assert fired_points(tmp_path) == {"before:hudi_orders_cow", "before-commit"}


def test_from_env_parses_the_list_and_is_inert_unset(tmp_path: Path) -> None:
    env = {"LAKEHOUSE_CRASH_POINTS": " before-commit, during:HiveSyncTool.syncHoodieTable ,"}
    env["LAKEHOUSE_CRASH_STATE"] = str(tmp_path)
    crash = CrashPoints.from_env(env)
    assert crash.points == ("before-commit", "during:HiveSyncTool.syncHoodieTable")
    CrashPoints.from_env({}).reached("before-commit")  # nothing armed: returns


def test_points_without_a_state_folder_are_refused() -> None:
    with pytest.raises(ValueError, match="LAKEHOUSE_CRASH_STATE"):
        CrashPoints.from_env({"LAKEHOUSE_CRASH_POINTS": "before-commit"})


def test_fired_files_have_safe_names_and_hold_the_point(tmp_path: Path) -> None:
    path = fired_file(tmp_path, "during:HiveSyncTool.syncHoodieTable")
    assert path.parent == tmp_path and ":" not in path.name
    path.write_text("during:HiveSyncTool.syncHoodieTable")  # as CrashWatch writes it
    assert fired_points(tmp_path) == {"during:HiveSyncTool.syncHoodieTable"}
