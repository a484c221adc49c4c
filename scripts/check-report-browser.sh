#!/usr/bin/env bash
# Renders a run's report.html in headless Chromium, takes a screenshot and fails if the page has no SVG charts or
# the screenshot is blank. Installs Chromium with apt when it is missing; if that is impossible, says so and skips
# this one check. Usage: bash scripts/check-report-browser.sh RUN_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
run="$1"
html="$run/report.html"
test -s "$html" || { echo "check-report: $html is missing" >&2; exit 1; }
charts=$(grep -o "<svg id='chart-" "$html" | wc -l)
if [ "$charts" -lt 8 ]; then
  echo "check-report: $html has $charts SVG charts (expected at least 8)" >&2
  exit 1
fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "check-report: installing chromium (apt)..."
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) \
      >/tmp/servesim-apt.log 2>&1 || true
  fi
  browser=$(command -v chromium || command -v chromium-browser || true)
fi
if [ -z "$browser" ]; then
  echo "================================================================================"
  echo "check-report: SKIPPED the headless-browser check: chromium is not installed and could not be installed"
  echo "================================================================================"
  exit 0
fi
profile=$(mktemp -d)
shot="$run/report-screenshot.png"
rm -f "$shot"
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
  --user-data-dir="$profile" --window-size=1280,3000 --screenshot="$shot" "file://$(realpath "$html")" \
  >/dev/null 2>&1 || true
rm -rf "$profile"
test -s "$shot" || { echo "check-report: chromium wrote no screenshot" >&2; exit 1; }
JAVA_HOME="$(bash scripts/jdk.sh 21)"
"$JAVA_HOME/bin/java" -Djava.awt.headless=true scripts/CheckScreenshot.java "$shot"
echo "check-report: $html renders with $charts SVG charts"
