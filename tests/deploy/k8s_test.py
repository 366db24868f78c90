#!/usr/bin/python3
"""deploy/k8s: every manifest checked field by field against the Kubernetes
API models of Debian's python3-kubernetes (no unknown field, every value of
its type), then what ferry relies on: one ConfigMap gives plan, workers and
merge the same options; the worker Job is Indexed with completions = WORKERS
and passes JOB_COMPLETION_INDEX/WORKERS to --worker; the DaemonSet's DEST
and cache are on a hostPath volume and its credentials come from a Secret.
Then the Jobs' own shell commands run here (with ferry, plan -> workers in
shuffled order -> merge) and must write what a one-machine ferry pack
writes, and the DaemonSet's sync command (against a file:// remote) must
place the dataset. Usage: k8s_test.py FERRY SAMPLES DEPLOY (exit 77: no
python3-kubernetes)."""
import filecmp
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import yaml

try:
    import kubernetes.client as k8s
except ImportError:
    print("SKIP: no python3-kubernetes")
    sys.exit(77)

FERRY, SAMPLES, DEPLOY = (os.path.abspath(a) for a in sys.argv[1:4])
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


PRIMITIVE = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def validate(value, typ, where):
    """value (from YAML) against an OpenAPI type name of the client."""
    if value is None:
        return
    if typ in PRIMITIVE:
        check(isinstance(value, PRIMITIVE[typ]) and not
              (typ == "int" and isinstance(value, bool)),
              f"{where}: {value!r} is not {typ}")
    elif typ == "object":
        return
    elif typ.startswith("list["):
        check(isinstance(value, list), f"{where}: not a list")
        for i, v in enumerate(value if isinstance(value, list) else []):
            validate(v, typ[5:-1], f"{where}[{i}]")
    elif typ.startswith("dict("):
        inner = typ[5:-1].split(", ", 1)[1]
        check(isinstance(value, dict), f"{where}: not a map")
        for k, v in (value if isinstance(value, dict) else {}).items():
            validate(v, inner, f"{where}.{k}")
    else:
        model = getattr(k8s, typ)
        check(isinstance(value, dict), f"{where}: not an object ({typ})")
        if not isinstance(value, dict):
            return
        by_key = {key: attr for attr, key in model.attribute_map.items()}
        for key, v in value.items():
            if key not in by_key:
                errors.append(f"{where}.{key}: no such field in {typ}")
                continue
            validate(v, model.openapi_types[by_key[key]], f"{where}.{key}")
        # Required fields: the model's constructor refuses None for them.
        try:
            k8s.ApiClient()._ApiClient__deserialize(value, typ)
        except (ValueError, TypeError) as e:
            errors.append(f"{where}: {e}")


KINDS = {("v1", "ConfigMap"): "V1ConfigMap", ("batch/v1", "Job"): "V1Job",
         ("apps/v1", "DaemonSet"): "V1DaemonSet"}


def load(name):
    docs = list(yaml.safe_load_all(open(os.path.join(DEPLOY, "k8s", name))))
    out = {}
    for d in docs:
        typ = KINDS.get((d.get("apiVersion"), d.get("kind")))
        check(typ, f"{name}: unexpected {d.get('apiVersion')} {d.get('kind')}")
        if typ:
            validate(d, typ, f"{name}:{d['kind']}/{d['metadata']['name']}")
        out[(d["kind"], d["metadata"]["name"])] = d
    return out


def only_container(job):
    spec = job["spec"]["template"]["spec"]
    check(len(spec["containers"]) == 1, "one container per pod")
    return spec, spec["containers"][0]


def stop_on_errors():
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)


pack = load("pack-job.yaml")
daemonset = load("sync-daemonset.yaml")
stop_on_errors()  # the checks below rely on the schema
cm = pack[("ConfigMap", "ferry-pack-options")]["data"]
for key in ("SRC", "OUT", "ARGS", "WORKERS"):
    check(key in cm, f"ConfigMap lacks {key}")
check("--shard-records" in cm["ARGS"].split(), "ARGS lack --shard-records")
workers = int(cm["WORKERS"])
commands = {}
for name, flag in (("ferry-pack-plan", "--plan"), ("ferry-pack", "--worker"),
                   ("ferry-pack-merge", "--merge")):
    job = pack[("Job", name)]
    spec, c = only_container(job)
    check(spec["restartPolicy"] in ("Never", "OnFailure"), f"{name}: restart")
    check([e.get("configMapRef", {}).get("name") for e in c["envFrom"]] ==
          ["ferry-pack-options"], f"{name}: options not from the ConfigMap")
    check(c["command"] == ["/bin/sh", "-c"] and len(c["args"]) == 1,
          f"{name}: not one shell command")
    cmd = c["args"][0]
    check(re.search(r'ferry pack "\$SRC" "\$OUT" \$ARGS', cmd) and
          flag in cmd, f"{name}: command {cmd!r}")
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
              for v in spec["volumes"]}
    check(mounts == {"data": "/data"} and claims == {"data": "ferry-data"},
          f"{name}: /data is not the ferry-data claim")
    commands[name] = cmd
work_job = pack[("Job", "ferry-pack")]["spec"]
check(work_job.get("completionMode") == "Indexed", "worker Job not Indexed")
check(work_job.get("completions") == workers,
      f"completions {work_job.get('completions')} != WORKERS {workers}")
check(work_job.get("parallelism", 1) <= workers, "parallelism > completions")
check('--worker "$JOB_COMPLETION_INDEX/$WORKERS"' in commands["ferry-pack"],
      "--worker is not JOB_COMPLETION_INDEX/WORKERS")
