/**
 * The few globals the client uses, typed here: the package compiles with `lib: ES2022` and
 * `types: []`, so its declarations name neither DOM nor Node types and a consumer needs
 * neither. Node 20+ and every current browser provide all of them.
 */

/** What the client needs of an `AbortSignal`; the DOM's and Node's fit. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

interface AbortControllerLike {
  readonly signal: AbortSignalLike;
  abort(reason?: unknown): void;
}

interface CryptoKeyLike {
  readonly type: string;
}

interface SubtleLike {
  importKey(
    format: 'raw',
    key: Uint8Array,
    algorithm: { name: 'HMAC'; hash: 'SHA-256' },
    extractable: false,
    usages: ['verify'],
  ): Promise<CryptoKeyLike>;
  verify(algorithm: 'HMAC', key: CryptoKeyLike, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
}

interface Runtime {
  fetch?: unknown;
  TextEncoder: new () => { encode(text: string): Uint8Array };
  TextDecoder: new () => { decode(bytes: Uint8Array): string };
  AbortController: new () => AbortControllerLike;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  atob(base64: string): string;
  crypto: { subtle: SubtleLike };
}

export const runtime = globalThis as unknown as Runtime;
