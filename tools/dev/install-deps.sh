#!/usr/bin/env bash
# Installs what building and testing ferry needs on Debian 12, and only what is
# missing (idempotent). Run as root (or with sudo available).
#   install-deps.sh            build + test dependencies
#   install-deps.sh --bench    also the benchmark anchors and the samples' sources
set -euo pipefail

BUILD_PKGS=(cmake ninja-build g++ ccache pkg-config
  libpng-dev libjpeg62-turbo-dev libprotobuf-dev protobuf-compiler librsync-dev
  libcurl4-openssl-dev libzstd-dev libxxhash-dev libgtest-dev libgmock-dev
  libcli11-dev libdeflate-dev libb2-dev libsimdjson-dev libtbb-dev zlib1g-dev libssl-dev libbenchmark-dev
  libexpat1-dev libsqlite3-dev)
TEST_PKGS=(xxhash nginx-light rdiff zstd curl python3 python3-protobuf python3-zstandard python3-xxhash python3-pil
  python3-numpy openssl python3-botocore awscli btrfs-progs strace
  slurm-wlm munge python3-yaml python3-kubernetes)
BENCH_PKGS=(libvips-tools rsync rclone aria2 zsync python3-skimage plasma-workspace-wallpapers time bc)
S3RVER_VERSION=3.7.1
NPM_PREFIX=${FERRY_NPM_PREFIX:-/opt/ferry-npm}

pkgs=("${BUILD_PKGS[@]}" "${TEST_PKGS[@]}")
[ "${1:-}" = "--bench" ] && pkgs+=("${BENCH_PKGS[@]}")
command -v npm > /dev/null || pkgs+=(nodejs npm)

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" > /dev/null
fi

# s3rver (S3 API for the integration tests) from npm, pinned.
if [ ! -x "$NPM_PREFIX/node_modules/.bin/s3rver" ]; then
  echo "install-deps: npm install s3rver@$S3RVER_VERSION into $NPM_PREFIX"
  $SUDO mkdir -p "$NPM_PREFIX"
  (cd "$NPM_PREFIX" && $SUDO npm install --no-audit --no-fund --silent \
      "s3rver@$S3RVER_VERSION" > /dev/null)
fi
echo "install-deps: all dependencies present"
