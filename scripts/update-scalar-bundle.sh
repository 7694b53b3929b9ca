#!/usr/bin/env bash
# Refreshes vendor/scalar/standalone.js, the browser bundle /docs serves, from an npm release of
# @scalar/fastify-api-reference (the bundle is a string inside its dist/index.js).
# Usage: scripts/update-scalar-bundle.sh VERSION   (e.g. 1.72.1)
#
# The bundle is kept in the repository rather than as a dependency: the package's server-side
# dependencies declare Node >= 22 while paylink runs on Node 20, and /docs needs the bundle only.
set -euo pipefail
version="${1:?usage: $0 VERSION}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@scalar/fastify-api-reference@${version}" >/dev/null && tar xzf ./*.tgz)
node - "$work/package/dist/index.js" "$root/vendor/scalar/standalone.js" <<'JS'
const fs = require('node:fs');
const [from, to] = process.argv.slice(2);
const src = fs.readFileSync(from, 'utf8');
const key = 'var standalone_default = ';
const start = src.indexOf(key);
if (start < 0) throw new Error(`no bundle string in ${from}: the package layout changed`);
const literal = src.slice(start + key.length, src.indexOf('\n', start)).trim().replace(/;$/, '');
// A JavaScript string literal (JSON.parse refuses some of its escapes); it is evaluated, not run.
const bundle = new Function(`return ${literal}`)();
if (typeof bundle !== 'string' || bundle.length < 100_000) throw new Error('the extracted bundle is not a script');
fs.writeFileSync(to, bundle);
JS
cp "$work/package/LICENSE" "$root/vendor/scalar/LICENSE"
sha="$(sha256sum "$root/vendor/scalar/standalone.js" | cut -d' ' -f1)"
printf '%s\n' "@scalar/fastify-api-reference@${version}" "sha256 ${sha}" > "$root/vendor/scalar/SOURCE"
echo "vendor/scalar/standalone.js from @scalar/fastify-api-reference@${version} (sha256 ${sha})"
