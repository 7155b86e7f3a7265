#!/usr/bin/env bash
# The pipeline for a Terraform-only repository: no Node.js and no npm. The `gpurental` command is
# the standalone executable of your team's release (the same file is the provider), downloaded
# once per version and checked against the release's sums; Terraform installs the provider from
# the release site as a network mirror. The GitHub Actions workflow
# (.github/workflows/gpurental-hcl.yml) runs exactly these stages, so they run on a laptop too:
#
#   ./hcl-pipeline.sh plan      init, plan into $PIPELINE_OUT/plan.bin, write plan.txt and report.md
#                               (gpurental plan-report); exit 2 when a gate of $PIPELINE_GATES trips
#   ./hcl-pipeline.sh comment   post report.md on the pull request, or update the one posted before
#   ./hcl-pipeline.sh apply     apply $PIPELINE_OUT/plan.bin, exactly that plan
#   ./hcl-pipeline.sh strays    what the organization has that the state does not hold; exit 2 if any
#
# Needs bash, curl, unzip, sha256sum (and jq for `comment`) and terraform 1.5 or later.
# Credentials come from the environment only, never from Terraform variables, which a saved plan
# keeps in clear text:
#   GPURENTAL_BASE_URL, GPURENTAL_TOKEN (a team API key), GPURENTAL_ORG_ID   provider and commands
#   PG_CONN_STR                                                              the state (pg backend)
#   GPURENTAL_JOURNAL_URL                                                    the deploy journal (same database)
#   GITHUB_TOKEN                                                             `comment` only
#
# Settings:
#   GPURENTAL_RELEASE_SITE   where the team's release folder is served, e.g. https://tf.example.com
#   GPURENTAL_VERSION        the release to use, e.g. 0.1.0
#   PIPELINE_DIR           the Terraform configuration (default hcl)
#   PIPELINE_OUT           where plan.bin, plan.txt and report.md go (default ./pipeline-out)
#   PIPELINE_DESTROY       "true": plan to destroy everything the state holds
#   PIPELINE_GATES         gates of the plan report, e.g. "--fail-on disk-loss,refusal --max-burn-per-hour 40"
#   PIPELINE_LOCK_TIMEOUT  how long to wait for another run's state lock (default 10m)
#   PIPELINE_TOOLS         where the command and the CLI configuration are kept (default
#                          gpurental-pipeline in $RUNNER_TEMP, else $TMPDIR, else /tmp); cache it
#   TERRAFORM_BINARY_NAME  the terraform (or tofu) to run (default terraform)
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
}

die() {
  echo "hcl-pipeline.sh: $*" >&2
  exit 1
}

stage="${1:-}"
case "$stage" in
  plan | comment | apply | strays) ;;
  -h | --help | help)
    usage
    exit 0
    ;;
  *)
    usage >&2
    die "unknown stage \"$stage\": give plan, comment, apply or strays"
    ;;
esac

dir="$(cd "${PIPELINE_DIR:-hcl}" && pwd)" || die "PIPELINE_DIR ${PIPELINE_DIR:-hcl} is not a directory"
out="${PIPELINE_OUT:-pipeline-out}"
tools="${PIPELINE_TOOLS:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gpurental-pipeline}"
lock_timeout="${PIPELINE_LOCK_TIMEOUT:-10m}"
tf="${TERRAFORM_BINARY_NAME:-terraform}"

if [ "$stage" = comment ]; then
  report="$out/report.md"
  [ -f "$report" ] || die "no report at $report: run ./hcl-pipeline.sh plan first"
  for v in GITHUB_TOKEN GITHUB_REPOSITORY GITHUB_EVENT_PATH; do
    [ -n "${!v:-}" ] || die "$v is not set (GitHub Actions sets it; GITHUB_TOKEN comes from the workflow)"
  done
  command -v jq >/dev/null || die "jq is not on PATH"
  number="$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH")"
  [ -n "$number" ] || die "this run is not for a pull request: there is nothing to comment on"
  api="${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY"
  github() {
    curl -fsS -X "$1" "$2" -H "authorization: Bearer $GITHUB_TOKEN" \
      -H "accept: application/vnd.github+json" -H "x-github-api-version: 2022-11-28" "${@:3}"
  }
  # The report's first two lines (plan-report's marker and heading) find the comment posted before.
  head2="$(head -n 2 "$report")"
  earlier=""
  for page in $(seq 1 50); do
    comments="$(github GET "$api/issues/$number/comments?per_page=100&page=$page")" || die "cannot list the comments"
    earlier="$(jq -r --arg h "$head2" '[.[] | select((.body // "") | startswith($h + "\n"))][0].id // empty' <<<"$comments")"
    [ -n "$earlier" ] || [ "$(jq length <<<"$comments")" -lt 100 ] || continue
    break
  done
  body="$(jq -Rs '{body: .}' "$report")"
  if [ -n "$earlier" ]; then
    github PATCH "$api/issues/comments/$earlier" --data "$body" >/dev/null || die "cannot update the comment"
    echo "Updated the plan report (comment $earlier)."
  else
    github POST "$api/issues/$number/comments" --data "$body" >/dev/null || die "cannot post the comment"
    echo "Posted the plan report."
  fi
  exit 0
