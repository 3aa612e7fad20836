#!/usr/bin/env bash
# Build the MinIO server from source, fetched from the Go module proxy only.
#
# Usage: services/minio/build.sh [VERSION] [OUTPUT]
#   VERSION  MinIO release tag, e.g. RELEASE.2025-09-07T16-13-09Z
#            (default: $MINIO_VERSION, else MINIO_VERSION from versions.env)
#   OUTPUT   path of the binary to write
#            (default: $MINIO_BIN, else $LAKEHOUSE_CACHE/minio/VERSION/minio)
#
# Environment:
#   LAKEHOUSE_CACHE  cache root outside the repo (default $HOME/.cache/lakehouse);
#                    Go module cache, build cache and work copy live under it.
#   MINIO_COMMIT     full git commit of VERSION, for releases not in the table below.
#   GO               go binary (default: `go` on PATH, else /usr/local/go/bin/go).
#   GOPROXY          default here is https://proxy.golang.org with no `direct`
#                    fallback, so nothing is ever cloned from GitHub.
#
# Why the table: MinIO tags are not semver (RELEASE.<timestamp>), so the proxy
# knows a release only as a pseudo-version v0.0.0-<commit time>-<12 hex>. The
# proxy reachable here refuses queries by tag or by bare commit hash (403 "This
# module version is not available"), but serves the exact pseudo-version. A
# MinIO release tag is named after its commit time (UTC), so the pseudo-version
# is derived from the tag plus the commit hash; the proxy's .info is then
# checked to report that same commit and time.
#
# Idempotent: if OUTPUT exists and `OUTPUT --version` reports VERSION, it exits 0.
set -euo pipefail

MODULE=github.com/minio/minio
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

log()  { printf '[minio-build] %s\n' "$*" >&2; }
die()  { printf '[minio-build] ERROR: %s\n' "$*" >&2; exit 1; }
STEP="start"
trap 'rc=$?; printf "[minio-build] ERROR: step \"%s\" failed (exit %s)\n" "$STEP" "$rc" >&2' ERR

# Release tag -> full commit hash (verified against the module proxy's .info).
known_commit() {
  case "$1" in
    RELEASE.2025-09-07T16-13-09Z) echo 07c3a429bfed433e49018cb0f78a52145d4bedeb ;;
    *) return 1 ;;
  esac
}

# --- arguments -------------------------------------------------------------
VERSION="${1:-${MINIO_VERSION:-}}"
if [[ -z "$VERSION" && -f "$REPO_ROOT/versions.env" ]]; then
  VERSION="$(sed -n 's/^MINIO_VERSION=//p' "$REPO_ROOT/versions.env" | tail -n1 | tr -d '"'"'"' \r')"
fi
[[ -n "$VERSION" ]] || die "no MinIO version given (argument 1, \$MINIO_VERSION or versions.env)"
[[ "$VERSION" =~ ^RELEASE\.([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2})-([0-9]{2})-([0-9]{2})Z$ ]] \
  || die "version '$VERSION' is not a MinIO release tag like RELEASE.2025-09-07T16-13-09Z"
Y=${BASH_REMATCH[1]} Mo=${BASH_REMATCH[2]} D=${BASH_REMATCH[3]}
H=${BASH_REMATCH[4]} Mi=${BASH_REMATCH[5]} S=${BASH_REMATCH[6]}
TAG_TIME="$Y-$Mo-${D}T$H:$Mi:${S}Z"          # RFC3339, as MinIO's cmd.Version

LAKEHOUSE_CACHE="${LAKEHOUSE_CACHE:-$HOME/.cache/lakehouse}"
OUT="${2:-${MINIO_BIN:-$LAKEHOUSE_CACHE/minio/$VERSION/minio}}"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac

# --- idempotence -----------------------------------------------------------
reports_version() {  # does binary $1 say it is release $VERSION?
  local v; v="$("$1" --version 2>/dev/null || true)"
  # The first word is the binary's own file name, which need not be "minio".
  [[ "$v" == *" version $VERSION "* ]]
}
if [[ -x "$OUT" ]] && reports_version "$OUT"; then
  log "already built: $OUT ($VERSION), nothing to do"
  exit 0
fi

