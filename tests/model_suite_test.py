#!/usr/bin/env python3
"""The model suite end to end: a user's models exported with
scripts/export-model.py, run through the binary, compared, gated, and every
error a user meets (a missing, corrupt or truncated file, a package compiled
for another device or torch, mismatched or missing inputs, a file whose
loader crashes) failing its variant with one line while the run goes on.

    model_suite_test.py PERFBENCH_BINARY SOURCE_DIR TORCH_PYTHON CACHE_DIR

The exported packages are cached in CACHE_DIR (the build tree), keyed by
the export script, the example models and the torch version: AOTInductor
compiles each with the C++ compiler, tens of seconds apiece.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

BIN, SRC, PY, CACHE = (os.path.abspath(a) for a in sys.argv[1:5])
EXPORT = os.path.join(SRC, "scripts", "export-model.py")
MODELS = os.path.join(SRC, "examples", "models.py")
RUN = ["run", "--quick", "--processes", "2", "--no-control", "--format", "json"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


# Inductor verifies each vector ISA of this CPU by compiling a probe and
# importing torch in a fresh Python to load it: about 6 s of the 25 s an
# AOTInductor export of an example model takes on the 2-core Xeon. Within
# one test run the machine and its compiler stay the same, and so does the
# package (the best ISA the CPU reports, which the probes would confirm).
os.environ["TORCHINDUCTOR_VEC_ISA_OK"] = "1"


def sh(args, ok=(0,), **kw):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode not in ok:
        fail("`%s` exited %d (expected %s):\n%s\n%s" % (" ".join(args), r.returncode, ok, r.stdout[-3000:],
                                                         r.stderr[-3000:]))
    return r


def exported(name, factory, fmt, extra=()):
    """The cached export of examples/models.py:factory (exported on a miss)."""
    key = hashlib.sha1()
    for path in (EXPORT, MODELS):
        key.update(open(path, "rb").read())
    key.update(sh([PY, "-c", "import torch; print(torch.__version__)"]).stdout.encode())
    key.update(repr((factory, fmt, extra)).encode())
    folder = os.path.join(CACHE, key.hexdigest()[:16])
    path = os.path.join(folder, name)
    if not (os.path.exists(path) and os.path.exists(path + ".inputs.pt")):
        os.makedirs(folder, exist_ok=True)
        sh([PY, EXPORT, "%s:%s" % (MODELS, factory), "--out", path, "--format", fmt] + list(extra))
    return path


def results(doc):
    """The model suite's variants: (model, scenario) -> {status, reason, metrics, attributes}."""
    out = {}
    for r in doc["results"]:
        if r["suite"] != "model":
            continue
        v = out.setdefault((r["params"]["model"], r["params"]["scenario"]),
                           {"status": r["status"], "reason": r.get("reason", ""), "metrics": set(),
                            "attributes": r.get("attributes", {})})
        if r["status"] == "ok":
            v["metrics"].add(r["metric"])
    return out


def check_good_run(doc, names):
    got = results(doc)
    want = {(n, s) for n in names for s in ("single_stream", "offline")}
    if set(got) != want:
        fail("variants %s, expected %s" % (sorted(got), sorted(want)))
    for key, v in got.items():
        if v["status"] != "ok":
            fail("%s: %s %s" % (key, v["status"], v["reason"]))
        for m in ("step_time", "throughput", "peak_rss") + (("latency_p99",) if key[1] == "single_stream" else ()):
            if m not in v["metrics"]:
                fail("%s lacks %s: %s" % (key, m, sorted(v["metrics"])))
        a = v["attributes"]
        if len(a.get("model_sha1", "")) != 40 or a.get("format") not in ("AOTInductor", "TorchScript"):
            fail("%s attributes: %s" % (key, a))


