#!/usr/bin/env bash
# Checks the container set-up on a real Docker engine: builds the image, starts docker-compose.yml
# under a project name of its own (published ports picked by Docker, so a running stack is left
# alone), waits for every service to be healthy, then checks from the host:
#   the simulator's control API answers (--control-from names the stack's network),
#   FLEETWATCH_API_TOKEN reaches the replicas (the API asks for it, the queue UI opens with it),
#   a vehicle added through the control API comes out of the event log as vehicle.discovered,
#   every Prometheus target is up.
# Prints a summary with timings and always tears the stack down.
#
#   scripts/container-check.sh [--skip <service>]... [--preflight]
#
#   --skip <service>  leave a service out (e.g. grafana where its image cannot be had)
#   --preflight       only check the engine, compose and the base images, then exit
#
# Exit status: 0 passed; 1 a check failed (the step is named); 2 usage; 3 no Docker engine answers
# (or no compose, or no curl); 4 a base image is missing and cannot be pulled.
# Uses `docker compose` (v2), else `docker-compose` (v1, on a copy without the top-level `name:`).
# Each wait is bounded: CHECK_HEALTHY_TIMEOUT (default 240 s) for the services to become healthy,
# CHECK_EVENT_TIMEOUT (default 90 s) for the event, CHECK_TARGETS_TIMEOUT (default 60 s) for the targets.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
skip=()
preflight=false
while [ $# -gt 0 ]; do
  case "$1" in
    --skip)
      [ $# -ge 2 ] || { echo "container-check: --skip needs a service name" >&2; exit 2; }
      skip+=("$2")
      shift 2
      ;;
    --preflight) preflight=true; shift ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "container-check: unknown argument '$1' (expected --skip <service> or --preflight)" >&2; exit 2 ;;
  esac
done

healthy_timeout=${CHECK_HEALTHY_TIMEOUT:-240}
event_timeout=${CHECK_EVENT_TIMEOUT:-90}
targets_timeout=${CHECK_TARGETS_TIMEOUT:-60}
for limit in healthy_timeout event_timeout targets_timeout; do
  value=${!limit}
  if ! [[ "$value" =~ ^[0-9]{1,4}$ ]] || [ "$value" -lt 1 ] || [ "$value" -gt 3600 ]; then
    echo "container-check: the ${limit/_/ } must be a whole number of seconds from 1 to 3600; got '$value'" >&2
    exit 2
  fi
done

