#!/usr/bin/env bash
# Writes docs/settings.md from the binaries' own --help, so the settings
# reference is never out of step with the flag definitions (the tests of
# cmd/hub and cmd/subscriber compare the two).
set -euo pipefail
cd "$(dirname "$0")/.."
{
  echo "# Settings"
  echo
  echo "Every setting of the hub and of the subscriber, as their \`--help\` prints it (written by"
  echo "\`scripts/settings-doc.sh\`; the tests fail when a flag changes and this page does not). Each setting is a"
  echo "flag, an environment variable, or a key of the JSON file given with \`--config\`."
  for cmd in hub subscriber; do
    echo
    echo "## cmd/$cmd"
    echo
    echo '```text'
    go run "./cmd/$cmd" --help 2>&1 | grep -v '^exit status' || true
    echo '```'
  done
} >docs/settings.md.tmp
mv docs/settings.md.tmp docs/settings.md
