#!/bin/sh
# The client side of the official MCP conformance suite, played by sonde.
#
#   conformance client --command "sh interop/conformance-client.sh" --scenario NAME
#
# The suite starts a test server for scenario NAME, puts NAME in
# MCP_CONFORMANCE_SCENARIO and appends the server's URL as the last argument.
# Each scenario maps to one headless sonde command; SONDE_BIN names the sonde
# binary (default: sonde on PATH). internal/cli/live/conformance_test.go runs it.
set -eu
eval "url=\${$#}"
sonde=${SONDE_BIN:-sonde}
case "${MCP_CONFORMANCE_SCENARIO:-}" in
initialize)
	# The handshake (protocol version, clientInfo), then tools/list.
	exec "$sonde" tools --url "$url" ;;
tools_call)
	exec "$sonde" call add_numbers --args '{"a":2,"b":3}' --url "$url" ;;
sse-retry)
	# The tool's response stream closes after a priming event with an id
	# and retry: 500; sonde must resume it with GET and Last-Event-ID.
	exec "$sonde" call test_reconnection --url "$url" ;;
elicitation-sep1034-client-defaults)
	# The tool sends elicitation/create on the standalone GET stream; sonde
	# accepts it with the defaults of its requestedSchema.
	exec "$sonde" call test_client_elicitation_defaults --elicit-defaults --url "$url" ;;
auth/pre-registration)
	# A client registered beforehand: its id and secret come in the
	# scenario's context (JSON), read with the suite's own node.
	id=$(node -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT).client_id)')
	SONDE_OAUTH_SECRET=$(node -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT).client_secret)')
	export SONDE_OAUTH_SECRET
	exec "$sonde" tools --oauth --oauth-browser fetch --oauth-timeout 20s \
		--oauth-client-id "$id" --oauth-client-secret-env SONDE_OAUTH_SECRET --url "$url" ;;
auth/scope-step-up)
	# tools/call needs more scope than tools/list: a 403 with
	# error="insufficient_scope" makes sonde authorize again.
	exec "$sonde" call test-tool --oauth --oauth-browser fetch --oauth-timeout 20s --url "$url" ;;
auth/*)
	# The server wants OAuth: sonde runs the flow on the 401, GETting the
	# authorization URL itself (the suite's authorization server grants
	# without a login page), then lists the tools with the token.
	exec "$sonde" tools --oauth --oauth-browser fetch --oauth-timeout 20s --url "$url" ;;
*)
	echo "conformance-client.sh: scenario '${MCP_CONFORMANCE_SCENARIO:-}' is not supported by sonde yet" >&2
	exit 2 ;;
esac
