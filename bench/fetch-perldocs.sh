#!/usr/bin/env bash
# Downloads the Perl manual (Debian package perl-doc: the POD of perl*.pod, the FAQ included)
# and converts each page to HTML with pod2html, into DIR/html/NAME.html: the held-out corpus of
# bench/questions/ (perlfaq-*.csv). Nothing is installed on the system; nothing of it belongs
# in the repository.
#   usage: bash bench/fetch-perldocs.sh DIR        (the HTML ends up in DIR/html)
# pod2html writes =head1 as <h1> and =head2 as <h2> (each FAQ question is an =head2), the page's
# NAME line as its <title>; --noindex leaves out the table of contents at the top of each page.
set -euo pipefail
dir=${1:?usage: fetch-perldocs.sh DIR}
mkdir -p "$dir"
cd "$dir"
marker=html/.converted  # written last: an interrupted run starts again
if [ -f "$marker" ]; then
  echo "$dir/html: already there"; exit 0
fi
for tool in apt-get dpkg-deb pod2html; do
  command -v "$tool" >/dev/null || { echo "fetch-perldocs.sh needs $tool (Debian: perl, dpkg, apt)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download perl-doc >"$work/apt.log" 2>&1) || {
  echo "apt-get download perl-doc failed (run 'apt-get update' once, then retry):" >&2
  tail -n 3 "$work/apt.log" >&2; exit 1; }
dpkg-deb -x "$work"/perl-doc_*.deb "$work/x"
pods=("$work"/x/usr/share/perl/*/pod/*.pod)
[ -f "${pods[0]}" ] || { echo "perl-doc holds no usr/share/perl/*/pod/*.pod" >&2; exit 1; }
mkdir -p "$work/html" "$work/cache"
for pod in "${pods[@]}"; do
  name=$(basename "$pod" .pod)
  pod2html --quiet --noindex --nobacklink --nopoderrors --cachedir="$work/cache" \
    --infile="$pod" --outfile="$work/html/$name.html"
done
rm -rf html && mv "$work/html" html
touch "$marker"
echo "$dir/html: $(find html -name '*.html' | wc -l) HTML files"
