#!/usr/bin/env bash
# The infrastructure pipeline, stage by stage. The CI workflow (.github/workflows/gpurental.yml)
# runs exactly these stages and nothing else of its own, so what it does can be run, and tried,
# on a laptop:
#
#   ./pipeline.sh plan      synthesize (a CDKTF project), init, plan into $PIPELINE_OUT/plan.bin, and
#                           write plan.txt (the plan) and report.md (gpurental plan-report: what the
#                           change costs); exit 2 when a gate of $PIPELINE_GATES trips
#   ./pipeline.sh comment   post report.md on the pull request, or update the comment posted before
#   ./pipeline.sh apply     apply $PIPELINE_OUT/plan.bin, exactly that plan
#
# Run it from the repository's root, after `npm ci` (gpurental, and for CDKTF cdktf-cli, are in
# the repository's package.json). Credentials come from the environment only, never from
# Terraform or CDKTF variables, which a saved plan keeps in clear text:
#   GPURENTAL_BASE_URL, GPURENTAL_TOKEN (a team API key), GPURENTAL_ORG_ID   provider and report
#   PG_CONN_STR                                                              the state (pg backend)
#   GPURENTAL_JOURNAL_URL                                                    the deploy journal (same database)
#   GITHUB_TOKEN                                                             `comment` only
#
# Settings, all optional:
#   PIPELINE_DIR           the CDKTF project (with cdktf.json) or Terraform configuration (default .)
#   PIPELINE_STACK         the stack to plan, when a CDKTF project has several
#   PIPELINE_OUT           where plan.bin, plan.txt and report.md go (default ./pipeline-out)
#   PIPELINE_DESTROY       "true": plan to destroy everything the state holds
#   PIPELINE_GATES         gates of the plan report, e.g. "--fail-on disk-loss,refusal --max-burn-per-hour 40"
#   PIPELINE_LOCK_TIMEOUT  how long to wait for another run's state lock (default 10m)
#   PIPELINE_TOOLS         where the provider mirror and the tools' settings are kept
#                          (default gpurental-pipeline in $RUNNER_TEMP, else $TMPDIR, else /tmp)
#   TERRAFORM_BINARY_NAME  the terraform (or tofu) to run (default terraform)
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
}

die() {
  echo "pipeline.sh: $*" >&2
  exit 1
}

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
stage="${1:-}"
case "$stage" in
  plan | comment | apply) ;;
  -h | --help | help)
    usage
    exit 0
    ;;
  *)
    usage >&2
    die "unknown stage \"$stage\": give plan, comment or apply"
    ;;
esac

dir="$(cd "${PIPELINE_DIR:-.}" && pwd)" || die "PIPELINE_DIR ${PIPELINE_DIR:-.} is not a directory"
out="${PIPELINE_OUT:-pipeline-out}"
tools="${PIPELINE_TOOLS:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gpurental-pipeline}"
lock_timeout="${PIPELINE_LOCK_TIMEOUT:-10m}"
tf="${TERRAFORM_BINARY_NAME:-terraform}"
cdktf_project=false
[ -f "$dir/cdktf.json" ] && cdktf_project=true

# The repository's own packages first, as npm scripts have them.
export PATH="$PWD/node_modules/.bin:$dir/node_modules/.bin:$PATH"

if [ "$stage" = comment ]; then
  [ -f "$out/report.md" ] || die "no report at $out/report.md: run ./pipeline.sh plan first"
  exec node "$here/pr-comment.js" "$out/report.md"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

command -v gpurental >/dev/null || die "gpurental is not installed: run npm ci (your package.json lists @gpurental/gpurental)"
command -v "$tf" >/dev/null || die "$tf is not on PATH: install Terraform 1.5 or later, or set TERRAFORM_BINARY_NAME"
[ -n "${GPURENTAL_TOKEN:+set}" ] || die "GPURENTAL_TOKEN is not set: give it from the CI's secret store (a team API key)"

# Nothing is downloaded and nothing is written into the home folder: no checkpoint calls, no
# version check, no plugin cache in ~/.terraform.d, cdktf's own files and the provider's code
# cache in $tools; the provider
# comes from a filesystem mirror installed from the package.
export CHECKPOINT_DISABLE=1 DISABLE_VERSION_CHECK=true CDKTF_DISABLE_PLUGIN_CACHE_ENV=1
export TF_IN_AUTOMATION=1 TF_INPUT=0 CDKTF_HOME="$tools/cdktf-home"
# The provider's code cache, which would otherwise go to ~/.cache/gpurental/code-cache.
export GPURENTAL_PROVIDER_CODE_CACHE_DIR="${GPURENTAL_PROVIDER_CODE_CACHE_DIR:-$tools/code-cache}"
mkdir -p "$tools"
gpurental provider install --dir "$tools/mirror" >/dev/null
sources='"registry.terraform.io/gpurental/gpurental", "registry.opentofu.org/gpurental/gpurental"'
cat >"$tools/terraform.rc" <<EOF
provider_installation {
  filesystem_mirror {
    path    = "$tools/mirror"
    include = [$sources]
  }
  direct {
    exclude = [$sources]
  }
}
EOF
export TF_CLI_CONFIG_FILE="$tools/terraform.rc"

