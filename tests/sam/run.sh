#!/usr/bin/env bash
# `make sam-test`: `sam local invoke` of every function of the synthesized template on a container
# engine of its own. Installs what it needs (Debian: docker.io, qemu-user-static, binfmt-support,
# debootstrap; PyPI: aws-sam-cli in a venv of its own), starts a dockerd of its own and stops it by
# its pid on exit (also on failure), builds the stand-in Lambda image and the Powertools layer once
# (cached by a hash of their inputs), then runs the pytest driver tests/sam/ (marker `sam`).
# Any failure to get the engine up fails the run with the reason; nothing is skipped silently.
#   tests/sam/run.sh [pytest args]           the driver (make sam-test)
#   tests/sam/run.sh --invoke -f FN -e EVENT  one function (make invoke); exit 3 = no engine here
set -euo pipefail
MODE=test
if [[ ${1:-} == --invoke ]]; then MODE=invoke; shift; fi
FAIL_CODE=$([[ $MODE == invoke ]] && echo 3 || echo 1)
cd "${REMINDERS_ROOT:-$(dirname "$0")/../..}"
ROOT=$PWD
PY=$ROOT/.venv/bin/python
CACHE=${REMINDERS_SAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reminders-sam}
RUN=$(mktemp -d /tmp/reminders-sam.XXXXXX)   # socket, pid and exec root: short paths, this run only
ARCH=${REMINDERS_SAM_ARCH:-arm64}            # the template's architecture
SUITE=trixie                                 # Debian 13: Python 3.13, the template's runtime
SAM_VERSION=1.170.0
AWSLAMBDARIC_VERSION=4.2.2
REGION=us-east-1
say() { echo "[sam-test] $*" >&2; }
fail() { say "FAILED: $*"; exit "$FAIL_CODE"; }
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 1800 9 || fail "another make sam-test holds $CACHE/.lock"

# --- what this machine needs -------------------------------------------------------------------
need_apt=()
for pair in dockerd:docker.io qemu-aarch64-static:qemu-user-static update-binfmts:binfmt-support \
  debootstrap:debootstrap; do
  command -v "${pair%%:*}" >/dev/null || need_apt+=("${pair#*:}")
