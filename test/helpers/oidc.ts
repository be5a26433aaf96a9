import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person the identity provider knows: the claims it vouches for. */
export interface IdpAccount {
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, IdpAccount>;
  /** Seconds an authorization code issued from now on lives (the provider's default: 60). */
  authorizationCodeTtl: number;
  /** Whether the provider holds `code` as expired by its clock; throws when it holds no such code. */
  codeExpired(code: string): Promise<boolean>;
  /**
   * An ID token the provider signs for its second client (another relying party), for
   * `accountId` and carrying `nonce`: what a token meant for someone else looks like.
   */
  idTokenOfOtherClient(accountId: string, nonce: string): Promise<string>;
  /** Replaces the id_token of the next token response of the first client with this one. */
  nextIdToken: string | undefined;
  /** Changes these claims of the next ID token the first client receives, keeping the provider's signature. */
  nextIdTokenClaims: Record<string, unknown> | undefined;
  close(): Promise<void>;
}

const OTHER_REDIRECT_URI = 'http://other-app.test/callback';

/**
 * A real OpenID provider (oidc-provider) on loopback, with one confidential client whose
 * redirect URI is `redirectUri`, PKCE required, and its development login screen: any account
 * id typed there signs in as the account of that id in `accounts`.
 */
export async function startTestIdp(redirectUri: string): Promise<TestIdp> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = `inbox-${randomBytes(3).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, IdpAccount>();
  const other = { id: `other-${randomBytes(3).toString('hex')}`, secret: randomBytes(24).toString('base64url') };
  const client = (id: string, secret: string, uri: string) => ({
    client_id: id,
    client_secret: secret,
    redirect_uris: [uri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  });
  const provider = new Provider(issuer, {
    clients: [client(clientId, clientSecret, redirectUri), client(other.id, other.secret, OTHER_REDIRECT_URI)],
    ttl: { AuthorizationCode: () => idp.authorizationCodeTtl },
    // The memory store keeps an artifact this long past its expiry: an expired code is then
    // answered as expired, not as unknown.
    clockTolerance: 60,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
  });
  // After the provider answered: the token response's id_token swapped, as a man in the middle would.
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.oidc?.route !== 'token' || ctx.oidc.client?.clientId !== clientId || !body?.id_token) return;
    if (idp.nextIdToken) {
      body.id_token = idp.nextIdToken;
      idp.nextIdToken = undefined;
    }
    if (idp.nextIdTokenClaims) {
      const [header, payload, signature] = body.id_token.split('.');
      const claims = { ...JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')), ...idp.nextIdTokenClaims };
      body.id_token = [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
      idp.nextIdTokenClaims = undefined;
    }
  });
  server.on('request', provider.callback());
  const idp: TestIdp = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    authorizationCodeTtl: 60,
    nextIdToken: undefined,
    nextIdTokenClaims: undefined,
    async codeExpired(code) {
      const found = await provider.AuthorizationCode.find(code, { ignoreExpiration: true });
      if (!found) throw new Error('the identity provider holds no such authorization code');
      return found.isExpired;
    },
    async idTokenOfOtherClient(accountId, nonce) {
      const verifier = randomBytes(32).toString('base64url');
      const authorize = new URL('/auth', issuer);
      authorize.search = new URLSearchParams({
        client_id: other.id,
        redirect_uri: OTHER_REDIRECT_URI,
        response_type: 'code',
        scope: 'openid email profile',
        nonce,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      const code = (await signInAtIdp(authorize.href, accountId)).searchParams.get('code');
      if (!code) throw new Error('the identity provider gave the other client no code');
      const res = await fetch(new URL('/token', issuer), {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${other.id}:${other.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: OTHER_REDIRECT_URI, code_verifier: verifier }),
      });
      const tokens = (await res.json()) as { id_token?: string };
      if (!tokens.id_token) throw new Error(`the identity provider answered no id_token: ${JSON.stringify(tokens)}`);
      return tokens.id_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return idp;
}

/** A cookie jar of one origin, enough for the provider's session and interaction cookies. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Plays the browser at the identity provider: follows its redirects by hand (carrying its
 * cookies), signs in as `accountId` on its login screen, consents, and stops at the first
 * redirect that leaves the provider's origin (the callback), which it answers.
 */
export async function signInAtIdp(authorizationUrl: string, accountId: string): Promise<URL> {
  const jar = new Jar();
  const origin = new URL(authorizationUrl).origin;
  let url = new URL(authorizationUrl);
  let init: RequestInit = {};
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers ?? {}), cookie: jar.header() } });
    jar.take(res);
    init = {};
    if (res.status >= 300 && res.status < 400) {
      await res.arrayBuffer();
      const next = new URL(res.headers.get('location')!, url);
      if (next.origin !== origin) return next;
      url = next;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the identity provider answered ${res.status}: ${html.slice(0, 300)}`);
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    const action = /action="([^"]+)"/.exec(html)?.[1];
    if (!prompt || !action) throw new Error(`no form at ${url.href}: ${html.slice(0, 300)}`);
    const form = new URLSearchParams({ prompt, ...(prompt === 'login' ? { login: accountId, password: 'any' } : {}) });
    url = new URL(action, url);
    init = { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('too many redirects at the identity provider');
}
