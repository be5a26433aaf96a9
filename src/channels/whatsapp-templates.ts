import { isObject, storableJson } from './channel.js';
import { apiUrl, providerMessage, readCapped } from './provider-http.js';
import { outcomes } from './send-outcome.js';

/** One template as Meta lists it, values kept as they come. */
export interface ProviderTemplate {
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown[];
}

/** A WABA with more templates than this many pages is refused rather than read forever. */
const MAX_PAGES = 100;

/**
 * Reads every page of `GET {apiBaseUrl}/{wabaId}/message_templates`, following `paging.next`.
 * A `next` that leaves the API's origin is refused: the Bearer token would follow it. Throws
 * an Error whose text names the problem (secrets cut out) when any page fails, so a caller
 * keeps its previous list.
 */
export async function fetchWhatsappTemplates(opts: {
  apiBaseUrl: string;
  wabaId: string;
  accessToken: string;
  timeoutMs: number;
}): Promise<ProviderTemplate[]> {
  const clean = (text: string) => {
    const o = outcomes([opts.accessToken]).failed(text);
    return o.outcome === 'failed' ? o.error : text;
  };
  const first = new URL(apiUrl(opts.apiBaseUrl, `/${encodeURIComponent(opts.wabaId)}/message_templates`));
  first.searchParams.set('limit', '100');
  const templates: ProviderTemplate[] = [];
  let url: URL | undefined = first;
  for (let page = 1; url; page++) {
    if (page > MAX_PAGES) throw new Error(`more than ${MAX_PAGES} pages of templates`);
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${opts.accessToken}`, accept: 'application/json' },
        redirect: 'manual',
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      text = await readCapped(res);
    } catch (err) {
      throw new Error(clean(`page ${page}: ${(err as Error).message}`));
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (res.status < 200 || res.status > 299) {
      const message = providerMessage(body);
      throw new Error(clean(`page ${page}: HTTP ${res.status}${message ? `: ${message}` : ''}`));
    }
    if (!isObject(body) || !Array.isArray(body.data)) throw new Error(`page ${page}: the answer has no "data" list`);
    for (const [i, item] of body.data.entries()) templates.push(parseTemplate(item, `page ${page}, data[${i}]`));
    const next = isObject(body.paging) && typeof body.paging.next === 'string' ? body.paging.next : undefined;
    url = next === undefined ? undefined : new URL(next, first);
    if (url && url.origin !== first.origin) throw new Error(`page ${page}: paging.next leaves ${first.origin}; not followed`);
  }
  return templates;
}

function parseTemplate(item: unknown, where: string): ProviderTemplate {
  if (!isObject(item) || typeof item.name !== 'string' || typeof item.language !== 'string')
    throw new Error(`${where}: a template without a name or language`);
  // Stored as Meta gave them, but storable: one NUL or lone surrogate in one template would
  // fail the write of the connection's whole list, and the sync would stay `running`.
  const text = (v: unknown) => (typeof v === 'string' ? (storableJson(v) as string) : '');
  return {
    name: text(item.name),
    language: text(item.language),
    category: text(item.category),
    status: text(item.status),
    components: Array.isArray(item.components) ? (storableJson(item.components) as unknown[]) : [],
  };
}