done
if ((${#need_apt[@]})); then
  say "installing ${need_apt[*]} (apt)"
  [[ $(id -u) == 0 ]] || fail "root is needed to install ${need_apt[*]}"
  apt-get update -qq >/dev/null || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" \
    >/dev/null || fail "apt-get install ${need_apt[*]} failed"
fi
SAM=$CACHE/sam-venv/bin/sam
if ! "$SAM" --version 2>/dev/null | grep -q "$SAM_VERSION"; then
  say "installing aws-sam-cli==$SAM_VERSION into $CACHE/sam-venv (it pins its own boto3/pydantic)"
  rm -rf "$CACHE/sam-venv" && python3 -m venv "$CACHE/sam-venv"
  "$CACHE/sam-venv/bin/pip" install -q --disable-pip-version-check "aws-sam-cli==$SAM_VERSION" \
    || fail "pip install aws-sam-cli failed"
fi
RIE=$("$CACHE/sam-venv/bin/python" -c "import samcli,os;print(os.path.dirname(samcli.__file__))")/local/rapid
[[ -x $RIE/aws-lambda-rie-$ARCH || -f $RIE/aws-lambda-rie-$ARCH ]] || fail "no $RIE/aws-lambda-rie-$ARCH"

if [[ $ARCH == arm64 && $(uname -m) != aarch64 ]]; then
  [[ -e /proc/sys/fs/binfmt_misc/register ]] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc \
    || fail "cannot mount binfmt_misc (arm64 emulation)"
  update-binfmts --enable qemu-aarch64 2>/dev/null || true
  grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null || fail "qemu-aarch64 binfmt not enabled"
fi

# --- the container engine, ours alone ---------------------------------------------------------
DOCKER_PID=
stop_engine() {
  if [[ -n $DOCKER_PID ]] && kill -0 "$DOCKER_PID" 2>/dev/null; then
    say "stopping dockerd (pid $DOCKER_PID)"
    kill "$DOCKER_PID" && for _ in $(seq 100); do kill -0 "$DOCKER_PID" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$DOCKER_PID" 2>/dev/null || true
  fi
  rm -rf "$RUN"
}
trap stop_engine EXIT
trap "exit 130" INT TERM
export DOCKER_HOST=unix://$RUN/docker.sock
# --userland-proxy-path: SAM treats docker-proxy's accept as readiness; ours waits for the container.
dockerd --experimental --storage-driver=overlay2 --iptables=false --data-root "$CACHE/docker" \
  --exec-root "$RUN/exec" -H "$DOCKER_HOST" --pidfile "$RUN/docker.pid" \
  --userland-proxy-path "$ROOT/tests/sam/patient-proxy.py" >"$RUN/dockerd.log" 2>&1 &
DOCKER_PID=$!
for _ in $(seq 150); do
  docker info >/dev/null 2>&1 && break
  kill -0 "$DOCKER_PID" 2>/dev/null || { cat "$RUN/dockerd.log" >&2; fail "dockerd exited"; }
  sleep 0.2
done
docker info >/dev/null 2>&1 || { tail -20 "$RUN/dockerd.log" >&2; fail "dockerd did not answer in 30 s"; }
GATEWAY=$(docker network inspect bridge --format '{{(index .IPAM.Config 0).Gateway}}')
[[ -n $GATEWAY ]] || GATEWAY=$(ip -4 -o addr show docker0 | awk '{print $4}' | cut -d/ -f1)
[[ -n $GATEWAY ]] || fail "no docker bridge gateway address"
say "dockerd pid $DOCKER_PID, bridge gateway $GATEWAY"

# --- the stand-in Lambda image, built once per input hash -------------------------------------
boto3_pin=$(grep -E '^boto3==' requirements.lock)
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[[ -n $mirror ]] || mirror=$(awk '$1=="deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[[ -n $mirror ]] || fail "no Debian mirror in this machine's apt sources"
case $ARCH in arm64) pyplat=aarch64 ;; x86_64) pyplat=x86_64 ;; *) fail "unknown arch $ARCH" ;; esac
deb_arch=${ARCH/x86_64/amd64}
# pip --platform takes exact tags: every manylinux glibc up to 2.34 (Lambda's Amazon Linux 2023).
platforms=(--platform "manylinux2014_$pyplat")
for v in $(seq 17 34); do platforms+=(--platform "manylinux_2_${v}_$pyplat"); done
key=$(cat tests/sam/standin/* | sha256sum | cut -c1-12)-$(echo "$SUITE $deb_arch $AWSLAMBDARIC_VERSION $boto3_pin" | sha256sum | cut -c1-12)
IMAGE=reminders-sam-standin:$ARCH-$key
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  build=$CACHE/build-$ARCH && rm -rf "$build" && mkdir -p "$build/rootfs"
  base=$CACHE/debootstrap-$SUITE-$deb_arch.tar
  if [[ ! -f $base ]]; then
    say "debootstrap --arch=$deb_arch --variant=minbase --include=python3 $SUITE (once; minutes under emulation)"
    debootstrap --arch="$deb_arch" --variant=minbase --include=python3 "$SUITE" "$build/rootfs" "$mirror" \
      >"$build/debootstrap.log" 2>&1 || { tail -20 "$build/debootstrap.log" >&2; fail "debootstrap failed"; }
    tar -C "$build/rootfs" -cf "$base.part" . && mv "$base.part" "$base"
  else
    tar -C "$build/rootfs" -xf "$base"
  fi
  say "building $IMAGE"
  "$PY" -m pip install -q --disable-pip-version-check --no-compile --target "$build/rootfs/var/runtime" \
    "${platforms[@]}" --implementation cp --python-version 3.13 --only-binary=:all: \
    -c requirements.lock "awslambdaric==$AWSLAMBDARIC_VERSION" boto3 2>&1 | grep -v '^WARNING: Location' >&2 || true
  [[ -d $build/rootfs/var/runtime/awslambdaric ]] || fail "awslambdaric did not install"
  install -m 0755 tests/sam/standin/bootstrap "$build/rootfs/var/runtime/bootstrap"
  mkdir -p "$build/rootfs/var/task" "$build/rootfs/opt"
  tar -C "$build/rootfs" -cf "$build/rootfs.tar" . && rm -rf "$build/rootfs"
  cp tests/sam/standin/Dockerfile "$build/"
  docker build -q --platform "linux/$deb_arch" -t "$IMAGE" "$build" >/dev/null || fail "docker build failed"
  rm -rf "$build"
fi
say "stand-in image $IMAGE ($(docker image inspect "$IMAGE" --format '{{.Os}}/{{.Architecture}}')):" \
  "$(docker run --rm --platform "linux/$deb_arch" "$IMAGE" /usr/bin/python3 -c \
  'import platform; print("python", platform.python_version(), platform.machine(), "glibc", platform.libc_ver()[1])' 2>/dev/null)"

# --- the public Powertools layer, as SAM's layer cache holds it -------------------------------
LAYERS=$CACHE/layers
pin=$("$PY" -c "from infra.powertools import pinned_release as p, layer_version as v; print(p(), v(p()))")
release=${pin% *} version=${pin#* }
layer_name=AWSLambdaPowertoolsPythonV3-python313-$ARCH
arn=arn:aws:lambda:$REGION:017000801446:layer:$layer_name:$version
folder=$LAYERS/$layer_name-$version-$(printf %s "$arn" | sha256sum | cut -c1-10)
if [[ ! -f $folder/.reminders-complete ]]; then
  say "filling $folder with aws-lambda-powertools==$release for $pyplat/cp313 (the layer $arn cannot be pulled)"
  rm -rf "$folder" && mkdir -p "$folder"
  "$PY" -m pip install -q --disable-pip-version-check --no-compile --target "$folder/python" \
    "${platforms[@]}" --implementation cp --python-version 3.13 --only-binary=:all: \
    -c requirements.lock "aws-lambda-powertools[parser]==$release" 2>&1 | grep -v '^WARNING: Location' >&2 || true
  "$PY" layers/check_layer.py --wheel-tags-only "$folder/python" || fail "Powertools layer wheel tags"
  # Byte-compile it once with the image's own Python 3.13 (under emulation an uncompiled pydantic
  # costs minutes at every cold start); the stand-in's runtime packages are compiled in its image.
  docker run --rm --platform "linux/$deb_arch" -v "$folder:/layer" "$IMAGE" \
    /usr/bin/python3 -m compileall -q -j 0 /layer/python >/dev/null || fail "compileall of the layer failed"
  touch "$folder/.reminders-complete"
fi
core=$(ls -d "$folder"/python/pydantic_core-*.dist-info)
say "pydantic_core: $folder/python/pydantic_core ($(grep '^Tag:' "$core/WHEEL" | cut -d' ' -f2 | paste -sd,))"

# --- the driver ---------------------------------------------------------------------------------
export REMINDERS_SAM_BIN=$SAM REMINDERS_SAM_IMAGE=$IMAGE REMINDERS_SAM_LAYER_CACHE=$LAYERS \
  REMINDERS_SAM_GATEWAY=$GATEWAY REMINDERS_SAM_ARCH=$ARCH REMINDERS_SAM_REGION=$REGION
if [[ $MODE == invoke ]]; then
  "$PY" -m reminders_ops.cli invoke --mode sam "$@"
else
  "$PY" -m pytest -p no:cacheprovider -n 0 -m sam -v -s tests/sam "$@"
fi
