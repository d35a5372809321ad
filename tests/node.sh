# node.sh - sourced by tests/all.sh: a Node.js the npm packages' tests and
# the bundlers run on.  They need Node 20.19 or later with npm; Debian 12
# packages Node 18, and a fresh machine may have none.  Without npm,
# Debian's nodejs and npm are installed; when the node found is older than
# 20.19, Node 20 from the npm registry (the `node` package ships the
# official binaries) is installed into build-node/ and put first on PATH.
node_recent() {
	node -e 'const [a, b] = process.versions.node.split(".").map(Number);
process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null
}
if ! command -v npm >/dev/null 2>&1; then
	apt-get install -y nodejs npm
fi
if ! node_recent; then
	echo "node.sh: Node $(node --version 2>/dev/null || echo none) is older than 20.19: Node 20 from the npm registry" >&2
	npm install --prefix "$PWD/build-node" --no-audit --no-fund --no-save node@20 >&2
	export PATH="$PWD/build-node/node_modules/.bin:$PATH"
	node_recent || { echo "node.sh: no Node 20.19 or later to test with" >&2; exit 1; }
fi
echo "node.sh: Node $(node --version) at $(command -v node)" >&2