# Where cdktf writes a CDKTF project's stacks.
stacks_dir() {
  echo "$dir/$(cd "$dir" && node -p 'require("./cdktf.json").output || "cdktf.out"')/stacks"
}

# Synthesizes a CDKTF project and prints the stack to run terraform in: the one named, else the
# app's only one.
synth() {
  local wanted=$1 stacks
  (cd "$dir" && cdktf synth) >&2 || die "cdktf synth failed"
  stacks="$(stacks_dir)"
  if [ -n "$wanted" ]; then
    [ -f "$stacks/$wanted/cdk.tf.json" ] || die "the app has no stack \"$wanted\" (in $stacks)"
    echo "$wanted"
    return
  fi
  local found=()
  for f in "$stacks"/*/cdk.tf.json; do [ -f "$f" ] && found+=("$(basename "$(dirname "$f")")"); done
  case "${#found[@]}" in
    1) echo "${found[0]}" ;;
    0) die "cdktf synth wrote no stack into $stacks" ;;
    *) die "the app has ${#found[@]} stacks (${found[*]}): name one with PIPELINE_STACK" ;;
  esac
}

# The directory terraform runs in: the configuration, or a CDKTF stack as cdktf synthesized it.
workdir() {
  if [ "$cdktf_project" = true ]; then echo "$(stacks_dir)/$1"; else echo "$dir"; fi
}

# terraform init; a CDKTF stack's lock file, committed as <stack>.terraform.lock.hcl next to
# cdktf.json, is put in place first so that init checks the provider against it.
init() {
  local work=$1 stack=$2
  if [ "$cdktf_project" = true ] && [ -f "$dir/$stack.terraform.lock.hcl" ]; then
    cp "$dir/$stack.terraform.lock.hcl" "$work/.terraform.lock.hcl"
  fi
  "$tf" -chdir="$work" init -input=false -no-color >&2
}

if [ "$stage" = plan ]; then
  rm -rf "$out/plan.bin" "$out/plan.txt" "$out/report.md" "$out/changes" "$out/stacks"
  stack=""
  [ "$cdktf_project" = true ] && stack="$(synth "${PIPELINE_STACK:-}")"
  work="$(workdir "$stack")"
  init "$work" "$stack"

  args=(-input=false -no-color -lock-timeout="$lock_timeout" -detailed-exitcode -out="$out/plan.bin")
  [ "${PIPELINE_DESTROY:-}" = true ] && args+=(-destroy)
  set +e
  "$tf" -chdir="$work" plan "${args[@]}" | tee "$out/plan.txt"
  code=${PIPESTATUS[0]}
  set -e
  case "$code" in
    0) changes=false ;;
    2) changes=true ;;
    *) die "terraform plan failed" ;;
  esac
  echo "$changes" >"$out/changes"
  if [ "$cdktf_project" = true ]; then
    # The stack as synthesized and planned, lock file included, for the apply job: it applies the
    # plan with this configuration instead of synthesizing again.
    mkdir -p "$out/stacks"
    cp -R "$work" "$out/stacks/$stack"
    rm -rf "$out/stacks/$stack/.terraform" "$out/stacks/$stack/plan"
  fi

  # The report reads a CDKTF stack's plan where cdktf diff leaves it, to name each construct.
  read -ra gates <<<"${PIPELINE_GATES:-}"
  if [ "$cdktf_project" = true ]; then
    cp "$out/plan.bin" "$work/plan"
    report=("$work")
  else
    report=("$out/plan.bin" --dir "$work")
  fi
  gated=0
  gpurental plan-report "${report[@]}" --output "$out/report.md" "${gates[@]}" || gated=$?
  [ "$gated" = 0 ] || [ "$gated" = 2 ] || die "gpurental plan-report failed"
  echo
  cat "$out/report.md"

  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "changes=$changes" >>"$GITHUB_OUTPUT"; fi
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$out/report.md" >>"$GITHUB_STEP_SUMMARY"; fi
  if [ "$gated" = 2 ]; then
    echo "pipeline.sh: a gate of the plan report tripped (PIPELINE_GATES=${PIPELINE_GATES:-}); see the report" >&2
    exit 2
  fi
  exit 0
fi

# apply
[ -f "$out/plan.bin" ] || die "no saved plan at $out/plan.bin: run ./pipeline.sh plan first"
if [ "$(cat "$out/changes" 2>/dev/null)" = false ]; then
  echo "The plan has no changes: nothing to apply."
  exit 0
fi
stack=""
if [ "$cdktf_project" = true ]; then
  planned=("$out"/stacks/*/cdk.tf.json)
  [ -f "${planned[0]}" ] || die "no synthesized stack in $out/stacks: run ./pipeline.sh plan first"
  stack="$(basename "$(dirname "${planned[0]}")")"
  # The configuration the plan was made with, even on a runner that never synthesized it.
  mkdir -p "$(workdir "$stack")"
  cp -R "$out/stacks/$stack/." "$(workdir "$stack")/"
fi
work="$(workdir "$stack")"
init "$work" "$stack"
"$tf" -chdir="$work" apply -input=false -no-color -lock-timeout="$lock_timeout" "$out/plan.bin"
