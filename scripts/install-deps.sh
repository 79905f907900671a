#!/usr/bin/env bash
# Installs everything hbingest needs on a fresh Debian 12 machine: C++ libraries and tools from
# Debian's packages, the Python test peers into .venv, and the local stack's jars through Maven
# (stack/hbstack fetch). Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  librdkafka-dev libthrift-dev thrift-compiler libboost-dev libssl-dev
  libspdlog-dev libfmt-dev libyaml-cpp-dev libgtest-dev libgmock-dev libsimdjson-dev libxxhash-dev
  libbenchmark-dev libsystemd-dev libcpp-httplib-dev nlohmann-json3-dev libcli11-dev prometheus-cpp-dev
  libavro-dev libprotobuf-dev libprotoc-dev protobuf-compiler libcurl4-openssl-dev
  libsasl2-dev libsasl2-modules-gssapi-mit libkrb5-dev krb5-user krb5-kdc krb5-admin-server libfaketime
  prometheus systemd python3 python3-venv maven curl stunnel4 openssl strace
)
# clang is optional: it builds the libFuzzer targets; clang-format and clang-tidy check house style.
# valgrind is bench/cpu_path_instructions.sh's instruction counter.
OPTIONAL_PACKAGES=(clang libclang-rt-14-dev clang-format clang-tidy valgrind)

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}" "${OPTIONAL_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# A JDK, not only a JRE: hbstack compiles its region admin tool (stack/tools) with javac.
if ! command -v javac >/dev/null 2>&1 || ! java -version 2>&1 | grep -qE 'version "(1[7-9]|2[0-9])'; then
  missing+=(openjdk-17-jdk-headless)
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { echo "install-deps: apt-get install failed for: ${missing[*]}" >&2; exit 1; }
else
  echo "install-deps: Debian packages present"
fi

# Python peers for tests (confluent-kafka, happybase, thrift) and the stack's probes.
stack/hbstack fetch

# Toxiproxy (Shopify's fault-injection proxy) for the `faults` test tier: a Go program, installed
# pinned from the Go module proxy into .tools/bin. Go comes from the machine or Debian's golang-go.
TOXIPROXY_VERSION=v2.5.0
# (`go install` builds report their version as "git", so a marker file records what was installed.)
if [ ! -x .tools/bin/toxiproxy-server ] || [ "$(cat .tools/toxiproxy.version 2>/dev/null)" != "$TOXIPROXY_VERSION" ]; then
  if ! command -v go >/dev/null 2>&1; then
    if [ -x /usr/local/go/bin/go ]; then export PATH="$PATH:/usr/local/go/bin"; else
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends golang-go >/dev/null
    fi
  fi
  echo "install-deps: toxiproxy $TOXIPROXY_VERSION from the Go module proxy"
  mkdir -p .tools/bin
  GOBIN="$PWD/.tools/gobin" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"
  mv .tools/gobin/server .tools/bin/toxiproxy-server
  rmdir .tools/gobin
  echo "$TOXIPROXY_VERSION" > .tools/toxiproxy.version
fi
