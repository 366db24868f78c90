#!/usr/bin/env python3
"""Oracle test: ferry's AWS configuration resolution against the AWS CLI's.

Builds random ~/.aws/credentials and ~/.aws/config files, environment
variables and command-line flags, asks aws_config_resolve (ferry's
ResolveAwsConfig) and the AWS CLI's own botocore session (Debian's awscli
vendors it as awscli.botocore) for profile, credentials, region, CA bundle
and S3 addressing style, and compares them; errors must agree in kind
(unknown profile, partial credentials, no credentials). The CLI here
predates endpoint_url settings, so endpoints are tested in the C++ unit
test only. Also checks a few values with `aws configure get`.

usage: aws_config_oracle.py AWS_CONFIG_RESOLVE [--count N] [--seed S]
Exit 0 all agree, 1 a difference, 77 no awscli.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    from awscli.botocore.session import Session
except ImportError:
    print("awscli (Debian package) is not installed (tools/dev/install-deps.sh)")
    sys.exit(77)

PROFILES = ["default", "dev", "prod", "my team"]
REGIONS = ["us-east-1", "eu-west-1", "ap-south-1", "sa-east-1"]


def rand_creds_section(rng, tag):
    lines = []
    r = rng.random()
    if r < 0.75:
        lines.append(f"aws_access_key_id = AK{tag}")
        if rng.random() < 0.92:
            lines.append(f"aws_secret_access_key = SECRET/{tag}+x")
    if rng.random() < 0.3:
        lines.append(f"aws_session_token = TOKEN{tag}")
    if rng.random() < 0.1:
        lines.append(f"aws_security_token = LEGACY{tag}")
    return lines


def rand_files(rng, home):
    os.makedirs(os.path.join(home, ".aws"), exist_ok=True)
    creds, conf = [], []
    for p in PROFILES:
        if rng.random() < 0.5:
            creds.append(f"[{p}]")
            creds += rand_creds_section(rng, "C" + p.replace(" ", ""))
            if rng.random() < 0.15:
                creds.append(f"region = {rng.choice(REGIONS)}")
        if rng.random() < 0.6:
            if p == "default":
                conf.append("[default]")
            elif " " in p:
                conf.append(f'[profile "{p}"]')
            else:
                conf.append(f"[profile {p}]")
            if rng.random() < 0.6:
                conf.append(f"region = {rng.choice(REGIONS)}")
            if rng.random() < 0.25:
                conf += rand_creds_section(rng, "F" + p.replace(" ", ""))
            if rng.random() < 0.3:
                conf.append(f"ca_bundle = /ca/{p.replace(' ', '')}.pem")
            if rng.random() < 0.4:
                conf.append("s3 =")
                conf.append("  addressing_style = " +
                            rng.choice(["path", "virtual", "auto"]))
                if rng.random() < 0.5:
                    conf.append("  max_concurrent_requests = 20")
            if rng.random() < 0.2:
                conf.append("# a comment")
    files = {}
    if creds and rng.random() < 0.9:
        files["credentials"] = "\n".join(creds) + "\n"
    if conf and rng.random() < 0.9:
        files["config"] = "\n".join(conf) + "\n"
    for name, text in files.items():
        with open(os.path.join(home, ".aws", name), "w") as f:
            f.write(text)
    return files


def rand_env(rng, home):
    env = {"HOME": home, "AWS_EC2_METADATA_DISABLED": "true",
           "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    pick = lambda p: rng.random() < p
    if pick(0.3):
        env["AWS_PROFILE"] = rng.choice(PROFILES + ["ghost"])
    if pick(0.15):
        env["AWS_DEFAULT_PROFILE"] = rng.choice(PROFILES + ["ghost"])
    if pick(0.3):
        env["AWS_ACCESS_KEY_ID"] = "AKENV"
    if pick(0.3):
        env["AWS_SECRET_ACCESS_KEY"] = "SECRET/ENV"
    if pick(0.2):
        env["AWS_SESSION_TOKEN"] = "TOKENENV"
    if pick(0.1):
        env["AWS_SECURITY_TOKEN"] = "LEGACYENV"
    if pick(0.25):
        env["AWS_REGION"] = rng.choice(REGIONS)
    if pick(0.25):
        env["AWS_DEFAULT_REGION"] = rng.choice(REGIONS)
    if pick(0.2):
        env["AWS_CA_BUNDLE"] = "/ca/env.pem"
    if pick(0.1):  # files somewhere else (absent: as no file)
        env["AWS_SHARED_CREDENTIALS_FILE"] = os.path.join(home, "other-creds")
    if pick(0.1):
        env["AWS_CONFIG_FILE"] = os.path.join(home, ".aws", "credentials")
    return env


def rand_flags(rng):
    flags = {}
    if rng.random() < 0.25:
        flags["profile"] = rng.choice(PROFILES + ["ghost"])
    if rng.random() < 0.15:
        flags["region"] = "me-south-1"
    if rng.random() < 0.15:
        flags["ca_bundle"] = "/ca/flag.pem"
    if rng.random() < 0.15:
        flags["addressing"] = rng.choice(["path", "virtual", "auto"])
    if rng.random() < 0.2:
        flags["no_sign"] = True
    return flags


def ferry_resolve(tool, env, flags):
    args = [tool]
    for key, opt in (("profile", "--profile"), ("region", "--region"),
                     ("ca_bundle", "--ca-bundle"),
                     ("addressing", "--s3-addressing")):
        if key in flags:
            args += [opt, flags[key]]
    if flags.get("no_sign"):
        args.append("--no-sign-request")
    out = subprocess.run(args, env=env, capture_output=True, text=True,
                         check=True).stdout
    r = json.loads(out)
    if r["ok"]:
        return {k: r[k] for k in ("profile", "sign", "access_key",
                                  "secret_key", "token", "region",
                                  "ca_bundle", "addressing")}
    msg = r["message"]
    for secret in ("SECRET/", "TOKEN", "LEGACY"):
        if secret in msg:
            return {"error": "SECRET IN MESSAGE: " + msg}
    if "not found in" in msg:
        return {"error": "profile not found"}
    if "no AWS credentials found" in msg:
        return {"error": "no credentials"}
    if "aws_secret_access_key" in msg or "AWS_SECRET_ACCESS_KEY" in msg:
        return {"error": "partial credentials"}
    return {"error": "other: " + msg}


def cli_resolve(env, flags):
    """What the AWS CLI's session resolves (clidriver sets --profile and
    --region as session instance variables)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        s = Session()
        if "profile" in flags:
            s.set_config_variable("profile", flags["profile"])
        if "region" in flags:
            s.set_config_variable("region", flags["region"])
        # (awscli's botocore raises classes of the module it is loaded as:
        # compare by name.)
        try:
            scoped = s.get_scoped_config()
        except Exception as e:
            if type(e).__name__ != "ProfileNotFound":
                raise
            return {"error": "profile not found"}
        r = {"profile": s.get_config_variable("profile") or "default",
             "sign": not flags.get("no_sign"),
             "access_key": "", "secret_key": "", "token": "",
             "region": s.get_config_variable("region") or "us-east-1",
             "ca_bundle": flags.get("ca_bundle")
             or s.get_config_variable("ca_bundle") or "",
             "addressing": flags.get("addressing")
             or (scoped.get("s3") or {}).get("addressing_style") or "auto"}
        if not flags.get("no_sign"):
            try:
                c = s.get_credentials()
            except Exception as e:
                if type(e).__name__ != "PartialCredentialsError":
                    raise
                return {"error": "partial credentials"}
            if c is None:
                return {"error": "no credentials"}
            c = c.get_frozen_credentials()
            r.update(access_key=c.access_key, secret_key=c.secret_key,
                     token=c.token or "")
        return r
    finally:
        os.environ.clear()
        os.environ.update(saved)


