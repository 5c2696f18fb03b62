#!/usr/bin/python3
"""Grade ClawGym-Task workspaces the way ClawGym-RL does, for bench:clawgym-bench.

A port of RL/clawgym_rl_rollout.py (ClawGym/ClawGym-Agents, commit 0e8526d8) for its chroot
backend: _prepare_workspace, _copy_reward_assets_to_container, _write_reward_payload, _run_reward
and _parse_reward_stdout, with bubblewrap standing in for `unshare --user --map-root-user chroot
<rootfs>`: the host's /usr and /etc read-only, the workspace bound at /root/.openclaw/workspace,
a writable /root, the working folder / (GNU chroot changes to it), the same environment. Debian's
python3 and the standard library only.

Reads one job per line on stdin (JSON: task_dir, work_dir, writes: [[path, text]], run: a shell
command run in the workspace before grading or null, final_message) and prints one result per line
(JSON: score as the reference reads it, returncode, timed_out, parse (ok / no-stdout /
not-a-number / failed), stderr tail, grade_ms).
"""
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath

WORKING = "/root/.openclaw/workspace"
REWARD_TIMEOUT_SECONDS = 120
BWRAP = shutil.which("bwrap") or "/usr/bin/bwrap"


def container_path_to_host_path(workspace_dir, container_path):
    container_pure = PurePosixPath(container_path)
    working_pure = PurePosixPath(WORKING)
    if not str(container_pure).startswith(str(working_pure)):
        raise ValueError(f"path {container_path} is outside {WORKING}")
    if container_pure == working_pure:
        return workspace_dir
    return workspace_dir / Path(str(container_pure.relative_to(working_pure)))


def copy_tree_contents(source_dir, target_dir):
    target_dir.mkdir(parents=True, exist_ok=True)
    for child in source_dir.iterdir():
        destination = target_dir / child.name
        if child.is_dir():
            shutil.copytree(child, destination, dirs_exist_ok=True)
        else:
            shutil.copy2(child, destination)


def prepare_workspace(task_dir, entry, workspace_dir):
    workspace_dir.mkdir(parents=True, exist_ok=True)
    if "input_mount_dir" in entry:
        input_dir = container_path_to_host_path(workspace_dir, entry["input_mount_dir"])
        input_dir.mkdir(parents=True, exist_ok=True)
        copy_tree_contents(task_dir / "input_files", input_dir)


def sandbox(workspace_dir, command, cwd="/"):
    """bubblewrap in place of the chroot: the system read-only, the workspace at WORKING."""
    args = [BWRAP, "--ro-bind", "/usr", "/usr"]
    for p in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(p):
            args += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            args += ["--ro-bind", p, p]
    args += ["--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
             "--dir", "/root", "--bind", str(workspace_dir), WORKING,
             "--unshare-all", "--die-with-parent", "--new-session", "--chdir", cwd, "--clearenv"]
    return args + ["--", "/bin/bash", "-c", command]


def parse_reward_stdout(stdout):
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines:
        return 0.0, "no-stdout"
    try:
        return float(lines[-1]), "ok"
    except ValueError:
        return 0.0, "not-a-number"


def grade(job):
    task_dir = Path(job["task_dir"])
    entry = json.loads((task_dir / "data_entry.json").read_text(encoding="utf-8"))
    workspace_dir = Path(job["work_dir"])
    shutil.rmtree(workspace_dir, ignore_errors=True)
    prepare_workspace(task_dir, entry, workspace_dir)
    for rel, text in job.get("writes") or []:
        path = workspace_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if job.get("run"):
        subprocess.run(sandbox(workspace_dir, "export PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LC_ALL=C.UTF-8; " + job["run"], WORKING),
                       capture_output=True, text=True, timeout=REWARD_TIMEOUT_SECONDS, check=True)
    started = time.monotonic()
    # _copy_reward_assets_to_container (chroot backend) and _write_reward_payload
    reward_dst = workspace_dir / "reward"
    if reward_dst.exists():
        shutil.rmtree(reward_dst)
    shutil.copytree(task_dir / "reward", reward_dst)
    payload = {"final_message": job.get("final_message", ""), "metadata": entry["metadata"], "transcript": []}
    with (workspace_dir / ".openclaw_reward_payload.json").open("w", encoding="utf-8") as fh:
        json.dump(payload, fh)
    payload_path = str(PurePosixPath(WORKING) / ".openclaw_reward_payload.json")
    # _run_reward (chroot backend)
    command = (f"export OPENCLAW_REWARD_PAYLOAD={payload_path} "
               "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
               "HOME=/root LC_ALL=C.UTF-8; "
               f"bash {WORKING}/reward/reward.sh")
    try:
        result = subprocess.run(sandbox(workspace_dir, command), capture_output=True, text=True, timeout=REWARD_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return {"score": 0.0, "returncode": None, "timed_out": True, "parse": "failed", "stderr": "", "grade_ms": (time.monotonic() - started) * 1000}
    grade_ms = (time.monotonic() - started) * 1000
    if result.returncode != 0:
        score, parse = 0.0, "failed"
    else:
        score, parse = parse_reward_stdout(result.stdout)
    return {"score": score, "returncode": result.returncode, "timed_out": False, "parse": parse,
            "stderr": result.stderr[-800:], "grade_ms": grade_ms}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            out = grade(job)
        except Exception as exc:  # the job could not be set up: say so, never a score
            out = {"error": f"{type(exc).__name__}: {exc}"}
        out["id"] = job.get("id")
        # A score of nan or inf travels as its repr: JSON has no such numbers.
        if isinstance(out.get("score"), float) and not math.isfinite(out["score"]):
            out["score"] = repr(out["score"])
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
