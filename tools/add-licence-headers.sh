#!/usr/bin/env bash
# Writes the Apache License 2.0 header into every tracked source, script, pom and properties file
# that does not carry it yet; files that have it are left as they are, so running it again changes
# nothing. The build checks the headers with apache-rat-plugin (see rat.skip in the root pom.xml);
# the files it does not check are excluded there.
# Usage: tools/add-licence-headers.sh   (from anywhere in the repository; prints each file it changes)
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"

MARK='Licensed under the Apache License, Version 2.0'
TEXT='Copyright AppendLog contributors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.'

# header STYLE: the text as a comment in STYLE (java, hash, xml).
header() {
  case $1 in
    java) echo '/*'; sed 's/^/ * /; s/ $//' <<<"$TEXT"; echo ' */' ;;
    hash) sed 's/^/# /; s/ $//' <<<"$TEXT" ;;
    xml) echo '<!--'; sed 's/^/  /; s/^ *$//' <<<"$TEXT"; echo '-->' ;;
  esac
}

# add FILE STYLE: the header before the first line, or after it when that line must stay first
# (a #! interpreter line, an <?xml ...?> declaration).
add() {
  local file=$1 style=$2 tmp
  head -n 30 "$file" | grep -qF "$MARK" && return 0
  tmp=$(mktemp)
  if head -n 1 "$file" | grep -qE '^(#!|<\?xml)'; then
    { head -n 1 "$file"; header "$style"; [[ $style == xml ]] || echo; tail -n +2 "$file"; } >"$tmp"
  else
    { header "$style"; [[ $style == xml ]] || echo; cat "$file"; } >"$tmp"
  fi
  cat "$tmp" >"$file"   # keeps the file's mode (scripts stay executable)
  rm -f "$tmp"
  echo "$file"
}

git ls-files -z -- '*.java' '*.sh' '*pom.xml' '*.properties' ':!:**/src/test/resources/compatibility/**' ':!:.mvn/**' |
  while IFS= read -r -d '' f; do
    case $f in
      *.java) add "$f" java ;;
      *.xml) add "$f" xml ;;
      *) add "$f" hash ;;
    esac
  done
