"""CPU time and resident memory of process groups, from /proc (Linux).

CPU-seconds per unit of work are steadier than wall time on a shared 2-core machine:
another process slows a job down but does not add to its CPU time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Sample:
    cpu_s: float
    rss_mib: float


def _processes() -> list[tuple[int, int, str, list[str]]]:
    """(pid, process group, cmdline, stat fields after the command name) of every process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(entry / "stat")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # the process ended while we looked
            continue
        found.append((int(entry.name), int(fields[2]), cmdline, fields))
    return found


def _stat_fields(path: Path) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces)."""
    stat = path.read_text()
    return stat[stat.rindex(")") + 2 :].split()


def _sample(fields: list[str]) -> Sample:
    # utime and stime are fields 14-15 of stat (children are counted as processes of
    # their own while they live); rss (pages) is field 24.
    cpu = sum(int(f) for f in fields[11:13]) / _TICK
    return Sample(cpu, int(fields[21]) * _PAGE / 2**20)


def group(pgid: int) -> Sample:
    """CPU seconds and resident MiB summed over one process group (e.g. the job's)."""
    samples = [_sample(f) for _, g, _, f in _processes() if g == pgid]
    return Sample(sum(s.cpu_s for s in samples), sum(s.rss_mib for s in samples))


def groups(pgids: Iterable[int]) -> dict[int, Sample]:
    """Each of these process groups' sums, from one pass over /proc; a group with no
    process left is absent."""
    wanted = set(pgids)
    totals: dict[int, list[float]] = {}
    for _, pgid, _, fields in _processes():
        if pgid in wanted:
            s = _sample(fields)
            total = totals.setdefault(pgid, [0.0, 0.0])
            total[0] += s.cpu_s
            total[1] += s.rss_mib
    return {pgid: Sample(cpu, rss) for pgid, (cpu, rss) in totals.items()}


def by_command(patterns: dict[str, str]) -> dict[str, Sample]:
    """Per named component, summed over processes whose command line contains its pattern."""
    totals = {name: [0.0, 0.0] for name in patterns}
    for _, _, cmdline, fields in _processes():
        for name, pattern in patterns.items():
            if pattern in cmdline:
                s = _sample(fields)
                totals[name][0] += s.cpu_s
                totals[name][1] += s.rss_mib
                break
    return {name: Sample(cpu, rss) for name, (cpu, rss) in totals.items()}


def process(pid: int) -> Sample:
    """One process (zero if it has ended)."""
    try:
        return _sample(_stat_fields(Path(f"/proc/{pid}/stat")))
    except OSError:
        return Sample(0.0, 0.0)


def children(ppid: int) -> list[int]:
    """The pids whose parent is `ppid`."""
    return [pid for pid, _, _, fields in _processes() if int(fields[1]) == ppid]


def self_sample() -> Sample:
    return _sample(_stat_fields(Path("/proc/self/stat")))


# A JVM's JIT compiler threads, as /proc names them (15 characters at most).
JIT_THREADS = ("C1 CompilerThre", "C2 CompilerThre")


def threads(pgid: int) -> dict[int, tuple[str, float]]:
    """Each thread of the processes in one group: thread id -> (name, CPU-seconds so far).
    A thread that has ended is absent: callers keep the last figure they saw."""
    found: dict[int, tuple[str, float]] = {}
    for pid, group_id, _, _ in _processes():
        if group_id != pgid:
            continue
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                stat = (task / "stat").read_text()
            except OSError:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            found[int(task.name)] = (name, _sample(stat[stat.rindex(")") + 2 :].split()).cpu_s)
    return found


def thread_kind(name: str) -> str:
    """A thread's name without its number ("GC Thread#1" and "GC Thread#0" are one kind;
    "Executor task launch worker for task 12" is cut to 15 characters by /proc)."""
    return name.rstrip("0123456789#-_ ").strip() or name


def cpu_by_thread_kind(threads: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU-seconds per kind of thread, largest first: where a JVM's CPU went (its tasks,
    the JIT compiler, the collector, the S3 uploads...)."""
    kinds: dict[str, float] = {}
    for name, cpu in threads.values():
        kind = thread_kind(name)
        kinds[kind] = kinds.get(kind, 0.0) + cpu
    return dict(sorted(((k, round(v, 1)) for k, v in kinds.items()), key=lambda kv: -kv[1]))
