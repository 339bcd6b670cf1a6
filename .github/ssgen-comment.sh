#!/usr/bin/env bash
# Posts the Markdown of ssgen's review action (action.yml) as one comment
# on the pull request, or updates the comment it posted before: the last
# one that starts with the marker AND that this token's own identity
# wrote. Anyone may write a comment that starts with the marker; updating
# theirs would put the review under their name or let them hide it.
# Kept here, like ssgen-review.sh, so that it can be run and tested
# outside GitHub Actions.
#
# Environment:
#   SSGEN_DOC_FILE        the Markdown to post; it starts with the marker
#   SSGEN_PR              the pull request's number
#   GITHUB_REPOSITORY     owner/name (set by GitHub Actions)
#   GITHUB_TOKEN          the token that comments
#   GITHUB_API_URL        the REST API (set by GitHub Actions; default
#                         https://api.github.com)
#   SSGEN_COMMENT_AUTHOR  the login the token comments as when GET /user
#                         cannot tell, as for an installation token like
#                         the workflow's own (default github-actions[bot];
#                         a GitHub App's token comments as <app-slug>[bot])
#
# Needs curl and jq, both on GitHub's runners. Exits 0 once the comment is
# posted or updated, 1 when the API refuses (a fork's read-only token),
# 2 on bad usage.
set -uo pipefail

marker='<!-- ssgen-review -->'
fail() { echo "ssgen-comment: $*" >&2; exit 2; }

[ -s "${SSGEN_DOC_FILE:-}" ] || fail "SSGEN_DOC_FILE=${SSGEN_DOC_FILE:-} is not a non-empty file"
[ "$(head -c ${#marker} "$SSGEN_DOC_FILE")" = "$marker" ] || fail "$SSGEN_DOC_FILE does not start with $marker"
case "${SSGEN_PR:-}" in '' | *[!0-9]*) fail "SSGEN_PR=${SSGEN_PR:-} is not a pull request number" ;; esac
[[ "${GITHUB_REPOSITORY:-}" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || fail "GITHUB_REPOSITORY=${GITHUB_REPOSITORY:-} is not owner/name"
[ -n "${GITHUB_TOKEN:-}" ] || fail "GITHUB_TOKEN is not set"
for tool in curl jq; do
  command -v "$tool" >/dev/null || fail "$tool is not installed"
done
api="${GITHUB_API_URL:-https://api.github.com}"
repo="$GITHUB_REPOSITORY"

# api METHOD PATH [curl options]: the response body on stdout; fails on
# an HTTP error. The token goes in through a file descriptor, not argv,
# where other processes could read it.
api() {
  local method=$1 path=$2
  shift 2
  curl --silent --show-error --fail --max-time 60 -X "$method" \
    -H @<(printf 'Authorization: Bearer %s\n' "$GITHUB_TOKEN") \
    -H 'Accept: application/vnd.github+json' -H 'X-GitHub-Api-Version: 2022-11-28' \
    "$@" "$api$path"
}

# Who this token comments as: a user token says so; an installation token
# may not ask (403), and comments as its app's bot.
if ! login=$(api GET /user 2>/dev/null | jq -er '.login | strings'); then
  login="${SSGEN_COMMENT_AUTHOR:-github-actions[bot]}"
fi

# The last comment of ours that starts with the marker, over every page.
id=""
for ((page = 1; page <= 100; page++)); do
  comments=$(api GET "/repos/$repo/issues/$SSGEN_PR/comments?per_page=100&page=$page") || exit 1
  mine=$(jq -r --arg login "$login" --arg marker "$marker" \
    '[.[] | select(.user.login == $login and ((.body // "") | startswith($marker))) | .id] | last // empty' <<<"$comments") || exit 1
  [ -n "$mine" ] && id=$mine
  [ "$(jq length <<<"$comments")" -lt 100 ] && break
done
[[ -z "$id" || "$id" =~ ^[0-9]+$ ]] || fail "comment id $id is not a number"

body=$(jq -Rs '{body: .}' <"$SSGEN_DOC_FILE") || exit 1
if [ -n "$id" ]; then
  api PATCH "/repos/$repo/issues/comments/$id" --data-binary @- <<<"$body" >/dev/null || exit 1
  echo "ssgen-comment: updated comment $id of $login"
else
  api POST "/repos/$repo/issues/$SSGEN_PR/comments" --data-binary @- <<<"$body" >/dev/null || exit 1
  echo "ssgen-comment: commented as $login"
fi
