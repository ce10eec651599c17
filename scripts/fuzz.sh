#!/usr/bin/env bash
# Runs every Go fuzz target for FUZZTIME each (default 10s), one after the
# other on one core (-parallel 1), and fails if any target fails. (Go 1.26's
# race at the end of -fuzztime, golang/go#75804, is reported, not failed.)
#
#   scripts/fuzz.sh                      every target, 10s each
#   FUZZTIME=5m scripts/fuzz.sh          longer
#   scripts/fuzz.sh FuzzServeDNS ...     only the targets named
#
# FUZZMINIMIZETIME (default 5s) bounds how long the engine shrinks each new
# input: go test's 60s default can spend a short run on one input.
#
# A failing input is written to the package's testdata/fuzz/<Target>/; once
# the bug is fixed, keep it there as a seed. The adminapi targets need the
# test PostgreSQL (./scripts/test-deps.sh), as the rest of the tests do.
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-10s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}

# package and target; a new Fuzz function must be added here (checked below).
targets=(
	"./plugin/hostname FuzzServeDNS"
	"./plugin/hostname FuzzParseCorefile"
	"./plugin/hostname FuzzFastAnswer"
	"./plugin/hostname FuzzAnswersProjection"
	"./adminapi FuzzRequestBody"
	"./adminapi FuzzACMEUpdate"
	"./addrclass FuzzParse"
	"./labels FuzzSyntax"
	"./labels FuzzPolicy"
	"./records FuzzParse"
	"./domains FuzzNormalize"
	"./domains FuzzParseCAA"
	"./dnsupdate FuzzUpdate"
)

# Every fuzz function in the tree is listed: one left out would never run.
missing=0
while IFS=: read -r file fn; do
	pkg="./$(dirname "$file")"
	if ! printf '%s\n' "${targets[@]}" | grep -qx "$pkg $fn"; then
		echo "fuzz: $pkg $fn is not listed in $0" >&2
		missing=1
	fi
done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sed 's|^\./||; s|:func |:|')
if ((missing)); then
	exit 1
fi

# deadlineOnly reports whether the go test output in $1 failed with nothing but
# Go's fuzz-coordinator race at the end of -fuzztime (golang/go#75804, fixed
# in Go 1.27): "context deadline exceeded" and no failing input written.
deadlineOnly() {
	! grep -q 'Failing input written' "$1" &&
		[[ "$(awk '/^--- FAIL: /{f=1; next} /^FAIL$/{f=0} f' "$1")" == "    context deadline exceeded" ]]
}

failed=()
flaked=()
ran=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	if (($#)) && ! printf '%s\n' "$@" | grep -qx "$name"; then
		continue
	fi
	ran=$((ran + 1))
	echo "=== $name ($pkg, $FUZZTIME)"
	corpus="$pkg/testdata/fuzz/$name"
	before=$(ls "$corpus" 2>/dev/null)
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" -parallel 1 "$pkg" 2>&1 | tee "$out"
	if ((PIPESTATUS[0] == 0)); then
		continue
	fi
	if [[ "$(ls "$corpus" 2>/dev/null)" == "$before" ]] && deadlineOnly "$out"; then
		echo "fuzz: $name: the fuzz coordinator's deadline race (golang/go#75804), not a failing input" >&2
		flaked+=("$pkg $name")
		continue
	fi
	failed+=("$pkg $name")
done

if ((ran == 0)); then
	echo "fuzz: no target named $*" >&2
	exit 1
fi
if ((${#flaked[@]})); then
	printf 'fuzz: deadline race, ignored: %s\n' "${flaked[@]}" >&2
fi
if ((${#failed[@]})); then
	printf 'fuzz: FAILED: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: $ran target(s) passed"
