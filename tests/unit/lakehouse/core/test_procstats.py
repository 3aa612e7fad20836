"""lakehouse.core.procstats: CPU and memory from /proc."""

import os
import threading
from pathlib import Path

import pytest

from lakehouse.core import procstats

pytestmark = pytest.mark.unit


def test_process_group_cpu_includes_this_process() -> None:
    spent = procstats.self_sample().cpu_s
    sum(range(2_000_000))
    assert procstats.self_sample().cpu_s >= spent
    assert procstats.group(os.getpgrp()).rss_mib > 0


def test_a_process_and_its_children_are_found() -> None:
    assert procstats.process(os.getpid()).rss_mib > 0
    assert procstats.process(2**22 + 7).cpu_s == 0.0  # no such process
    assert os.getpid() in procstats.children(os.getppid())


def test_threads_of_a_group_are_named_with_their_cpu() -> None:
    found = procstats.threads(os.getpgrp())
    name, cpu = found[threading.get_native_id()]
    assert name == Path("/proc/self/comm").read_text().strip()
    assert cpu >= 0.0


def test_cpu_is_summed_by_kind_of_thread_largest_first() -> None:
    threads = {
        1: ("GC Thread#0", 2.0),
        2: ("GC Thread#1", 1.5),
        3: ("Executor task l", 9.0),
        4: ("C2 CompilerThre", 4.0),
        5: ("Thread-12", 0.25),
        6: ("Thread-3", 0.25),
        7: ("42", 0.1),
    }
    assert procstats.cpu_by_thread_kind(threads) == {
        "Executor task l": 9.0,
        "C2 CompilerThre": 4.0,
        "GC Thread": 3.5,
        "Thread": 0.5,
        "42": 0.1,
    }