def craft(src, dst, meta=None, so=None):
    """A copy of package `src` with its metadata changed or its library replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if meta and info.filename.endswith("_metadata.json"):
                m = json.loads(data)
                m.update(meta)
                data = json.dumps(m).encode()
            if so and info.filename.endswith(".so"):
                data = so
            zout.writestr(info, data)
    shutil.copy(src + ".inputs.pt", dst + ".inputs.pt")


def bad_files(tmp, mlp, cnn_ts):
    """(file, expected words in the failure) for each error a user meets."""
    c = os.path.join(tmp, "boom.c")
    open(c, "w").write("#include <signal.h>\n__attribute__((constructor)) static void boom(void) { raise(SIGSEGV); }\n")
    sh(["cc", "-shared", "-fPIC", "-o", c[:-2] + ".so", c])
    cases = []
    for name, meta, so, words in (
            ("gpu", {"AOTI_DEVICE_KEY": "cuda"}, None, ["compiled for cuda", "this run is on cpu", "--device cpu"]),
            ("oldtorch", {"perfbench.torch": "2.10.0+cpu"}, None, ["torch 2.10.0", "export it again"]),
            ("crash", None, open(c[:-2] + ".so", "rb").read(), ["crashed the process", "signal 11"])):
        path = os.path.join(tmp, name + ".pt2")
        craft(mlp, path, {"perfbench.name": name, **(meta or {})}, so)
        cases.append((path, [path] + words))
    junk = os.path.join(tmp, "junk.pt2")
    open(junk, "wb").write(os.urandom(4096))
    cases.append((junk, [junk, "not an exported model"]))
    cut = os.path.join(tmp, "cut.pt2")
    data = open(mlp, "rb").read()
    open(cut, "wb").write(data[:len(data) // 2])
    cases.append((cut, [cut, "unreadable archive"]))
    wrong = os.path.join(tmp, "wrong.pt")
    shutil.copy(cnn_ts, wrong)
    shutil.copy(mlp + ".inputs.pt", wrong + ".inputs.pt")
    cases.append((wrong, [wrong + ".inputs.pt", "f32_Bx256 do not match the model's f32_Bx3x32x32"]))
    noinputs = os.path.join(tmp, "noinputs.pt2")
    shutil.copy(mlp, noinputs)
    cases.append((noinputs, [noinputs + ".inputs.pt", "no such file"]))
    missing = os.path.join(tmp, "missing.pt2")
    cases.append((missing, [missing, "no such file"]))
    plain = os.path.join(tmp, "plain.pt")
    sh([PY, "-c", "import torch; torch.jit.save(torch.jit.script(torch.nn.Linear(4, 2)), %r)" % plain])
    cases.append((plain, [plain, "without perfbench's metadata"]))
    return cases


def check_errors(tmp, mlp, cnn_ts):
    cases = bad_files(tmp, mlp, cnn_ts)
    db = os.path.join(tmp, "errors.db")
    args = [BIN] + RUN + ["--db", db, "--filter", "offline", "--model-file", mlp]
    for path, _ in cases:
        args += ["--model-file", path]
    r = sh(args, ok=(4,))
    got = results(json.loads(r.stdout))
    ok = [k for k, v in got.items() if v["status"] == "ok"]
    if ok != [("mlp", "offline")]:
        fail("the good model beside the bad ones: %s" % {k: v["status"] for k, v in got.items()})
    failed = [v["reason"] for v in got.values() if v["status"] == "failed"]
    if len(failed) != len(cases):
        fail("%d failed variants for %d bad files: %s" % (len(failed), len(cases), failed))
    for path, words in cases:
        errors = [e for e in failed if path in e]
        if len(errors) != 1:
            fail("no single failure names %s: %s" % (path, failed))
        if "\n" in errors[0] or not all(w in errors[0] for w in words):
            fail("the failure for %s reads %r, expected one line with %s" % (path, errors[0], words))
    print("errors: %d bad files failed one line each, the good model ran" % len(cases))


def check_compare_and_gate(tmp, mlp, cnn, mlp_original):
    db = os.path.join(tmp, "runs.db")
    first = json.loads(sh([BIN] + RUN + ["--db", db, "--label", "v1", "--model-file", mlp, "--model-file", cnn]).stdout)
    check_good_run(first, ["mlp", "cnn"])
    # A new build of the model at the same path: the same workload, another file.
    rebuilt = exported("mlp.pt2", "mlp_retrained", "aoti", ["--name", "mlp"])
    shutil.copy(rebuilt, mlp)
    shutil.copy(rebuilt + ".inputs.pt", mlp + ".inputs.pt")
    second = json.loads(sh([BIN] + RUN + ["--db", db, "--label", "v2", "--model-file", mlp, "--model-file", cnn]).stdout)
    check_good_run(second, ["mlp", "cnn"])
    r = sh([BIN, "compare", "v1", "v2", "--db", db, "--format", "json"], ok=(0, 1, 3))
    doc = json.loads(r.stdout)
    fields = [d["field"] for d in doc["differences"]]
    if "model/inference/model:mlp file (sha1)" not in fields or any("model:cnn" in f for f in fields):
        fail("compare lists %s, expected the mlp's new file and not the cnn's" % fields)
    judged = {m["params"]["model"] for m in doc["metrics"] if m["suite"] == "model"}
    if judged != {"mlp", "cnn"}:
        fail("compare judged models %s" % judged)
    base = os.path.join(tmp, "v1.json")
    open(base, "w").write(sh([BIN, "show", "v1", "--db", db, "--format", "json"]).stdout)
    r = sh([BIN, "gate", "--baseline", base, "--db", db, "--processes", "2", "--max-processes", "2", "--format",
            "json", "--allow-inconclusive"], ok=(0, 1))
    gate = json.loads(r.stdout)
    fields = [d["field"] for d in gate["differences"]]
    gated = {m["params"]["model"] for m in gate["metrics"] if m["suite"] == "model"}
    if "model/inference/model:mlp file (sha1)" not in fields or gated != {"mlp", "cnn"}:
        fail("the gate reran %s and lists %s; expected both models and the mlp's new file" % (gated, fields))
    print("compare and gate: both models judged, the rebuilt mlp listed as a difference")
    # The interleaved gate for a new model file: the rebuilt mlp (exported
    # under the original's name) against the original, in alternating processes.
    r = sh([BIN, "gate", "--reference-model", mlp_original, "--model-file", mlp, "--suite", "model", "--quick",
            "--no-control", "--filter", "offline", "--pairs", "6", "--db", db, "--format", "json",
            "--allow-inconclusive"], ok=(0, 1))
    gate = json.loads(r.stdout)
    gated = {m["params"]["model"] for m in gate["metrics"] if m["suite"] == "model"}
    fields = [d["field"] for d in gate["differences"]]
    if gate["kind"] != "interleaved" or gated != {"mlp"} or "model/inference/model:mlp file (sha1)" not in fields:
        fail("gate --reference-model: kind %s, judged %s, differences %s" % (gate["kind"], gated, fields))
    print("gate --reference-model: the new mlp judged against the old one, interleaved")
    html = os.path.join(tmp, "report.html")
    sh([BIN, "report", "--db", db, "--output", html])
    if "model: throughput by model" not in open(html).read():
        fail("the report has no headline plot for the model suite")
    r = sh([BIN, "diagnose", "v2", "--db", db, "--format", "json"])
    if {v["suite"] for v in json.loads(r.stdout)["variants"]} != {"model"}:
        fail("diagnose did not cover the models: %s" % r.stdout[:1000])
    r = sh([BIN, "history", "--db", db, "--suite", "model", "--metric", "throughput", "--format", "json"])
    if "model:mlp" not in r.stdout and '"mlp"' not in r.stdout:
        fail("history has no series for the models: %s" % r.stdout[:1000])
    print("report, diagnose and history read the model suite's runs")


def check_training(tmp, mlp):
    """train=on: a TorchScript module returning its loss trains (fp32, bf16 autocast); a package cannot."""
    ts = exported("mlp_loss.pt", "mlp_with_loss", "torchscript", ["--train"])
    db = os.path.join(tmp, "train.db")
    r = sh([BIN] + RUN + ["--db", db, "--model-file", ts, "--model-file", mlp, "--param", "train=on",
                          "--param", "precision=fp32,bf16"], ok=(4,))
    rows = [x for x in json.loads(r.stdout)["results"] if x["suite"] == "model"]
    def row(model, scenario, precision, metric):
        for x in rows:
            p = x["params"]
            if (p["model"], p["scenario"], p.get("precision", "fp32"), x["metric"]) == (model, scenario, precision, metric):
                return x
        return None
    for precision in ("fp32", "bf16"):
        loss = row("mlp_loss", "offline", precision, "loss")
        tput = row("mlp_loss", "offline", precision, "throughput")
        if not loss or loss["status"] != "ok" or not tput or not 0 < loss["median"] < 10:
            fail("training %s: %s" % (precision, [(x["params"], x["metric"], x["status"], x["reason"]) for x in rows]))
        skipped = [x for x in rows if x["params"]["model"] == "mlp_loss" and x["params"]["scenario"] == "single_stream"
                   and x["params"].get("precision", "fp32") == precision][0]
        if skipped["status"] != "skipped" or "offline" not in skipped["reason"]:
            fail("train=on single_stream: %s %s" % (skipped["status"], skipped["reason"]))
    pkg = [x for x in rows if x["params"]["model"] == "mlp" and x["params"]["scenario"] == "offline"]
    if not pkg or pkg[0]["status"] != "failed" or "inference only" not in pkg[0]["reason"]:
        fail("train=on on an AOTInductor package: %s" % [(x["status"], x["reason"]) for x in pkg])
    print("training: a TorchScript loss module trains in fp32 and bf16; a package is refused")


def check_export_errors(tmp):
    r = sh([PY, EXPORT, "%s:mlp" % MODELS, "--out", os.path.join(tmp, "x.pt2"), "--device", "cuda"], ok=(2,))
    if "GPU" not in r.stderr or os.path.exists(os.path.join(tmp, "x.pt2")):
        fail("--device cuda without a GPU: %r" % r.stderr)
    r = sh([PY, EXPORT, "%s:nosuch" % MODELS, "--out", os.path.join(tmp, "y.pt2")], ok=(2,))
    if "has no nosuch" not in r.stderr:
        fail("an unknown factory: %r" % r.stderr)
    r = sh([BIN, "run", "--suite", "model", "--db", os.path.join(tmp, "u.db")], ok=(2,))
    if "--model-file" not in r.stderr:
        fail("the model suite without --model-file: %r" % r.stderr)
    r = sh([PY, EXPORT, "%s:mlp_with_loss" % MODELS, "--out", os.path.join(tmp, "z.pt2"), "--train"], ok=(2,))
    if "--format torchscript" not in r.stderr:
        fail("--train as a package: %r" % r.stderr)
    print("export-model.py and run refuse bad usage with exit 2")


def main():
    mlp_cached = exported("mlp.pt2", "mlp", "aoti")
    cnn_cached = exported("cnn.pt2", "cnn", "aoti")
    cnn_ts_cached = exported("cnn.pt", "cnn", "torchscript")
    with tempfile.TemporaryDirectory() as tmp:
        mlp, cnn = os.path.join(tmp, "mlp.pt2"), os.path.join(tmp, "cnn.pt")
        for src, dst in ((mlp_cached, mlp), (cnn_ts_cached, cnn)):
            shutil.copy(src, dst)
            shutil.copy(src + ".inputs.pt", dst + ".inputs.pt")
        check_export_errors(tmp)
        check_errors(tmp, mlp, cnn)
        check_training(tmp, mlp)
        one = json.loads(sh([BIN] + RUN + ["--db", os.path.join(tmp, "aoti.db"), "--model-file", cnn_cached]).stdout)
        check_good_run(one, ["cnn"])
        check_compare_and_gate(tmp, mlp, cnn, mlp_cached)
    print("PASS")


if __name__ == "__main__":
    main()