# --- summary --------------------------------------------------------------------------------------
summary=()
step_name=''
step_start=0
begin() {
  step_name=$1
  step_start=$SECONDS
  echo "== $step_name"
}
pass() {
  summary+=("$(printf '  ok    %-36s %4ss  %s' "$step_name" $((SECONDS - step_start)) "${1:-}")")
}
print_summary() {
  echo
  echo "container check summary (project $project, ${compose_kind:-no compose}):"
  [ ${#summary[@]} -gt 0 ] && printf '%s\n' "${summary[@]}"
}
# A failed step: says which, why, and exits 1 (the EXIT trap tears the stack down).
fail() {
  summary+=("$(printf '  FAIL  %-36s %4ss  %s' "$step_name" $((SECONDS - step_start)) "$1")")
  echo "container-check: step '$step_name' failed: $1" >&2
  failed_step=$step_name
  exit 1
}

# --- prerequisites (exit 3) -----------------------------------------------------------------------
project="fleetwatch-check-$$"
compose_kind=''
command -v docker >/dev/null || { echo "container-check: no docker command; install Docker to run this check" >&2; exit 3; }
docker info >/dev/null 2>&1 || { echo "container-check: no Docker engine answers (docker info failed); start one, or check DOCKER_HOST" >&2; exit 3; }
if docker compose version >/dev/null 2>&1; then
  compose_kind='docker compose (v2)'
elif command -v docker-compose >/dev/null && docker-compose version >/dev/null 2>&1; then
  compose_kind='docker-compose (v1)'
else
  echo "container-check: neither 'docker compose' (v2) nor 'docker-compose' (v1) is installed" >&2
  exit 3
fi
command -v curl >/dev/null || { echo "container-check: needs curl on the host" >&2; exit 3; }

# Every service in docker-compose.yml with the image it needs from a registry ("-" when it is
# the image built here). Plain lists, no associative arrays: macOS ships bash 3.2.
all_services=$(awk '
  /^[^ #]/ { in_services = ($0 ~ /^services:/) }
  in_services && /^  [A-Za-z0-9_.-]+:/ { if (svc != "") print svc, (built ? "-" : img); svc = $1; sub(/:$/, "", svc); img = "-"; built = 0 }
  in_services && /^    build:/ { built = 1 }
  in_services && /^    image:/ { img = $2 }
  END { if (svc != "") print svc, (built ? "-" : img) }
' "$root/docker-compose.yml")
for name in ${skip[@]+"${skip[@]}"}; do
  awk '{ print $1 }' <<<"$all_services" | grep -qx "$name" ||
    { echo "container-check: --skip $name: no such service in docker-compose.yml" >&2; exit 2; }
done
services=()
base_images=("$(sed -n 's/^ARG NODE_IMAGE=//p' "$root/Dockerfile" | head -1)")
while read -r service image; do
  printf '%s\n' ${skip[@]+"${skip[@]}"} | grep -qx "$service" && continue
  services+=("$service")
  [ "$image" != - ] && base_images+=("$image")
done <<<"$all_services"

for image in $(printf '%s\n' "${base_images[@]}" | sort -u); do
  if ! docker image inspect "$image" >/dev/null 2>&1 && ! docker pull -q "$image" >/dev/null 2>&1; then
    used_by=$(awk -v image="$image" '$2 == image { print $1 }' <<<"$all_services" | tr '\n' ' ')
    used_by=${used_by% }
    echo "container-check: base image $image (${used_by:-the Dockerfile}) is not here and cannot be pulled${used_by:+; --skip $used_by leaves it out}" >&2
    exit 4
  fi
done
if $preflight; then
  echo "container-check: engine, $compose_kind, curl and base images ready (${services[*]})"
  exit 0
fi

# --- the stack ------------------------------------------------------------------------------------
work=$(mktemp -d)
failed_step=''
compose() {
  if [ "$compose_kind" = 'docker compose (v2)' ]; then
    docker compose -p "$project" -f "$work/compose.yml" --project-directory "$root" "$@"
  else
    docker-compose -p "$project" -f "$work/compose.yml" --project-directory "$root" "$@"
  fi
}
teardown() {
  local status=$?
  trap - EXIT INT TERM
  local start=$SECONDS
  if [ -f "$work/compose.yml" ]; then
    if [ -n "$failed_step" ]; then
      echo "--- last log lines of each service" >&2
      compose logs --tail 15 --no-color >&2 2>/dev/null || true
    fi
    compose down -v --remove-orphans -t 10 >/dev/null 2>&1 || echo "container-check: tear-down failed; run: docker ps -a --filter label=com.docker.compose.project=$project" >&2
    summary+=("$(printf '  ok    %-36s %4ss' 'tear down' $((SECONDS - start)))")
  fi
  rm -rf "$work"
  print_summary
  if [ "$status" -eq 0 ]; then
    echo "container check passed in ${SECONDS}s"
  else
    echo "container check FAILED${failed_step:+ at '$failed_step'} after ${SECONDS}s" >&2
  fi
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# The copy it runs: published ports chosen by Docker (a stack already on 8080/9464 stays
# untouched), and for compose v1 no top-level name: (1.29 rejects it; -p names the project).
sed -E 's/"127\.0\.0\.1:[0-9]+:/"127.0.0.1::/' "$root/docker-compose.yml" >"$work/compose.yml"
[ "$compose_kind" = 'docker-compose (v1)' ] && sed -i.bak '/^name:/d' "$work/compose.yml"

# A network range no existing network has, unless one is given.
if [ -z "${FLEETWATCH_COMPOSE_SUBNET:-}" ]; then
  taken=$(docker network inspect $(docker network ls -q) --format '{{range .IPAM.Config}}{{.Subnet}} {{end}}' 2>/dev/null | tr ' ' '\n')
  for third in $(seq 75 99); do
    candidate="10.213.$third.0/24"
    grep -qx "$candidate" <<<"$taken" || { FLEETWATCH_COMPOSE_SUBNET=$candidate; break; }
  done
fi
export FLEETWATCH_COMPOSE_SUBNET
token="container-check-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export FLEETWATCH_API_TOKEN=$token

begin 'build image'
docker build -q -t fleetwatch:local "$root" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail 'docker build failed (output above)'; }
pass 'fleetwatch:local'

begin 'start stack'
compose up -d --no-build "${services[@]}" >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; fail 'compose up failed (output above)'; }
pass "${services[*]} on $FLEETWATCH_COMPOSE_SUBNET"

begin 'every service healthy'
deadline=$((SECONDS + healthy_timeout))
while :; do
  ids=$(compose ps -a -q)
  states=$([ -n "$ids" ] && docker inspect --format '{{index .Config.Labels "com.docker.compose.service"}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' $ids)
  waiting=$(awk '$2 != "running" || ($3 != "healthy" && $3 != "none") { print $1 "=" $2 "/" $3 }' <<<"$states" | tr '\n' ' ')
  running=$(grep -c . <<<"$states")
  [ -z "$waiting" ] && [ "$running" -ge ${#services[@]} ] && break
  exited=$(awk '$2 == "exited" || $2 == "dead" { print $1 }' <<<"$states" | tr '\n' ' ')
  [ -n "$exited" ] && fail "stopped: $exited"
  [ $SECONDS -ge $deadline ] && fail "not healthy after ${healthy_timeout}s: ${waiting:-fewer containers than services}"
  sleep 2
done
pass "${#services[@]} services"

host_port() { compose port "$1" "$2" 2>/dev/null | tail -1 | sed 's/^0\.0\.0\.0:/127.0.0.1:/'; }
simulator=$(host_port simulator 8080)
replica=$(host_port fleetwatch-1 9464)

begin 'simulator control API from the host'
status=$(curl -s -o "$work/state.json" -w '%{http_code}' "http://$simulator/_sim/behaviours")
[ "$status" = 200 ] || fail "GET http://$simulator/_sim/behaviours answered $status: $(head -c 300 "$work/state.json")"
pass "http://$simulator/_sim/ (--control-from $FLEETWATCH_COMPOSE_SUBNET)"

begin 'API token reaches the replicas'
status=$(curl -s -o /dev/null -w '%{http_code}' "http://$replica/api/events?limit=1")
[ "$status" = 401 ] || fail "GET /api/events without the token answered $status, expected 401 (is FLEETWATCH_API_TOKEN passed in?)"
status=$(curl -s -o /dev/null -w '%{http_code}' -u "check:$token" "http://$replica/admin/queues")
[ "$status" = 200 ] || fail "the queue UI with the token answered $status, expected 200"
pass 'API asks for it; queue UI opens with it'

begin 'event delivered end to end'
vehicle="veh-check-$$"
status=$(curl -s -o "$work/added.json" -w '%{http_code}' -X POST "http://$simulator/_sim/vehicles" \
  -H 'content-type: application/json' -d "{\"id\": \"$vehicle\", \"vpnConnected\": true}")
[ "$status" = 201 ] || fail "POST /_sim/vehicles answered $status: $(head -c 300 "$work/added.json")"
deadline=$((SECONDS + event_timeout))
until curl -s -H "authorization: Bearer $token" \
  "http://$replica/api/events?type=vehicle.discovered&subject=vehicle/$vehicle" | grep -q "\"subject\":\"vehicle/$vehicle\""; do
  [ $SECONDS -ge $deadline ] && fail "no vehicle.discovered for $vehicle in the event log after ${event_timeout}s"
  sleep 1
done
pass "vehicle.discovered for $vehicle in the event log"

if printf '%s\n' "${services[@]}" | grep -qx prometheus; then
  begin 'Prometheus targets up'
  prometheus=$(host_port prometheus 9090)
  deadline=$((SECONDS + targets_timeout))
  while :; do
    health=$(curl -s "http://$prometheus/api/v1/targets?state=active" | grep -o '"health":"[a-z]*"')
    total=$(grep -c . <<<"$health")
    up=$(grep -c '"up"' <<<"$health")
    [ "$total" -gt 0 ] && [ "$up" -eq "$total" ] && break
    [ $SECONDS -ge $deadline ] && fail "$up of $total targets up after ${targets_timeout}s: $(sort <<<"$health" | uniq -c | tr -s ' \n' ' ')"
    sleep 2
  done
  pass "$up of $total targets up"
fi
