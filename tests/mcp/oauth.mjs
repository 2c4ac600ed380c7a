// An MCP server over Streamable HTTP that asks to sign in (OAuth 2.1 as MCP's authorization spec
// has it), for Hearth's sign-in tests: it is its own authorization server — protected resource
// and authorization server metadata, dynamic client registration, an authorization page that
// approves at once (the "user" signs in by loading it) and redirects with a code, a token
// endpoint that checks PKCE and refreshes (each refresh token used once, OAuth 2.1's rotation),
// and a machine client registered beforehand (client credentials: its id and secret, in the
// request's body or as HTTP Basic; its token has no refresh token), and an enterprise's identity
// provider under /idp (cross-app access, SEP-990: the user's ID token or refresh token exchanged
// there for an ID-JAG, which /token exchanges for an access token: the JWT bearer grant; and
// its own sign-in page, OpenID Connect's code flow with PKCE, which gives Ada an ID token for
// the nonce asked with, and a refresh token when `offline_access` is asked for; a client named
// "hearth-unassigned" is refused there, as a user not assigned to an app is) — and serves one tool, `whoami`, to a request with a token it issued. For the tests, POST
// /test/expire ends every access token (as their time running out would), /test/revoke every
// refresh token too (the identity provider's as well); GET /test/grants counts the tokens given
// by each grant.
//   PORT=8123 node oauth.mjs
import { createHash, randomBytes } from "node:crypto";
import express from "express";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

const port = Number(process.env.PORT ?? 8123);
const base = `http://127.0.0.1:${port}`;
const codes = new Map(); // code → { challenge, redirectUri, clientId }
const tokens = new Set();
const refreshTokens = new Map(); // refresh token → client id
const grants = { authorization_code: 0, refresh_token: 0, client_credentials: 0, jwt_bearer: 0, idp_sign_in: 0 };
/** The machine client registered beforehand, as an organisation would register Hearth. */
const MACHINE = { id: "hearth-machine", secret: "machine-secret-7" };
/** The enterprise: Hearth registered at its identity provider (a public client) and here, and what the identity provider issued Ada. */
const ENTERPRISE = { idpClient: "hearth-at-idp", client: "hearth-enterprise", secret: "enterprise-secret-3", idToken: "ada.id-token.1", refreshToken: "ada-idp-refresh" };
const idp = `${base}/idp`;
const assertions = new Set(); // ID-JAGs issued, each redeemed once
let idpTokensValid = true;
const idpCodes = new Map(); // code → { challenge, redirectUri, nonce, offline }
/** What the identity provider issued Ada and takes in a token exchange, by token type. */
const idpIssued = { id_token: new Set([ENTERPRISE.idToken]), refresh_token: new Set([ENTERPRISE.refreshToken]) };
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const clients = new Set();
const random = () => randomBytes(16).toString("hex");

const app = express();
app.use(express.urlencoded({ extended: false }));
app.use(express.json());

const resource = { resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: ["tools"] };
app.get("/.well-known/oauth-protected-resource/mcp", (_, res) => res.json(resource));
app.get("/.well-known/oauth-protected-resource", (_, res) => res.json(resource));
app.get("/.well-known/oauth-authorization-server", (_, res) =>
  res.json({
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code", "refresh_token", "client_credentials", JWT_BEARER],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
    scopes_supported: ["tools"],
  }),
);

app.post("/register", (req, res) => {
  const clientId = `client-${random()}`;
  clients.add(clientId);
  res.status(201).json({ ...req.body, client_id: clientId, token_endpoint_auth_method: "none" });
});

app.get("/authorize", (req, res) => {
  const { client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: method, state } = req.query;
  if (!clients.has(clientId) || method !== "S256" || !challenge || !redirectUri) {
    return res.status(400).send("a bad authorization request");
  }
  const code = random();
  codes.set(code, { challenge, redirectUri, clientId });
  const back = new URL(redirectUri);
  back.searchParams.set("code", code);
  if (state) back.searchParams.set("state", state);
  res.redirect(302, back.toString());
});

