#!/usr/bin/env bash
# Opens a waitpath timeline (docs/timeline.md) in the offline viewer beside this script, for
# machines without ui.perfetto.dev: writes DIR/timeline.html and DIR/timeline.js, and with
# --png FILE renders it in headless Chromium (`chromium`, Debian 12) to a PNG.
#   view.sh TIMELINE.json DIR [--png FILE] [--size WxH] [--from US --to US]
#   then open DIR/timeline.html in a browser.
set -euo pipefail
usage() { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 2 ] || usage
timeline=$1 dir=$2
shift 2
png="" size=1600,900 hash=""
while [ $# -gt 0 ]; do
  case $1 in
    --png) png=${2:?--png needs a file}; shift 2 ;;
    --size) size=${2:?--size needs WxH}; size=${size/x/,}; shift 2 ;;
    --from) hash+="from=${2:?}&"; shift 2 ;;
    --to) hash+="to=${2:?}&"; shift 2 ;;
    *) usage ;;
  esac
done
[ -r "$timeline" ] || { echo "view.sh: cannot read $timeline" >&2; exit 1; }
mkdir -p "$dir"
here=$(cd "$(dirname "$0")" && pwd)
# Installed: PREFIX/share/waitpath/timeline_view/; in the source tree: beside this script.
cp "$here/timeline.html" "$dir/timeline.html"
{ printf 'window.WAITPATH_TIMELINE = '; cat "$timeline"; printf ';\n'; } >"$dir/timeline.js"
url="file://$(cd "$dir" && pwd)/timeline.html${hash:+#${hash%&}}"
if [ -z "$png" ]; then
  echo "$url"
  exit 0
fi
command -v chromium >/dev/null ||
  { echo "view.sh: chromium is not installed (apt-get install chromium)" >&2; exit 1; }
# --no-sandbox: root has no user namespace sandbox here; the page is our own local file.
chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size="$size" \
  --virtual-time-budget=10000 --screenshot="$(realpath -m "$png")" "$url" >/dev/null 2>&1
[ -s "$png" ] || { echo "view.sh: chromium wrote no $png" >&2; exit 1; }
echo "$png"
