#!/usr/bin/env python3
"""The CI examples in ci/ run as written, on the selftest suite.

ci/github-actions.yml and ci/gitlab-ci.yml are parsed as YAML; their shell
steps run six "nights" against one database (five seed the rolling baseline,
the sixth gates it), and the exit code of the gate night must map to a passing
job state as each file maps it. ci/github-actions-pr.yml gates a stand-in
pull request against its base, interleaved: the same build passes, a 30%
slower one fails the job. ci/slurm-ddp.sbatch runs with a stand-in for
`srun` that starts two ranks on this machine from SLURM's variables.

    ci_examples_test.py PERFBENCH_BINARY SOURCE_DIR
"""
import json
import os
import socket
import subprocess
import sys
import tempfile

import yaml  # python3-yaml (setup.sh installs it)

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
# The selftest suite stands in for the GPU suites: deterministic and fast.
RUN_ARGS = "--suite selftest --quick --filter noisy --param between=0.01 --param within=0.01"
NIGHTS = 6


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def checkout(tmp):
    """A stand-in checkout: build/perfbench is the binary under test and
    scripts/setup.sh does nothing (the build is done)."""
    os.makedirs(os.path.join(tmp, "scripts"))
    os.symlink(os.path.dirname(BIN), os.path.join(tmp, "build"))
    with open(os.path.join(tmp, "scripts", "setup.sh"), "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(os.path.join(tmp, "scripts", "setup.sh"), 0o755)


def bash(script, cwd, env):
    return subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def base_env(tmp):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFBENCH_", "SLURM_", "RANK", "WORLD_SIZE"))}
    env["PERFBENCH_DB"] = os.path.join(tmp, "var", "perfbench.db")
    env["PERFBENCH_RUN_ARGS"] = RUN_ARGS
    return env


def runs(env, label):
    out = subprocess.run([BIN, "runs", "--label", label, "--limit", "0", "--format", "json"], env=env,
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)["runs"]


def github():
    wf = yaml.safe_load(open(os.path.join(SRC, "ci", "github-actions.yml")))
    steps = wf["jobs"]["gate"]["steps"]
    assert wf["jobs"]["gate"]["runs-on"] == ["self-hosted", "gpu"], "not a self-hosted GPU runner"
    with tempfile.TemporaryDirectory() as tmp:
        checkout(tmp)
        env = base_env(tmp)
        for k, v in wf["env"].items():
            if k not in env:
                env[k] = str(v)
        summary = os.path.join(tmp, "summary.md")
        env["GITHUB_STEP_SUMMARY"] = summary
        for night in range(1, NIGHTS + 1):
            for step in steps:
                if "run" not in step:
                    continue
                if "inputs.accept_run" in step.get("if", ""):
                    continue  # a scheduled night accepts nothing
                r = bash(step["run"], tmp, env)
                if r.returncode != 0:
                    fail(f"github night {night}, step '{step['name']}' exited {r.returncode}:\n{r.stdout}")
                if night == NIGHTS and step["name"] == "Measure and gate" and "gate" not in r.stdout.lower():
                    fail("github: the sixth night did not gate:\n" + r.stdout)
        if len(runs(env, "nightly")) != NIGHTS:
            fail(f"github: expected {NIGHTS} nightly runs, found {len(runs(env, 'nightly'))}")
        for f in ("out/perfbench-junit.xml", "out/perfbench-gate.json", "out/perfbench-report.html", "out/perfbench.db"):
            if not os.path.getsize(os.path.join(tmp, f)):
                fail("github: empty " + f)
        if "catches" not in open(summary).read():
            fail("github: the step summary does not state what the gate catches")
        # workflow_dispatch with accept_run: the accept step as written.
        accept = next(s for s in steps if "inputs.accept_run" in s.get("if", ""))
        last = str(runs(env, "nightly")[0]["id"])
        r = bash(accept["run"].replace("${{ inputs.accept_run }}", last), tmp, env)
        if r.returncode != 0:
            fail("github: accept step: " + r.stdout)
    print("github-actions.yml: ok")


def gitlab():
    ci = yaml.safe_load(open(os.path.join(SRC, "ci", "gitlab-ci.yml")))
    job = ci["perfbench-nightly"]
    allowed = set(job["allow_failure"]["exit_codes"])
    assert job["tags"] == ["gpu"], "not the GPU runner"
    with tempfile.TemporaryDirectory() as tmp:
        checkout(tmp)
        env = base_env(tmp)
        for k, v in ci["variables"].items():
            if k not in env:
                env[k] = str(v)
        for night in range(1, NIGHTS + 1):
            for line in job["script"]:  # GitLab stops at the first line that fails
                r = bash(line, tmp, env)
                if r.returncode != 0 and not (night == NIGHTS and r.returncode in allowed):
                    fail(f"gitlab night {night}: '{line[:60]}' exited {r.returncode}:\n{r.stdout}")
        if len(runs(env, "nightly")) != NIGHTS:
            fail("gitlab: expected %d nightly runs" % NIGHTS)
        for f in ("out/perfbench-junit.xml", "out/perfbench-gate.md", "out/perfbench.db"):
            if not os.path.getsize(os.path.join(tmp, f)):
                fail("gitlab: empty " + f)
        if job["artifacts"]["reports"]["junit"] != "out/perfbench-junit.xml":
            fail("gitlab: the JUnit report is not published")
    print("gitlab-ci.yml: ok")


SLOW_BUILD = """#!/bin/sh
# A pull request's build that is 30% slower: the binary under test with a
# planted slowdown.
PERFBENCH_SELFTEST_SLOWDOWN=0.3 exec {bin} "$@"
"""


def github_pr():
    """The pull-request workflow: its base and its PR checked out side by
    side and gated interleaved; the same build passes, a slower one fails
    the job."""
    wf = yaml.safe_load(open(os.path.join(SRC, "ci", "github-actions-pr.yml")))
    assert "pull_request" in wf[True if True in wf else "on"], "not a pull-request workflow"
    steps = wf["jobs"]["gate"]["steps"]
    for case, want_ok in (("same", True), ("slower", False)):
        with tempfile.TemporaryDirectory() as tmp:
            for side in ("main", "pr"):
                checkout(os.path.join(tmp, side))
            if case == "slower":
                os.unlink(os.path.join(tmp, "pr", "build"))
                os.makedirs(os.path.join(tmp, "pr", "build"))
                wrapper = os.path.join(tmp, "pr", "build", "perfbench")
                with open(wrapper, "w") as f:
                    f.write(SLOW_BUILD.format(bin=BIN))
                os.chmod(wrapper, 0o755)
            env = base_env(tmp)
            for k, v in wf["env"].items():
                if k not in env:
                    env[k] = str(v)
            env["PERFBENCH_DB"] = os.path.join(tmp, "out", "perfbench-pr.db")
            env["GITHUB_STEP_SUMMARY"] = os.path.join(tmp, "summary.md")
            code = 0
            for step in steps:
                if "run" not in step:
                    continue
                r = bash(step["run"], tmp, env)
                code = r.returncode
                if code != 0:
                    break
            if want_ok and code != 0:
                fail(f"github-actions-pr ({case}): exited {code}:\n{r.stdout}")
            if not want_ok and code != 1:
                fail(f"github-actions-pr ({case}): expected the job to fail with 1, got {code}:\n{r.stdout}")
            verdict = json.load(open(os.path.join(tmp, "out", "perfbench-gate.json")))
            if verdict["kind"] != "interleaved":
                fail("github-actions-pr: the verdict's kind is " + verdict["kind"])
            if "interleaved" not in open(env["GITHUB_STEP_SUMMARY"]).read():
                fail("github-actions-pr: the step summary does not name the verdict's kind")
    print("github-actions-pr.yml: ok")


SRUN = """#!/usr/bin/env bash
# A two-rank stand-in for srun on one machine: drops srun's options, starts
# the command twice with SLURM's variables, fails if any rank fails.
while [ "${1:-}" != "${1#-}" ]; do shift; done
pids=()
for rank in 0 1; do
  SLURM_PROCID=$rank SLURM_NTASKS=2 SLURM_LOCALID=$rank SLURM_NTASKS_PER_NODE=2 SLURM_NODEID=0 \\
  SLURM_NNODES=1 SLURM_JOB_NODELIST=localhost SLURM_STEP_NODELIST=localhost "$@" &
  pids+=($!)
done
code=0
for p in "${pids[@]}"; do wait "$p" || code=$?; done
exit $code
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurm():
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "bin"))
        with open(os.path.join(tmp, "bin", "srun"), "w") as f:
            f.write(SRUN)
        os.chmod(os.path.join(tmp, "bin", "srun"), 0o755)
        env = base_env(tmp)
        env.update(PATH=os.path.join(tmp, "bin") + ":" + env["PATH"], PERFBENCH=BIN, SLURM_JOB_ID="77",
                   PERFBENCH_RUN_ARGS="--suite ddp --quick --filter allreduce/.*gloo/bytes:4096",
                   SHARED_DB=os.path.join(tmp, "shared", "perfbench.db"), LOCAL_DB=os.path.join(tmp, "local.db"),
                   MASTER_PORT=str(free_port()), TMPDIR=tmp)
        r = subprocess.run(["bash", os.path.join(SRC, "ci", "slurm-ddp.sbatch")], cwd=tmp, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if r.returncode != 0:
            fail("slurm-ddp.sbatch exited %d:\n%s" % (r.returncode, r.stdout))
        shared = dict(env, PERFBENCH_DB=env["SHARED_DB"])
        imported = runs(shared, "ddp-77")
        if len(imported) != 1:
            fail("slurm: the shared database holds %d runs labelled ddp-77" % len(imported))
        show = json.loads(subprocess.run([BIN, "show", str(imported[0]["id"]), "--format", "json"], env=shared,
                                         check=True, stdout=subprocess.PIPE, text=True).stdout)
        worlds = {r["params"].get("world_size") for r in show["results"] if r["suite"] == "ddp"}
        if worlds != {"2"}:
            fail("slurm: expected the ddp results of a world of 2 ranks, got world sizes %s" % worlds)
    print("slurm-ddp.sbatch: ok")


if __name__ == "__main__":
    github()
    github_pr()
    gitlab()
    slurm()
