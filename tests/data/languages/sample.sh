#!/usr/bin/env bash
set -euo pipefail

# Deploys the current build.
deploy() {
  local target="$1"
  echo "deploying to $target"
}

function backup {
  tar czf backup.tgz data/
}

deploy "${1:-staging}"
