#!/usr/bin/env bash
# Downloads Git's manual (Debian package git-doc: the man pages, the user manual, the FAQ and
# the how-tos as HTML, written by asciidoc) into DIR/html: a second held-out HTML corpus of
# bench/questions/ (gitdocs-users.csv), from another generator than the PostgreSQL manual's
# DocBook and the Perl manual's pod2html. Nothing is installed on the system; nothing of it
# belongs in the repository.
#   usage: bash bench/fetch-gitdocs.sh DIR        (the HTML ends up in DIR/html)
set -euo pipefail
dir=${1:?usage: fetch-gitdocs.sh DIR}
mkdir -p "$dir"
cd "$dir"
marker=html/.unpacked  # written last: an interrupted run starts again
if [ -f "$marker" ]; then
  echo "$dir/html: already there"; exit 0
fi
for tool in apt-get dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "fetch-gitdocs.sh needs $tool (Debian: dpkg, apt)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download git-doc >"$work/apt.log" 2>&1) || {
  echo "apt-get download git-doc failed (run 'apt-get update' once, then retry):" >&2
  tail -n 3 "$work/apt.log" >&2; exit 1; }
dpkg-deb -x "$work"/git-doc_*.deb "$work/x"
docs="$work/x/usr/share/doc/git-doc"
[ -f "$docs/user-manual.html" ] || { echo "git-doc holds no usr/share/doc/git-doc/user-manual.html" >&2; exit 1; }
# the HTML pages only (the package also ships each page's AsciiDoc source as .txt)
cp -a "$docs" "$work/html"
find "$work/html" -type f ! -name '*.html' -delete
rm -rf html && mv "$work/html" html
touch "$marker"
echo "$dir/html: $(find html -name '*.html' | wc -l) HTML files"
