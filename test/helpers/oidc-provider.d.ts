// oidc-provider ships no types: what the tests' identity provider uses of it.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  export interface Configuration {
    clients?: Record<string, unknown>[];
    claims?: Record<string, string[]>;
    cookies?: { keys: string[] };
    features?: Record<string, { enabled: boolean }>;
    pkce?: { required: () => boolean };
    ttl?: { AuthorizationCode?: () => number };
    clockTolerance?: number;
    findAccount?(ctx: unknown, id: string): Promise<Account | undefined>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    use(
      middleware: (
        ctx: { body: unknown; oidc?: { route?: string; client?: { clientId: string } } },
        next: () => Promise<void>,
      ) => Promise<void>,
    ): void;
    AuthorizationCode: {
      find(value: string, options: { ignoreExpiration: boolean }): Promise<{ isExpired: boolean } | undefined>;
    };
  }
}