/** A new access token and refresh token for `clientId` (a machine client's, or an exchanged grant's, comes alone), counted under `grant`. */
function issue(res, clientId, grant) {
  const token = `token-${random()}`;
  tokens.add(token);
  grants[grant] += 1;
  if (grant === "client_credentials" || grant === "jwt_bearer") return res.json({ access_token: token, token_type: "Bearer", expires_in: 3600, scope: "tools" });
  const refresh = `refresh-${random()}`;
  refreshTokens.set(refresh, clientId);
  res.json({ access_token: token, token_type: "Bearer", expires_in: 3600, refresh_token: refresh, scope: "tools" });
}

app.get("/idp/.well-known/openid-configuration", (_, res) =>
  res.json({
    issuer: idp,
    authorization_endpoint: `${idp}/authorize`,
    token_endpoint: `${idp}/token`,
    grant_types_supported: ["authorization_code", "urn:ietf:params:oauth:grant-type:token-exchange"],
    token_endpoint_auth_methods_supported: ["none"],
    scopes_supported: ["openid", "profile", "offline_access"],
  }),
);

// Ada signs in by loading the page: approved at once, unless Hearth's client there is one she is not assigned to.
app.get("/idp/authorize", (req, res) => {
  const { client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: method, state, nonce, scope, response_type: type } = req.query;
  if (!redirectUri?.startsWith("http://127.0.0.1:")) return res.status(400).send("a bad authorization request");
  const back = new URL(redirectUri);
  if (state) back.searchParams.set("state", state);
  if (clientId === "hearth-unassigned") {
    back.searchParams.set("error", "access_denied");
    back.searchParams.set("error_description", "User is not assigned to the client application.");
  } else if (clientId !== ENTERPRISE.idpClient || type !== "code" || method !== "S256" || !challenge || !scope?.split(" ").includes("openid")) {
    back.searchParams.set("error", "invalid_request");
  } else {
    const code = random();
    idpCodes.set(code, { challenge, redirectUri, nonce, offline: scope.split(" ").includes("offline_access") });
    back.searchParams.set("code", code);
  }
  res.redirect(302, back.toString());
});

// A look-alike whose configuration names the real identity provider: its grants are not Ada's.
app.get("/impostor/.well-known/openid-configuration", (_, res) => res.json({ issuer: idp, token_endpoint: `${base}/impostor/token` }));

const b64 = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");

// Token exchange (RFC 8693): Ada's ID token or refresh token, for an ID-JAG addressed to this
// authorization server and bound to the MCP server and Hearth's client here. (Its signature is a
// stand-in: this authorization server knows the grants it issued.)
app.post("/idp/token", (req, res) => {
  const { grant_type: grant, subject_token: subject, subject_token_type: type, requested_token_type: requested, audience, resource: target, client_id: clientId } = req.body;
  if (grant === "authorization_code") return idpSignIn(req, res);
  const given = { "urn:ietf:params:oauth:token-type:id_token": idpIssued.id_token, "urn:ietf:params:oauth:token-type:refresh_token": idpIssued.refresh_token }[type];
  if (grant !== "urn:ietf:params:oauth:grant-type:token-exchange" || requested !== "urn:ietf:params:oauth:token-type:id-jag" || clientId !== ENTERPRISE.idpClient || audience !== base || target !== `${base}/mcp`) {
    return res.status(400).json({ error: "invalid_request" });
  }
  if (!idpTokensValid || !given || !given.has(subject)) return res.status(400).json({ error: "invalid_grant" });
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: idp, sub: "ada", aud: base, client_id: ENTERPRISE.client, resource: target, scope: "tools", jti: random(), iat: now, exp: now + 300 };
  const assertion = `${b64({ alg: "ES256", typ: "oauth-id-jag+jwt" })}.${b64(claims)}.${randomBytes(32).toString("base64url")}`;
  assertions.add(assertion);
  res.json({ access_token: assertion, issued_token_type: "urn:ietf:params:oauth:token-type:id-jag", token_type: "N_A", expires_in: 300 });
});