def check_configure_get(tool, work):
    """`aws configure get` for a fixed setup: the CLI binary itself."""
    home = os.path.join(work, "cfg")
    os.makedirs(os.path.join(home, ".aws"))
    with open(os.path.join(home, ".aws", "credentials"), "w") as f:
        f.write("[dev]\naws_access_key_id = AKDEV\n"
                "aws_secret_access_key = SECRET/DEV\nregion = eu-west-3\n")
    with open(os.path.join(home, ".aws", "config"), "w") as f:
        f.write("[profile dev]\nregion = eu-west-1\nca_bundle = /ca/dev.pem\n"
                "s3 =\n  addressing_style = path\n")
    env = {"HOME": home, "PATH": "/usr/bin:/bin",
           "AWS_EC2_METADATA_DISABLED": "true"}
    ours = ferry_resolve(tool, env, {"profile": "dev"})
    bad = 0
    for key, field in (("region", "region"), ("aws_access_key_id",
                                              "access_key"),
                       ("ca_bundle", "ca_bundle"),
                       ("s3.addressing_style", "addressing")):
        got = subprocess.run(["/usr/bin/aws", "configure", "get", key,
                              "--profile", "dev"], env=env,
                             capture_output=True, text=True).stdout.strip()
        if got != ours.get(field):
            print(f"aws configure get {key}: {got!r}, ferry {ours.get(field)!r}")
            bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="ferry-awscfg-")
    bad, kinds = 0, {}
    try:
        for i in range(args.count):
            home = os.path.join(work, str(i))
            files = rand_files(rng, home)
            env = rand_env(rng, home)
            flags = rand_flags(rng)
            ours = ferry_resolve(args.tool, env, flags)
            cli = cli_resolve(env, flags)
            kind = cli.get("error", "ok")
            kinds[kind] = kinds.get(kind, 0) + 1
            if ours != cli:
                bad += 1
                if bad <= 5:
                    print(f"DIFFERENCE #{i}\n  files {files}\n  env "
                          f"{ {k: v for k, v in env.items() if k.startswith('AWS')} }"
                          f"\n  flags {flags}\n  ferry {ours}\n  cli   {cli}")
            shutil.rmtree(home)
        if os.path.exists("/usr/bin/aws"):
            bad += check_configure_get(args.tool, work)
    finally:
        shutil.rmtree(work)
    print(f"{args.count} configurations, {bad} differences; outcomes {kinds}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