fi

command -v "$tf" >/dev/null || die "$tf is not on PATH: install Terraform 1.5 or later, or set TERRAFORM_BINARY_NAME"
[ -n "${GPURENTAL_TOKEN:+set}" ] || die "GPURENTAL_TOKEN is not set: give it from the CI's secret store (a team API key)"
site="${GPURENTAL_RELEASE_SITE:?set GPURENTAL_RELEASE_SITE to where the release folder is served}"
site="${site%/}"
version="${GPURENTAL_VERSION:?set GPURENTAL_VERSION to the release to use, e.g. 0.1.0}"

# The command, once per version: downloaded, checked against the release's sums, unpacked.
case "$(uname -s)_$(uname -m)" in
  Linux_x86_64) platform=linux_amd64 ;;
  Linux_aarch64 | Linux_arm64) platform=linux_arm64 ;;
  Darwin_x86_64) platform=darwin_amd64 ;;
  *) die "no gpurental command for $(uname -s) $(uname -m) in the release" ;;
esac
mkdir -p "$tools/$version"
gpurental="$tools/$version/gpurental"
if [ ! -x "$gpurental" ]; then
  zip="gpurental_${version}_${platform}.zip"
  sums="terraform-provider-gpurental_${version}_SHA256SUMS"
  (
    cd "$tools/$version"
    curl -fsSLO "$site/releases/$version/$zip" || die "cannot download $site/releases/$version/$zip"
    curl -fsSLO "$site/releases/$version/$sums" || die "cannot download the release's sums"
    sha256sum --check --ignore-missing --quiet "$sums" || die "$zip does not match the release's sums"
    unzip -o -q "$zip" gpurental && rm -f "$zip" "$sums"
  )
fi
# Its runtime unpacks once into a directory the workflow caches beside it.
export GPURENTAL_RUNTIME_DIR="${GPURENTAL_RUNTIME_DIR:-$tools/runtime}"
mkdir -p "$GPURENTAL_RUNTIME_DIR" && chmod 700 "$GPURENTAL_RUNTIME_DIR"

# Nothing is written into the home folder, no checkpoint calls; the provider from the site's mirror.
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0
cat >"$tools/terraform.rc" <<EOF
provider_installation {
  network_mirror {
    url     = "$site/mirror/"
    include = ["registry.terraform.io/gpurental/gpurental"]
  }
  direct {
    exclude = ["registry.terraform.io/gpurental/gpurental"]
  }
}
EOF
export TF_CLI_CONFIG_FILE="$tools/terraform.rc"

init() {
  "$tf" -chdir="$dir" init -input=false -no-color >&2
}

if [ "$stage" = strays ]; then
  init
  code=0
  "$gpurental" strays "$dir" || code=$?
  [ "$code" = 0 ] || [ "$code" = 2 ] || die "gpurental strays failed"
  exit "$code"
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"

if [ "$stage" = plan ]; then
  rm -f "$out/plan.bin" "$out/plan.txt" "$out/report.md" "$out/changes"
  init
  args=(-input=false -no-color -lock-timeout="$lock_timeout" -detailed-exitcode -out="$out/plan.bin")
  [ "${PIPELINE_DESTROY:-}" = true ] && args+=(-destroy)
  set +e
  "$tf" -chdir="$dir" plan "${args[@]}" | tee "$out/plan.txt"
  code=${PIPESTATUS[0]}
  set -e
  case "$code" in
    0) changes=false ;;
    2) changes=true ;;
    *) die "terraform plan failed" ;;
  esac
  echo "$changes" >"$out/changes"
  read -ra gates <<<"${PIPELINE_GATES:-}"
  gated=0
  "$gpurental" plan-report "$out/plan.bin" --dir "$dir" --output "$out/report.md" "${gates[@]}" || gated=$?
  [ "$gated" = 0 ] || [ "$gated" = 2 ] || die "gpurental plan-report failed"
  echo
  cat "$out/report.md"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "changes=$changes" >>"$GITHUB_OUTPUT"; fi
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$out/report.md" >>"$GITHUB_STEP_SUMMARY"; fi
  if [ "$gated" = 2 ]; then
    echo "hcl-pipeline.sh: a gate of the plan report tripped (PIPELINE_GATES=${PIPELINE_GATES:-}); see the report" >&2
    exit 2
  fi
  exit 0
fi

# apply
[ -f "$out/plan.bin" ] || die "no saved plan at $out/plan.bin: run ./hcl-pipeline.sh plan first"
if [ "$(cat "$out/changes" 2>/dev/null)" = false ]; then
  echo "The plan has no changes: nothing to apply."
  exit 0
fi
init
"$tf" -chdir="$dir" apply -input=false -no-color -lock-timeout="$lock_timeout" "$out/plan.bin"
