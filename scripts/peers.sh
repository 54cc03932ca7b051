#!/usr/bin/env bash
# Builds the real peers that Trellis's integration tests talk to, from their Go
# modules at pinned versions, into a cache outside the repository:
#
#   ${TRELLIS_PEERS_DIR:-$HOME/.cache/trellis-peers}/bin/{tofu,minio,fake-gcs-server,opa,helm,
#     go-tfe.test,terraform-provider-null,toxiproxy-server}
#
# Usage:
#   scripts/peers.sh [tofu|minio|fake-gcs-server|opa|helm|go-tfe|null-provider|toxiproxy|all]...   build (default: all)
#   scripts/peers.sh --print-dir                           print the bin dir and exit
#   scripts/peers.sh --help
#
# Each peer has a stamp (<dir>/stamps/<peer>) recording what it was built from;
# a peer whose binary exists and whose stamp matches the pin below is not
# rebuilt, so a second run takes well under a second.
#
# Everything Go writes (GOPATH, GOMODCACHE, GOCACHE, copied sources) lives under
# the peers dir; nothing lands in the repository. Builds run under
# `nice -n ${TRELLIS_PEERS_NICE:-10}`. Needs Go (from PATH, $GO, or
# /usr/local/go/bin/go) able to reach a Go module proxy the first time.
#
# Environment:
#   TRELLIS_PEERS_DIR   cache root (default $HOME/.cache/trellis-peers)
#   TRELLIS_PEERS_NICE  niceness of the go commands (default 10)
#   GO                  the go command to use
set -euo pipefail

# ---------------------------------------------------------------------------
# Pins. Changing a version (or a build recipe) makes that peer rebuild.
# ---------------------------------------------------------------------------
PEERS=(tofu minio fake-gcs-server opa helm go-tfe null-provider toxiproxy)

# OpenTofu CLI. Its go.mod has a `replace` (hcl), so `go install mod@version`
# refuses it: it is built from a writable copy of the module source instead.
TOFU_MODULE=github.com/opentofu/opentofu
TOFU_VERSION=v1.12.6
TOFU_PACKAGE=cmd/tofu
# The same flag as OpenTofu's release builds: without it `tofu version` says
# "v1.12.6-dev".
TOFU_LDFLAGS="-X github.com/opentofu/opentofu/version.dev=no"

# MinIO server. Its RELEASE.* tags are not semver, so the module proxy serves
# commits only as pseudo-versions; this is the newest it serves (commit
# 7aac2a2c5b7c of 2026-02-12). cmd.Version/ReleaseTag stay "DEVELOPMENT.GOGET":
# a real release time would make the server check for updates over the network
# at start-up.
MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_PACKAGE=
MINIO_LDFLAGS="-X github.com/minio/minio/cmd.CommitID=7aac2a2c5b7c -X github.com/minio/minio/cmd.ShortCommitID=7aac2a2c5b7c"

# fake-gcs-server (GCS JSON/XML API emulator).
FAKE_GCS_MODULE=github.com/fsouza/fake-gcs-server
FAKE_GCS_VERSION=v1.56.1
FAKE_GCS_PACKAGE=
FAKE_GCS_LDFLAGS=""

# Open Policy Agent, the engine the agent evaluates policies with (issue 15).
OPA_MODULE=github.com/open-policy-agent/opa
OPA_VERSION=v1.22.2
OPA_PACKAGE=
OPA_LDFLAGS="-X github.com/open-policy-agent/opa/v1/version.Version=1.22.2"

# Helm, which lints and renders the chart in deploy/helm/trellis (issue 18).
HELM_MODULE=helm.sh/helm/v4
HELM_VERSION=v4.3.1
HELM_PACKAGE=cmd/helm
HELM_LDFLAGS="-X helm.sh/helm/v4/internal/version.version=v4.3.1"

# Toxiproxy, the TCP proxy the fault scenarios cut, slow and reset links with (issue 30):
# its server, installed as `bin/toxiproxy-server`, driven over its HTTP API by
# @trellis/testkit's fault harness.
TOXIPROXY_MODULE=github.com/Shopify/toxiproxy/v2
TOXIPROXY_VERSION=v2.5.0
TOXIPROXY_PACKAGE=cmd/server
TOXIPROXY_LDFLAGS="-X github.com/Shopify/toxiproxy/v2.Version=2.5.0"

