#!/usr/bin/env bash
# The steps of ssgen's pull-request review action (action.yml), kept here
# so that they can be run and tested outside GitHub Actions.
#
# For each schema it runs "ssgen check" (the generated code is fresh) and
# "ssgen breaking" against the base revision, both with
# --format github-actions so that problems annotate the pull request, and
# writes "ssgen doc" of every schema the change touches to a Markdown file.
# It exits 1 when a check fails or a change breaks (warnings pass), 2 on
# bad usage, an invalid schema or an unknown revision, 0 otherwise. Run it from the root of the caller's repository.
#
# Environment:
#   SSGEN_BASE      the revision to compare with (required), e.g. origin/main
#   SSGEN_SCHEMAS   schema files, space-separated (default: every tracked
#                   file named ssgen.yaml outside testdata/ directories)
#   SSGEN           how to run ssgen (default: "go tool ssgen" when the
#                   module pins it with a tool directive, else an ssgen
#                   installed with go install at SSGEN_VERSION)
#   SSGEN_VERSION   the version to install when SSGEN is unset and the
#                   module has no tool directive (default: the version of
#                   github.com/ssgen/ssgen the module requires)
#   SSGEN_DOC_FILE  where to write the Markdown of the changed schemas
#                   (default: none is written)
set -uo pipefail

fail() { echo "ssgen-review: $*" >&2; exit 2; }

[ -n "${SSGEN_BASE:-}" ] || fail "SSGEN_BASE is not set (the revision to compare with)"
case "$SSGEN_BASE" in -*) fail "SSGEN_BASE=$SSGEN_BASE: a revision does not start with '-'" ;; esac
git rev-parse --verify --quiet "${SSGEN_BASE}^{commit}" >/dev/null ||
  fail "SSGEN_BASE=$SSGEN_BASE is not a revision of this repository (fetch it: actions/checkout with fetch-depth: 0)"

# How to run ssgen: as given, the module's pinned tool, or installed.
if [ -z "${SSGEN:-}" ]; then
  if go tool -n ssgen >/dev/null 2>&1; then
    SSGEN="go tool ssgen"
  else
    version="${SSGEN_VERSION:-}"
    if [ -z "$version" ]; then
      version=$(go list -m -f '{{.Version}}' github.com/ssgen/ssgen 2>/dev/null) ||
        fail "the module neither pins ssgen with a tool directive nor requires github.com/ssgen/ssgen; set the action's version input"
    fi
    echo "::group::go install github.com/ssgen/ssgen/cmd/ssgen@$version"
    GOBIN="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ssgen-bin" go install "github.com/ssgen/ssgen/cmd/ssgen@$version" ||
      fail "go install github.com/ssgen/ssgen/cmd/ssgen@$version failed"
    echo "::endgroup::"
    SSGEN="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ssgen-bin/ssgen"
  fi
fi
read -r -a ssgen <<<"$SSGEN"

if [ -n "${SSGEN_SCHEMAS:-}" ]; then
  read -r -a schemas <<<"$SSGEN_SCHEMAS"
else
  mapfile -t schemas < <(git ls-files -- '*ssgen.yaml' | grep -v '/testdata/' | grep -v '^testdata/')
fi
[ "${#schemas[@]}" -gt 0 ] || { echo "ssgen-review: no ssgen.yaml in this repository; nothing to review"; exit 0; }

status=0
doc=""
for s in "${schemas[@]}"; do
  # A pull request chooses its file names: one starting with '-' must not
  # read as a flag of ssgen.
  case "$s" in -*) s="./$s" ;; esac
  [ -f "$s" ] || fail "$s: no such schema file"
  echo "::group::ssgen check --schema $s"
  "${ssgen[@]}" check --format github-actions --schema "$s"
  rc=$?
  echo "::endgroup::"
  if [ "$rc" -gt "$status" ]; then status=$rc; fi

  echo "::group::ssgen breaking --against $SSGEN_BASE $s"
  "${ssgen[@]}" breaking --format github-actions --against "$SSGEN_BASE" "$s"
  rc=$?
  echo "::endgroup::"
  if [ "$rc" -gt "$status" ]; then status=$rc; fi

  # The Markdown of every schema this change touches, for the reviewers.
  if [ -n "${SSGEN_DOC_FILE:-}" ] && ! git diff --quiet "$SSGEN_BASE" -- "$s"; then
    if md=$("${ssgen[@]}" doc "$s"); then
      name=$(printf '%s' "$s" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g')
      doc+=$'<details open><summary><code>'"$name"$'</code></summary>\n\n'"$md"$'\n\n</details>\n\n'
    else
      status=2
    fi
  fi
done

if [ -n "${SSGEN_DOC_FILE:-}" ]; then
  if [ -n "$doc" ]; then
    printf '<!-- ssgen-review -->\n# ssgen: schemas changed in this pull request\n\n%s' "$doc" >"$SSGEN_DOC_FILE"
  else
    : >"$SSGEN_DOC_FILE"
  fi
fi
exit "$status"
