#!/usr/bin/env bash
# `relkt reproduce` under the name the results chapters quote: a setup of configs/setups.yaml end to end.
#   bash trainers/reproduce.sh --list            # every setup, the recommended first (relkt reproduce --list)
#   bash trainers/reproduce.sh NAME [SEED]       # relkt reproduce NAME [--seed SEED]
#   RELKT_PRINT_ONLY=1 bash trainers/reproduce.sh NAME [SEED]   # relkt reproduce NAME --dry-run
set -euo pipefail
if [ "${1:-}" = --list ]; then exec python -m relkt.cli reproduce --list; fi
args=("$@")
[ -n "${2:-}" ] && args=("$1" --seed "$2")
[ -n "${RELKT_PRINT_ONLY:-}" ] && args+=(--dry-run)
exec python -m relkt.cli reproduce "${args[@]}"