# go-tfe's own integration tests (docs/terraform-cloud.md): the version OpenTofu v1.12.6 pins in
# its go.mod, fetched into the peers cache and compiled into one test binary, `bin/go-tfe.test`,
# run as `go-tfe.test -test.run 'TestWorkspaces|TestStateVersions|TestVariables'` against
# TFE_ADDRESS and TFE_TOKEN. Its source never enters the repository.
# Its source (with the test fixtures) stays in $PEERS_DIR/src/go-tfe, where the tests must run.
GO_TFE_MODULE=github.com/hashicorp/go-tfe
GO_TFE_VERSION=v1.101.0

# A tiny provider of Trellis's own (scripts/test-provider: `null_resource`, as hashicorp/null has),
# so configurations that need a provider run offline: the registry's and the provider mirror's
# tests publish it, and go-tfe's run tests install it as hashicorp/null. Its version is the digest
# of its source, so an edit rebuilds it.
NULL_PROVIDER_SOURCE="$(cd "$(dirname "$0")" && pwd)/test-provider"
NULL_PROVIDER_VERSION=$(cat "$NULL_PROVIDER_SOURCE"/go.mod "$NULL_PROVIDER_SOURCE"/go.sum "$NULL_PROVIDER_SOURCE"/*.go | sha256sum | cut -c1-16)

# Bump to force every peer to rebuild when the way they are built changes.
RECIPE_REVISION=1
# go-tfe's recipe has its own revision, so changing it rebuilds only go-tfe.
GO_TFE_RECIPE=2

# ---------------------------------------------------------------------------

PROG="scripts/peers.sh"
PEERS_DIR="${TRELLIS_PEERS_DIR:-$HOME/.cache/trellis-peers}"
BIN_DIR="$PEERS_DIR/bin"
STAMP_DIR="$PEERS_DIR/stamps"
NICE_LEVEL="${TRELLIS_PEERS_NICE:-10}"

DIED=0
die() {
	echo "$PROG: error: $*" >&2
	DIED=1
	exit 1
}
log() { echo "$PROG: $*" >&2; }

usage() {
	cat <<EOF
usage: $PROG [tofu|minio|fake-gcs-server|opa|helm|go-tfe|null-provider|toxiproxy|all]...   build the peers (default: all)
       $PROG --print-dir                           print the bin dir
Builds pinned test peers into $BIN_DIR (override the root with TRELLIS_PEERS_DIR).
EOF
}

# Sets MOD, VER, PKG, LDFLAGS for a peer name.
peer_spec() {
	case "$1" in
	tofu) MOD=$TOFU_MODULE VER=$TOFU_VERSION PKG=$TOFU_PACKAGE LDFLAGS=$TOFU_LDFLAGS ;;
	minio) MOD=$MINIO_MODULE VER=$MINIO_VERSION PKG=$MINIO_PACKAGE LDFLAGS=$MINIO_LDFLAGS ;;
	fake-gcs-server) MOD=$FAKE_GCS_MODULE VER=$FAKE_GCS_VERSION PKG=$FAKE_GCS_PACKAGE LDFLAGS=$FAKE_GCS_LDFLAGS ;;
	opa) MOD=$OPA_MODULE VER=$OPA_VERSION PKG=$OPA_PACKAGE LDFLAGS=$OPA_LDFLAGS ;;
	helm) MOD=$HELM_MODULE VER=$HELM_VERSION PKG=$HELM_PACKAGE LDFLAGS=$HELM_LDFLAGS ;;
	go-tfe) MOD=$GO_TFE_MODULE VER=$GO_TFE_VERSION PKG= LDFLAGS="recipe=$GO_TFE_RECIPE" ;;
	null-provider) MOD=trellis.test/terraform-provider-null VER=$NULL_PROVIDER_VERSION PKG= LDFLAGS= ;;
	toxiproxy) MOD=$TOXIPROXY_MODULE VER=$TOXIPROXY_VERSION PKG=$TOXIPROXY_PACKAGE LDFLAGS=$TOXIPROXY_LDFLAGS ;;
	*) die "unknown peer '$1' (expected one of: ${PEERS[*]}, all)" ;;
	esac
}

# What a binary was built from; the stamp holds exactly this line.
recipe() {
	echo "rev=$RECIPE_REVISION $MOD@$VER pkg=${PKG:-.} ldflags=-s -w $LDFLAGS cgo=0 trimpath"
}

# The file a peer's build leaves in the bin dir.
binary_of() {
	case $1 in
	go-tfe) echo "$BIN_DIR/go-tfe.test" ;;
	null-provider) echo "$BIN_DIR/terraform-provider-null" ;;
	toxiproxy) echo "$BIN_DIR/toxiproxy-server" ;;
	*) echo "$BIN_DIR/$1" ;;
	esac
}

up_to_date() {
	local name=$1
	[[ -x "$(binary_of "$name")" && -f "$STAMP_DIR/$name" ]] &&
		[[ "$(cat "$STAMP_DIR/$name")" == "$(recipe)" ]]
}

# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------
WANT=()
for arg in "$@"; do
	case "$arg" in
	--print-dir)
		echo "$BIN_DIR"
		exit 0
		;;
	-h | --help)
		usage
		exit 0
		;;
	all) WANT+=("${PEERS[@]}") ;;
	tofu | minio | fake-gcs-server | opa | helm | go-tfe | null-provider | toxiproxy) WANT+=("$arg") ;;
	*)
		usage >&2
		die "unknown argument '$arg'"
		;;
	esac
done
[[ ${#WANT[@]} -gt 0 ]] || WANT=("${PEERS[@]}")
# Drop duplicates, keep order.
declare -A seen=()
TARGETS=()
for p in "${WANT[@]}"; do
	[[ -n "${seen[$p]:-}" ]] || TARGETS+=("$p")
	seen[$p]=1
done

# Fast path: everything asked for is already built. No Go needed.
all_fresh=1
for p in "${TARGETS[@]}"; do
	peer_spec "$p"
	up_to_date "$p" || all_fresh=0
done
if [[ $all_fresh == 1 ]]; then
	for p in "${TARGETS[@]}"; do
		peer_spec "$p"
		echo "$p: $(binary_of "$p") ($MOD@$VER)"
	done
	exit 0
fi

# ---------------------------------------------------------------------------
# Go environment, all inside the peers dir
# ---------------------------------------------------------------------------
if [[ -z "${GO:-}" ]]; then
	GO=$(command -v go || true)
	[[ -n "$GO" ]] || GO=/usr/local/go/bin/go
fi
[[ -x "$GO" ]] || command -v "$GO" >/dev/null 2>&1 ||
	die "no Go toolchain found (looked on PATH and at /usr/local/go/bin/go; set GO=/path/to/go)"

mkdir -p "$BIN_DIR" "$STAMP_DIR" "$PEERS_DIR/tmp" || die "cannot create $PEERS_DIR"

export GOPATH="$PEERS_DIR/go"
export GOMODCACHE="$PEERS_DIR/go/pkg/mod"
export GOCACHE="$PEERS_DIR/go-build"
export CGO_ENABLED=0
# -modcacherw: module cache files stay writable, so `rm -rf` of the peers dir works.
# -buildvcs=false: the copied sources are not a VCS checkout.
BASE_GOFLAGS="-modcacherw -buildvcs=false"
export GOFLAGS="$BASE_GOFLAGS"
unset GOBIN GOWORK GOOS GOARCH

gocmd() { nice -n "$NICE_LEVEL" "$GO" "$@"; }

# One build at a time per peers dir (tests may call this concurrently).
exec 9>"$PEERS_DIR/.lock"
if command -v flock >/dev/null 2>&1; then
	if ! flock -n 9; then
		log "another peers.sh holds $PEERS_DIR/.lock; waiting for it"
		flock 9
	fi
fi

WORK=""
CURRENT=""
cleanup() {
	local rc=$?
	if [[ -n "$WORK" && -d "$WORK" ]]; then
		chmod -R u+w "$WORK" 2>/dev/null || true
		rm -rf "$WORK"
	fi
	if [[ $rc -ne 0 && -n "$CURRENT" && $DIED == 0 ]]; then
		echo "$PROG: error: building $CURRENT failed (exit $rc); see the go output above." >&2
		echo "$PROG: the Go module proxy must be reachable for a first build; Go is $("$GO" version 2>/dev/null || echo "$GO")." >&2
	fi
	exit $rc
}
trap cleanup EXIT

build_peer() {
	local name=$1 start=$SECONDS
	CURRENT=$name
	peer_spec "$name"
	local target="$MOD${PKG:+/$PKG}"
	WORK=$(mktemp -d "$PEERS_DIR/tmp/$name.XXXXXX")
	local out
	out="$WORK/$(basename "$(binary_of "$name")")"
	local ldflags="-s -w${LDFLAGS:+ $LDFLAGS}"

	log "building $name from $MOD@$VER (this can take minutes)"
	if [[ $name == null-provider ]]; then
		# Trellis's own source, with its go.sum: built where it is.
		(cd "$NULL_PROVIDER_SOURCE" && gocmd build -trimpath -ldflags="$ldflags" -o "$WORK/terraform-provider-null" .)
		[[ -x "$WORK/terraform-provider-null" ]] || die "the build of the test provider produced no binary"
		mv -f "$WORK/terraform-provider-null" "$BIN_DIR/terraform-provider-null"
		recipe >"$STAMP_DIR/$name"
		chmod -R u+w "$WORK" && rm -rf "$WORK"
		WORK=""
		CURRENT=""
		log "built the test provider in $((SECONDS - start))s"
		return
	fi
	local info dir gomod
	if ! info=$(gocmd mod download -json "$MOD@$VER"); then
		# The reason is in the JSON's "Error" field, not on stderr.
		die "could not download $MOD@$VER: $(sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")"
	fi
	dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
	gomod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p' <<<"$info")
	[[ -n "$dir" && -d "$dir" && -f "$gomod" ]] ||
		die "unexpected 'go mod download -json $MOD@$VER' output: $info"

	if [[ $name == go-tfe ]]; then
		# A library: its integration tests compiled from a writable copy of the module's source,
		# kept as $PEERS_DIR/src/go-tfe (the tests read their fixtures relative to it: run them there).
		local src="$PEERS_DIR/src/go-tfe"
		chmod -R u+w "$src" 2>/dev/null || true
		rm -rf "$src"
		mkdir -p "$PEERS_DIR/src"
		cp -R "$dir" "$src"
		chmod -R u+w "$src"
		(
			cd "$src"
			GOFLAGS="$BASE_GOFLAGS -mod=mod" gocmd test -c -trimpath -o "$WORK/go-tfe.test" .
		)
		[[ -x "$WORK/go-tfe.test" ]] || die "the build of go-tfe's tests produced no binary"
		mv -f "$WORK/go-tfe.test" "$BIN_DIR/go-tfe.test"
		recipe >"$STAMP_DIR/$name"
		chmod -R u+w "$WORK" && rm -rf "$WORK"
		WORK=""
		CURRENT=""
		log "built go-tfe's integration tests in $((SECONDS - start))s"
		return
	fi

	# `go install mod@version` refuses modules whose go.mod has replace or
	# exclude directives; build those from a writable copy of the source.
	local modjson
	modjson=$(gocmd mod edit -json "$gomod") || die "cannot read $gomod"
	if grep -qE '"(Replace|Exclude)": \[' <<<"$modjson"; then
		log "$MOD has replace/exclude directives: building from a copy of its source"
		local src="$WORK/src"
		cp -R "$dir" "$src"
		chmod -R u+w "$src"
		(
			cd "$src"
			GOFLAGS="$BASE_GOFLAGS -mod=mod" gocmd build -trimpath -ldflags="$ldflags" -o "$out" "./${PKG:-.}"
		)
	else
		GOBIN="$WORK/gobin" gocmd install -trimpath -ldflags="$ldflags" "$target@$VER"
		mv "$WORK/gobin/$(basename "$target")" "$out"
	fi

	[[ -x "$out" ]] || die "the build of $name produced no binary"
	# Smoke check before it replaces a working binary.
	case "$name" in
	tofu) "$out" version >/dev/null ;;
	minio) "$out" --version >/dev/null ;;
	opa) "$out" version >/dev/null ;;
	helm) "$out" version --short >/dev/null ;;
	toxiproxy) "$out" -version >/dev/null ;;
	esac

	mv -f "$out" "$(binary_of "$name")"
	recipe >"$STAMP_DIR/$name"
	chmod -R u+w "$WORK" && rm -rf "$WORK"
	WORK=""
	CURRENT=""
	log "built $name in $((SECONDS - start))s"
}

for p in "${TARGETS[@]}"; do
	peer_spec "$p"
	if up_to_date "$p"; then
		log "$p is up to date ($MOD@$VER)"
	else
		build_peer "$p"
	fi
done

for p in "${TARGETS[@]}"; do
	peer_spec "$p"
	echo "$p: $(binary_of "$p") ($MOD@$VER)"
done