# --- Go toolchain ----------------------------------------------------------
STEP="find go"
if [[ -z "${GO:-}" ]]; then
  if command -v go >/dev/null 2>&1; then GO=go
  elif [[ -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go
  else die "no Go toolchain: install Go (>= 1.24) or set GO=/path/to/go"; fi
fi
"$GO" version >/dev/null 2>&1 || die "'$GO version' failed"
log "using $("$GO" version)"

export GOMODCACHE="$LAKEHOUSE_CACHE/go/mod"
export GOCACHE="$LAKEHOUSE_CACHE/go/build"
export GOPROXY="${GOPROXY:-https://proxy.golang.org}"
export GOFLAGS="-modcacherw -buildvcs=false"   # cache stays deletable; no VCS stamping
export CGO_ENABLED=0                            # as upstream's release builds
mkdir -p "$GOMODCACHE" "$GOCACHE"
log "cache: $LAKEHOUSE_CACHE/go (GOPROXY=$GOPROXY)"

# --- resolve the release to a module version --------------------------------
STEP="resolve $VERSION on the Go module proxy"
COMMIT="${MINIO_COMMIT:-$(known_commit "$VERSION" || true)}"
MODVER=""
if [[ -n "$COMMIT" ]]; then
  [[ "$COMMIT" =~ ^[0-9a-f]{40}$ ]] || die "MINIO_COMMIT must be a full 40-hex commit, got '$COMMIT'"
  MODVER="v0.0.0-$Y$Mo$D$H$Mi$S-${COMMIT:0:12}"
else
  log "no commit known for $VERSION; asking the proxy for the tag itself"
  if ! INFO="$("$GO" list -m -json "$MODULE@$VERSION" 2>&1)"; then
    die "the module proxy cannot resolve tag $VERSION:
$INFO
  -> set MINIO_COMMIT=<full commit hash of $VERSION> (or add it to known_commit in $0)"
  fi
  MODVER="$(sed -n 's/^[[:space:]]*"Version": "\(.*\)",$/\1/p' <<<"$INFO" | head -n1)"
fi
log "resolving $MODULE@$MODVER"
if ! DL="$("$GO" mod download -json "$MODULE@$MODVER" 2>&1)"; then
  die "go mod download $MODULE@$MODVER failed:
$DL"
fi
field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" <<<"$DL" | head -n1; }
SRC="$(field Dir)"; HASH="$(field Hash)"
[[ -n "$SRC" && -f "$SRC/go.mod" ]] || die "module download gave no source dir:
$DL"
[[ -z "$COMMIT" || -z "$HASH" || "$HASH" == "$COMMIT" ]] \
  || die "proxy reports commit $HASH for $MODVER, expected $COMMIT"
COMMIT="${HASH:-$COMMIT}"
[[ -n "$COMMIT" ]] || COMMIT="${MODVER##*-}"
log "source: $SRC (commit $COMMIT)"

# --- build in a private, writable copy of the module -------------------------
STEP="prepare work copy"
WORK="$LAKEHOUSE_CACHE/minio/src-$MODVER"
rm -rf "$WORK"; mkdir -p "$(dirname "$WORK")"
cp -R "$SRC" "$WORK"; chmod -R u+w "$WORK"

STEP="download build dependencies"
log "downloading dependencies (about 240 MB of module zips on a cold cache)"
(cd "$WORK" && "$GO" list -deps -tags kqueue . >/dev/null) \
  || die "fetching MinIO's dependencies from $GOPROXY failed (see go's message above)"

STEP="go build"
LDFLAGS="-s -w"
LDFLAGS+=" -X $MODULE/cmd.Version=$TAG_TIME"
LDFLAGS+=" -X $MODULE/cmd.ReleaseTag=$VERSION"
LDFLAGS+=" -X $MODULE/cmd.CommitID=$COMMIT"
LDFLAGS+=" -X $MODULE/cmd.ShortCommitID=${COMMIT:0:12}"
LDFLAGS+=" -X $MODULE/cmd.CopyrightYear=$Y"
mkdir -p "$(dirname "$OUT")"
TMP_OUT="$OUT.tmp.$$"
log "compiling (a cold build takes ~4 min on 2 cores) -> $OUT"
start=$SECONDS
if ! (cd "$WORK" && "$GO" build -trimpath -tags kqueue -ldflags "$LDFLAGS" -o "$TMP_OUT" .); then
  rm -f "$TMP_OUT"
  die "go build of $MODULE@$MODVER failed (see compiler output above)"
fi
mv -f "$TMP_OUT" "$OUT"
rm -rf "$WORK"

STEP="verify binary"
reports_version "$OUT" \
  || die "built $OUT but '--version' does not report $VERSION"
ver="$("$OUT" --version)"
log "built $OUT in $((SECONDS - start))s: ${ver%%$'\n'*}"