for p in ("SRC", "OUT"):
    check(cm[p].startswith("/data/"), f"{p} not on the /data volume")

sync = daemonset[("DaemonSet", "ferry-sync")]
spec, c = only_container(sync)
check(c["command"] == ["ferry", "sync"], "DaemonSet does not run ferry sync")
args = c["args"]
check([e.get("secretRef", {}).get("name") for e in c["envFrom"]] ==
      ["ferry-s3"], "credentials not from the Secret ferry-s3")
host = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]
        if "hostPath" in v}
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
on_host = [m for m, v in mounts.items() if v in host]
check(len(on_host) == 1, "no hostPath mount")
hostdir = on_host[0] if on_host else "/nonexistent"
cache = args[args.index("--cache") + 1] if "--cache" in args else ""
check(cache.startswith(hostdir + "/"), f"cache {cache!r} not on the hostPath")
check(args[1].startswith(hostdir + "/"), f"DEST {args[1]!r} not on hostPath")
check(args[0].startswith("s3://"), "remote is not s3://")

stop_on_errors()

# Run the Jobs' commands here, as the pods would (in shuffled index order).
tmp = tempfile.mkdtemp()
try:
    os.chdir(tmp)
    shutil.copytree(os.path.join(SAMPLES, "dataset"), "src")
    env = {**os.environ, **cm, "SRC": f"{tmp}/src", "OUT": f"{tmp}/out"}
    env["PATH"] = os.path.dirname(FERRY) + ":" + env["PATH"]
    sh = lambda cmd, **e: subprocess.run(
        ["/bin/sh", "-c", cmd], env=dict(env, **e), check=True)
    subprocess.run([FERRY, "pack", "src", "one", *cm["ARGS"].split(), "-q"],
                   check=True)
    sh(commands["ferry-pack-plan"])
    order = list(range(workers))
    random.shuffle(order)
    for i in order:
        sh(commands["ferry-pack"], JOB_COMPLETION_INDEX=str(i))
    sh(commands["ferry-pack-merge"])
    cmp = filecmp.dircmp("one", "out")
    same = not (cmp.left_only or cmp.right_only) and all(
        filecmp.cmp(f"one/{f}", f"out/{f}", shallow=False)
        for f in cmp.common_files)
    if not same:
        sys.exit(f"Jobs' output differs from a one-machine pack: {cmp.report()}")
    # A bad image: its worker and the merge end with 0 (exit 1 of ferry:
    # the shards are written, a retry would change nothing), dataset.json
    # names it. ARGS with a glob-like word (a file in the pod's cwd matches
    # it) reaches ferry as it is; a quote in ARGS is refused.
    with open(f"{tmp}/src/cat/zz_broken.png", "wb") as f:
        f.write(open(os.path.join(SAMPLES, "images/png/rgb8.png"), "rb")
                .read()[:2000])
    open(f"{tmp}/(x)", "w").close()
    # A dangling link: the plan cannot read it (exit 1 of ferry), the Job
    # completes all the same and the merge lists it.
    os.symlink(f"{tmp}/nowhere.png", f"{tmp}/src/cat/zz_dangling.png")
    bad = dict(OUT=f"{tmp}/bad", ARGS=cm["ARGS"] + " --group-by ([a-z]*)")
    sh(commands["ferry-pack-plan"], **bad)
    for i in order:
        sh(commands["ferry-pack"], JOB_COMPLETION_INDEX=str(i), **bad)
    sh(commands["ferry-pack-merge"], **bad)
    d = json.load(open(f"{tmp}/bad/dataset.json"))
    if sorted(f["input"] for f in d["failed"]) != ["cat/zz_broken.png",
                                                    "cat/zz_dangling.png"]:
        sys.exit(f"bad image: dataset.json failed = {d['failed']}")
    if d["options"]["group_regex"] != "([a-z]*)":
        sys.exit(f"ARGS globbed: group_regex = {d['options']['group_regex']}")
    os.remove(f"{tmp}/src/cat/zz_broken.png")
    os.remove(f"{tmp}/src/cat/zz_dangling.png")
    for name in commands:
        r = subprocess.run(["/bin/sh", "-c", commands[name]],
                           env=dict(env, OUT=f"{tmp}/q", JOB_COMPLETION_INDEX="0",
                                    ARGS=cm["ARGS"] + " --group-by '(a b)'"),
                           capture_output=True, text=True)
        if r.returncode != 2 or "no quotes" not in r.stderr:
            sys.exit(f"{name}: quoted ARGS: exit {r.returncode} {r.stderr}")
    # The DaemonSet's command against a file:// remote, its hostPath here;
    # --watch ends with SIGTERM (exit 0), as when the pod stops.
    subprocess.run([FERRY, "publish", "out", f"file://{tmp}/bucket", "-q"],
                   check=True)
    local = [a.replace(hostdir, f"{tmp}/node") for a in args]
    local[0] = f"file://{tmp}/bucket"
    p = subprocess.Popen([FERRY, "sync", *local])
    dest = local[1]
    for _ in range(600):
        if os.path.exists(os.path.join(dest, "dataset.json")):
            break
        if p.poll() is not None:
            sys.exit(f"ferry sync exited {p.returncode}")
        subprocess.run(["sleep", "0.1"])
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=60)
    if rc != 0 or not filecmp.cmp(f"{dest}/dataset.json", "out/dataset.json",
                                  shallow=False):
        sys.exit(f"DaemonSet's sync: exit {rc}, dataset not placed")
finally:
    shutil.rmtree(tmp)
print("ok")