/** The code of Ada's sign-in at the identity provider, for her ID token (and refresh token). */
function idpSignIn(req, res) {
  const { code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId } = req.body;
  const issued = idpCodes.get(code);
  idpCodes.delete(code);
  const proof = verifier && createHash("sha256").update(verifier).digest("base64url");
  if (!issued || clientId !== ENTERPRISE.idpClient || proof !== issued.challenge || redirectUri !== issued.redirectUri) {
    return res.status(400).json({ error: "invalid_grant" });
  }
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: idp, sub: "ada", aud: ENTERPRISE.idpClient, nonce: issued.nonce, iat: now, exp: now + 3600 };
  const idToken = `${b64({ alg: "RS256", typ: "JWT" })}.${b64(claims)}.${randomBytes(32).toString("base64url")}`;
  idpIssued.id_token.add(idToken);
  grants.idp_sign_in += 1;
  const answer = { access_token: `idp-${random()}`, token_type: "Bearer", expires_in: 3600, id_token: idToken };
  if (issued.offline) {
    answer.refresh_token = `ada-idp-refresh-${random()}`;
    idpIssued.refresh_token.add(answer.refresh_token);
  }
  res.json(answer);
}

app.post("/token", (req, res) => {
  const { grant_type: grant, code, code_verifier: verifier, redirect_uri: redirectUri, refresh_token: refresh, client_id: clientId } = req.body;
  if (grant === JWT_BEARER) {
    const [id, secret] = basicCredentials(req) ?? [];
    if (id !== ENTERPRISE.client || secret !== ENTERPRISE.secret) return res.status(401).json({ error: "invalid_client" });
    if (!assertions.delete(req.body.assertion)) return res.status(400).json({ error: "invalid_grant" });
    return issue(res, id, "jwt_bearer");
  }
  if (grant === "client_credentials") {
    const [id, secret] = basicCredentials(req) ?? [clientId, req.body.client_secret];
    if (id !== MACHINE.id || secret !== MACHINE.secret) return res.status(401).json({ error: "invalid_client" });
    return issue(res, id, grant);
  }
  if (grant === "refresh_token") {
    const owner = refreshTokens.get(refresh);
    refreshTokens.delete(refresh);
    if (!owner || owner !== (clientId ?? basicClient(req))) return res.status(400).json({ error: "invalid_grant" });
    return issue(res, owner, grant);
  }
  const issued = codes.get(code);
  codes.delete(code);
  const proof = verifier && createHash("sha256").update(verifier).digest("base64url");
  if (grant !== "authorization_code" || !issued || proof !== issued.challenge || redirectUri !== issued.redirectUri) {
    return res.status(400).json({ error: "invalid_grant" });
  }
  issue(res, issued.clientId, grant);
});

/** The client id and secret of an HTTP Basic authorization header (RFC 6749 §2.3.1: form-encoded), if one came. */
function basicCredentials(req) {
  const basic = (req.headers.authorization ?? "").match(/^Basic (.+)$/);
  if (!basic) return undefined;
  const [id, secret] = Buffer.from(basic[1], "base64").toString().split(":");
  return [decodeURIComponent(id), decodeURIComponent(secret ?? "")];
}

/** The client id of an HTTP Basic authorization header, if one came. */
const basicClient = (req) => basicCredentials(req)?.[0];

app.post("/test/expire", (_, res) => {
  tokens.clear();
  res.json({ ok: true });
});
app.post("/test/revoke", (_, res) => {
  tokens.clear();
  refreshTokens.clear();
  idpTokensValid = false;
  res.json({ ok: true });
});
app.get("/test/grants", (_, res) => res.json(grants));

app.all("/mcp", async (req, res) => {
  const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
  if (!tokens.has(token)) {
    res.set("WWW-Authenticate", `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="tools"`);
    return res.status(401).json({ error: "invalid_token" });
  }
  const server = new McpServer({ name: "signed-in", version: "1.0.0" });
  server.registerTool("whoami", { description: "Says who is signed in" }, async () => ({ content: [{ type: "text", text: "a signed-in user" }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => transport.close());
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});

app.listen(port, "127.0.0.1", () => console.error(`listening on ${base}`));
