#!/bin/sh
# A near-instant stand-in for `tofu` in `npm run bench -- --only runs` (bench/scenarios/runs.mjs):
# answers every command a PLAN or DEPLOY job runs (packages/agent/src/job/JobSteps.ts) with valid
# output and no work, so what is measured is the orchestration around the engine. A shell script,
# not Node: a Node stand-in costs ~50 ms of start-up per command, more than the agent's own work.
command="$1"
# BENCH_ENGINE_TRACE=<file> (the scenario's --trace): one line per command start and end, with the
# time in ns and the working directory (the job's workspace), to see where a job's time goes.
if [ -n "$BENCH_ENGINE_TRACE" ]; then
  echo "$(date +%s%N) start $command $PWD" >> "$BENCH_ENGINE_TRACE"
  trap 'echo "$(date +%s%N) end $command $PWD" >> "$BENCH_ENGINE_TRACE"' EXIT
fi
case "$command" in
  init)
    echo "OpenTofu has been successfully initialized! (bench fake engine)"
    ;;
  plan)
    for arg in "$@"; do
      case "$arg" in
        -out=*) echo "fake plan" > "${arg#-out=}" ;;
      esac
    done
    echo "Plan: 1 to add, 0 to change, 0 to destroy. (bench fake engine)"
    ;;
  show)
    echo '{"format_version":"1.2","resource_changes":[{"address":"terraform_data.bench","mode":"managed","type":"terraform_data","name":"bench","change":{"actions":["create"]}}]}'
    ;;
  apply|destroy)
    echo "Apply complete! Resources: 1 added, 0 changed, 0 destroyed. (bench fake engine)"
    ;;
  output)
    echo '{"n":{"sensitive":false,"type":"string","value":"1"}}'
    ;;
  version)
    echo "OpenTofu v1.10.0 (bench fake engine)"
    ;;
  *)
    echo "bench fake engine: unknown command $command" >&2
    exit 1
    ;;
esac
