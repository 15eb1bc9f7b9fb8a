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
# ctx KEY prints member KEY of the scenario's context (JSON), read with the
# suite's own node.
ctx() {
	node -e 'process.stdout.write(String(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT)[process.argv[1]]))' "$1"
}
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
	# scenario's context.
	SONDE_OAUTH_SECRET=$(ctx client_secret)
	export SONDE_OAUTH_SECRET
	exec "$sonde" tools --oauth --oauth-browser fetch --oauth-timeout 20s \
		--oauth-client-id "$(ctx client_id)" --oauth-client-secret-env SONDE_OAUTH_SECRET --url "$url" ;;
auth/basic-cimd)
	# The authorization server supports client ID metadata documents: the
	# client id is the URL of one, the suite's (sonde's own by default).
	exec "$sonde" tools --oauth --oauth-browser fetch --oauth-timeout 20s \
		--oauth-client-id https://conformance-test.local/client-metadata.json --url "$url" ;;
auth/client-credentials-basic)
	# A machine client: grant_type=client_credentials, its secret in an
	# Authorization: Basic header (the metadata lists client_secret_basic),
	# read from a file only sonde reads.
	secret=$(mktemp)
	trap 'rm -f "$secret"' EXIT
	ctx client_secret >"$secret"
	set +e
	"$sonde" tools --oauth --oauth-grant client-credentials --oauth-timeout 20s \
		--oauth-client-id "$(ctx client_id)" --oauth-client-secret-file "$secret" --url "$url"
	exit $? ;;
auth/client-credentials-jwt)
	# A machine client authenticated with private_key_jwt: the context
	# holds its PKCS #8 key (ES256), written to a file only sonde reads.
	key=$(mktemp)
	trap 'rm -f "$key"' EXIT
	ctx private_key_pem >"$key"
	set +e
	"$sonde" tools --oauth --oauth-grant client-credentials --oauth-timeout 20s \
		--oauth-client-id "$(ctx client_id)" --oauth-private-key "$key" --url "$url"
	exit $? ;;
auth/cross-app-access-complete-flow)
	# Enterprise-managed authorization: the context holds an ID token from
	# the identity provider, exchanged there for an ID-JAG, which the
	# authorization server takes with the JWT bearer grant (the client
	# authenticated with client_secret_basic).
	SONDE_OAUTH_SECRET=$(ctx client_secret)
	SONDE_ID_TOKEN=$(ctx idp_id_token)
	export SONDE_OAUTH_SECRET SONDE_ID_TOKEN
	exec "$sonde" tools --oauth --oauth-grant cross-app-access --oauth-timeout 20s \
		--oauth-client-id "$(ctx client_id)" --oauth-client-secret-env SONDE_OAUTH_SECRET \
		--oauth-id-token-env SONDE_ID_TOKEN --oauth-idp-token-endpoint "$(ctx idp_token_endpoint)" \
		--oauth-idp-client-id "$(ctx idp_client_id)" --url "$url" ;;
auth/dpop|auth/dpop-nonce)
	# DPoP (SEP-1932): the authorization server lists ES256 in
	# dpop_signing_alg_values_supported; sonde proves possession of an
	# ephemeral key at the token endpoint and on every MCP request, and
	# (dpop-nonce) retries each once with the nonce the server asks for.
	exec "$sonde" tools --oauth --oauth-dpop always --oauth-browser fetch --oauth-timeout 20s --url "$url" ;;
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
