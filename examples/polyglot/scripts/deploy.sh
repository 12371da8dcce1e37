#!/usr/bin/env bash
# Deploys the thing.
deploy() {
  local target=$1
  echo deploying to $target
}

deploy "$@"
