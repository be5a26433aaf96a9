import { useState } from 'preact/hooks';
import type {
  Connection,
  ConnectionCheck,
  ConnectionCredentials,
  ConnectionPatch,
  WebhookSecrets,
} from '../../../packages/client/src/index';
import { channelName } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, collect, useLoad } from '../shared/use-load';
import { Failure } from './Failure';
import { InlineForm } from './InlineForm';

/** Integrations a workspace admin connects, with the credential fields each takes (docs/connections.md). */
const INTEGRATIONS: [key: string, fields: (keyof ConnectionCredentials)[]][] = [
  ['whatsapp', ['accessToken']],
  ['whatsapp_session.waha', ['accessToken']],
  ['social_one.native', ['accessToken']],
  ['social_two.native', ['accessToken']],
  ['telegram', ['accessToken']],
  ['sms.twilio', ['accountSid', 'accessToken']],
  ['email.postmark', ['smtpUrl']],
  ['email.mailgun', ['smtpUrl']],
  ['email.imap', ['imapUrl', 'smtpUrl', 'username', 'password']],
  ['livechat', []],
];
const FIELD_NAMES: Record<keyof ConnectionCredentials, string> = {
  accessToken: 'Access token',
  accountSid: 'Account SID',
  smtpUrl: 'SMTP URL',
  imapUrl: 'IMAP URL',
  username: 'User name',
  password: 'Password',
};
/** A field's name inside a sentence: "access token", but "IMAP URL" and "account SID" keep their capitals. */
const inSentence = (name: string) => (/^[A-Z][a-z]/.test(name) ? name[0]!.toLowerCase() + name.slice(1) : name);
/** Fields that are no secret (a mailbox's servers and login name): shown as typed. */
const PLAIN_FIELDS: (keyof ConnectionCredentials)[] = ['imapUrl', 'username'];
/** What each field looks like, where the form can say it. */
const PLACEHOLDERS: Partial<Record<string, Partial<Record<keyof ConnectionCredentials, string>>>> = {
  'email.imap': { imapUrl: 'imaps://imap.example.com:993', smtpUrl: 'smtps://smtp.example.com:465', username: 'support@example.com' },
};
/** The webhook secrets each integration verifies with, and what the provider's console calls them (docs/connections.md). */
const SECRET_FIELDS: Record<string, [keyof WebhookSecrets, string][]> = {
  whatsapp: [['webhookSecret', 'Meta app secret']],
  'social_one.native': [['appSecret', 'Meta app secret']],
  'social_two.native': [['appSecret', 'Meta app secret']],
  'sms.twilio': [['authToken', 'Twilio auth token']],
  'whatsapp_session.waha': [['webhookSecret', 'WAHA HMAC key (16 to 255 characters)']],
  'email.postmark': [['webhookSecret', 'Postmark webhook password']],
  'email.mailgun': [['webhookSecret', 'Mailgun webhook signing key']],
};

/** Where to paste the URL in each provider's console (docs/connections.md, "Connecting each provider"). */
const STEPS: Record<string, string> = {
  whatsapp:
    'In Meta for Developers: WhatsApp → Configuration → Webhook → Edit. Paste the URL as Callback URL and the token as Verify token, verify and save, then subscribe to "messages".',
  'social_one.native':
    'In Meta for Developers: Messenger → Settings → Webhooks. Paste the URL as Callback URL and the token as Verify token, then subscribe the page to "messages".',
  'social_two.native':
    'In Meta for Developers: Instagram → Webhooks. Paste the URL as Callback URL and the token as Verify token, then subscribe to "messages".',
  'sms.twilio': 'In the Twilio console: Phone Numbers → your number → Messaging → "A message comes in": Webhook, HTTP POST, paste the URL.',
  'whatsapp_session.waha': "In WAHA: the session's webhook URL is this URL, events message and message.ack, with the same HMAC key.",
  'email.postmark':
    'In Postmark: the Inbound stream → Settings → Webhook URL: https://postmark:<password>@ followed by the URL without https://.',
  'email.mailgun': 'In Mailgun: Receiving → Create route → forward to this URL.',
  'email.imap':
    'Nothing to paste: the service reads the mailbox itself and answers from it. Gmail and Microsoft 365 need an app password (docs/email.md). Check the connection to try both logins.',
  telegram: 'Press "Connect webhook": the service tells Telegram where to send the bot\'s messages.',
  livechat: 'Copy the snippet into every page of your site.',
};

const fieldsOf = (key: string) => INTEGRATIONS.find(([k]) => k === key)?.[1] ?? ['accessToken'];

/** Only the fields that were typed: an empty field means "keep what is stored". */
function typed(values: Partial<Record<keyof ConnectionCredentials, string>>): ConnectionCredentials | undefined {
  const entries = Object.entries(values).filter(([, v]) => v && v.trim() !== '');
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as ConnectionCredentials);
}

/** Only the webhook secrets that were typed; none typed keeps the stored ones. */
function typedSecrets(values: Partial<Record<keyof WebhookSecrets, string>>): WebhookSecrets | undefined {
  const entries = Object.entries(values).filter(([, v]) => v && v.trim() !== '');
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as WebhookSecrets);
}

/**
 * The secrets a provider signs its deliveries with, write-only like credentials: when the
 * provider's is changed (Meta's app secret reset, a new Twilio auth token), it is typed here
 * again, or every delivery on the connection's URL is refused.
 */
function SecretFields({
  integrationKey,
  values,
  onInput,
  replace,
}: {
  integrationKey: string;
  values: Partial<Record<keyof WebhookSecrets, string>>;
  onInput(v: Partial<Record<keyof WebhookSecrets, string>>): void;
  replace: boolean;
}) {
  return (
    <>
      {(SECRET_FIELDS[integrationKey] ?? []).map(([f, label]) => (
        <label key={f}>
          {replace ? `Replace ${label}` : label}
          <input
            type="password"
            autocomplete="off"
            spellcheck={false}
            value={values[f] ?? ''}
            placeholder={replace ? 'leave empty to keep' : ''}
            onInput={(e) => onInput({ ...values, [f]: e.currentTarget.value })}
          />
        </label>
      ))}
    </>
  );
}

/**
 * The fields of a partly typed set that are still empty. The API replaces a connection's
 * credentials whole (docs/connections.md, "Setting them"), so one typed field alone would
 * drop the others; none typed keeps the stored set.
 */
function missingCredentials(integrationKey: string, values: Partial<Record<keyof ConnectionCredentials, string>>) {
  const fields = fieldsOf(integrationKey);
  const filled = fields.filter((f) => values[f]?.trim());
  return filled.length === 0 ? [] : fields.filter((f) => !filled.includes(f));
}

/**
 * Write-only inputs: a stored credential is never shown (the API never returns it); typing
 * into these replaces the whole set. `idPrefix` gives each input an id (to focus it), and
 * `invalid` marks the ones described by the message `describedBy` names.
 */
function CredentialFields({
  integrationKey,
  values,
  onInput,
  replace,
  idPrefix,
  invalid = [],
  describedBy,
}: {
  integrationKey: string;
  values: Partial<Record<keyof ConnectionCredentials, string>>;
  onInput(v: Partial<Record<keyof ConnectionCredentials, string>>): void;
  replace: boolean;
  idPrefix?: string;
  invalid?: (keyof ConnectionCredentials)[];
  describedBy?: string;
}) {
  return (
    <>
      {fieldsOf(integrationKey).map((f) => (
        <label key={f}>
          {replace ? `Replace ${inSentence(FIELD_NAMES[f])}` : FIELD_NAMES[f]}
          <input
            id={idPrefix && `${idPrefix}-${f}`}
            type={PLAIN_FIELDS.includes(f) ? 'text' : 'password'}
            autocomplete="off"
            spellcheck={false}
            value={values[f] ?? ''}
            placeholder={replace ? 'leave all empty to keep' : (PLACEHOLDERS[integrationKey]?.[f] ?? '')}
            aria-invalid={invalid.includes(f) ? 'true' : undefined}
            aria-describedby={invalid.includes(f) ? describedBy : undefined}
            onInput={(e) => onInput({ ...values, [f]: e.currentTarget.value })}
          />
        </label>
      ))}
    </>
  );
}

function EditConnection({ c, onDone }: { c: Connection; onDone(changed: boolean): void }) {
  const s = useStore(session)!;
  const [name, setName] = useState(c.name);
  const [autoAssign, setAutoAssign] = useState(c.autoAssign);
  const [folder, setFolder] = useState(c.imapFolder ?? '');
  const [creds, setCreds] = useState<Partial<Record<keyof ConnectionCredentials, string>>>({});
  const [clear, setClear] = useState(false);
  const [secrets, setSecrets] = useState<Partial<Record<keyof WebhookSecrets, string>>>({});
  const [error, setError] = useState<string | null>(null);
  // Set by a Save refused for a partly typed set; the fields it names follow what is typed.
  const [checked, setChecked] = useState(false);
  const fieldsId = `connection-${c.id}-credentials`;
  // A set the save would replace must be typed whole. Only an operator's connection with none
  // stored may be given part of one: the deployment supplies the rest (docs/connections.md).
  const wholeSet = c.hasCredentials || c.managedBy === 'workspace';
  const missing = checked && wholeSet && !clear ? missingCredentials(c.integrationKey, creds) : [];

  async function save(e: Event) {
    e.preventDefault();
    const unfilled = wholeSet && !clear ? missingCredentials(c.integrationKey, creds) : [];
    if (unfilled.length > 0) {
      setChecked(true);
      document.getElementById(`${fieldsId}-${unfilled[0]}`)?.focus();
      // The message sits above the field; on a phone the focus alone scrolls it under the header.
      requestAnimationFrame(() => document.getElementById(`${fieldsId}-missing`)?.scrollIntoView({ block: 'center' }));
      return;
    }
    const patch: ConnectionPatch = {};
    const webhookSecrets = typedSecrets(secrets);
    if (webhookSecrets) patch.webhookSecrets = webhookSecrets;
    if (name !== c.name) patch.name = name;
    if (autoAssign !== c.autoAssign) patch.autoAssign = autoAssign;
    if (c.integrationKey === 'email.imap' && folder.trim() !== (c.imapFolder ?? '')) patch.imapFolder = folder.trim() || null;
    const replaced = typed(creds);
    if (clear) patch.credentials = null;
    else if (replaced) patch.credentials = replaced;
    if (Object.keys(patch).length === 0) return onDone(false);
    if (await attempt(() => s.client.updateConnection(c.id, patch), setError)) onDone(true);
  }

  return (
    <InlineForm label={`Edit ${c.name}`} onSubmit={save} onCancel={() => onDone(false)}>
      <Failure error={error} />
      <label>
        Name
        <input required value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label class="check">
        <input type="checkbox" checked={autoAssign} onChange={(e) => setAutoAssign(e.currentTarget.checked)} />
        Assign new conversations automatically
      </label>
      {c.integrationKey === 'email.imap' && (
        <label>
          Folder
          <input value={folder} maxLength={255} placeholder="INBOX" onInput={(e) => setFolder(e.currentTarget.value)} />
        </label>
      )}
      {fieldsOf(c.integrationKey).length > 0 && (
        <>
          <p class="muted">Credentials: {c.hasCredentials ? 'set (never shown)' : 'none'}</p>
          {fieldsOf(c.integrationKey).length > 1 && (
            <p class="muted">They are replaced as a whole: type every field to replace them, or leave them all empty to keep them.</p>
          )}
          {missing.length > 0 && (
            <p class="error" role="alert" id={`${fieldsId}-missing`}>
              Type every credential or none: {missing.map((f) => FIELD_NAMES[f]).join(', ')} {missing.length === 1 ? 'is' : 'are'} empty.
              Nothing was saved.
            </p>
          )}
          <CredentialFields
            integrationKey={c.integrationKey}
            values={creds}
            onInput={setCreds}
            replace
            idPrefix={fieldsId}
            invalid={missing}
            describedBy={`${fieldsId}-missing`}
          />
          {c.hasCredentials && (
            <label class="check">
              <input type="checkbox" checked={clear} onChange={(e) => setClear(e.currentTarget.checked)} />
              Remove the stored credentials
            </label>
          )}
        </>
      )}
      {(SECRET_FIELDS[c.integrationKey] ?? []).length > 0 && (
        <>
          <p class="muted">Webhook secret: {c.hasWebhookSecrets ? 'set (never shown)' : 'none: deliveries on its URL are refused'}</p>
          <SecretFields integrationKey={c.integrationKey} values={secrets} onInput={setSecrets} replace />
        </>
      )}
    </InlineForm>
  );
}

/** How a site embeds a livechat connection's widget: one script tag. */
function embedSnippet(c: Connection): string {
  const origin = c.webhookUrl ? new URL(c.webhookUrl).origin : location.origin;
  return `<script src="${origin}/livechat/widget.js" data-widget-key="${c.externalAccountId}" async></script>`;
}

/** A livechat connection's settings: who may embed it, how it looks, what it asks first. */
function LivechatSettings({ c, onDone }: { c: Connection; onDone(changed: boolean): void }) {
  const s = useStore(session)!;
  const [origins, setOrigins] = useState((c.allowedOrigins ?? []).join('\n'));
  const [title, setTitle] = useState(c.title ?? '');
  const [colour, setColour] = useState(c.colour ?? '#2348c9');
  const [greeting, setGreeting] = useState(c.greeting ?? '');
  const [preChat, setPreChat] = useState(c.preChatForm ?? { name: false, email: false });
  const [error, setError] = useState<string | null>(null);

  async function save(e: Event) {
    e.preventDefault();
    const patch: ConnectionPatch = {
      allowedOrigins: origins
        .split('\n')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
      title: title.trim() || null,
      colour: colour === (c.colour ?? '#2348c9') ? (c.colour ?? null) : colour,
      greeting: greeting.trim() || null,
      preChatForm: preChat,
    };
    if (await attempt(() => s.client.updateConnection(c.id, patch), setError)) onDone(true);
  }

  return (
    <InlineForm labelledBy={`livechat-${c.id}`} onSubmit={save} onCancel={() => onDone(false)}>
      <h3 id={`livechat-${c.id}`}>Live chat settings: {c.name}</h3>
      <Failure error={error} />
      <label>
        Allowed origins (one per line; none = any site)
        <textarea rows={3} value={origins} placeholder="https://www.example.com" onInput={(e) => setOrigins(e.currentTarget.value)} />
      </label>
      <label>
        Title
        <input value={title} maxLength={100} placeholder="Chat with us" onInput={(e) => setTitle(e.currentTarget.value)} />
      </label>
      <label>
        Colour
        <input type="color" value={colour} onInput={(e) => setColour(e.currentTarget.value)} />
      </label>
      <label>
        Greeting (shown before the first message)
        <textarea
          rows={2}
          value={greeting}
          maxLength={1000}
          placeholder="Ask us anything. We reply right here."
          onInput={(e) => setGreeting(e.currentTarget.value)}
        />
      </label>
      <fieldset>
        <legend>Before the first message, ask for</legend>
        <label class="check">
          <input type="checkbox" checked={preChat.name} onChange={(e) => setPreChat({ ...preChat, name: e.currentTarget.checked })} />
          The visitor's name
        </label>
        <label class="check">
          <input type="checkbox" checked={preChat.email} onChange={(e) => setPreChat({ ...preChat, email: e.currentTarget.checked })} />
          The visitor's e-mail
        </label>
      </fieldset>
      <Copyable label="Embed snippet" value={embedSnippet(c)} />
    </InlineForm>
  );
}

/** The workspace's channel accounts: list, connect one, rename, auto-assign, replace credentials. */
export function Connections() {
  const s = useStore(session)!;
  const { data, error, reload, setError } = useLoad(() => collect(s.client.connections({ limit: 100 })));
  const [form, setForm] = useState({ integrationKey: 'whatsapp', externalAccountId: '', name: '', autoAssign: false, imapFolder: '' });
  const [creds, setCreds] = useState<Partial<Record<keyof ConnectionCredentials, string>>>({});
  const [secrets, setSecrets] = useState<Partial<Record<keyof WebhookSecrets, string>>>({});
  const [editing, setEditing] = useState<number | null>(null);
  const [livechatOf, setLivechatOf] = useState<number | null>(null);
  const [made, setMade] = useState<number | null>(null);

  async function create(e: Event) {
    e.preventDefault();
    const credentials = typed(creds);
    const webhookSecrets = typedSecrets(secrets);
    const body = {
      integrationKey: form.integrationKey,
      name: form.name,
      autoAssign: form.autoAssign,
      ...(form.externalAccountId.trim() ? { externalAccountId: form.externalAccountId.trim() } : {}),
      ...(credentials ? { credentials } : {}),
      ...(webhookSecrets ? { webhookSecrets } : {}),
      ...(form.integrationKey === 'email.imap' && form.imapFolder.trim() ? { imapFolder: form.imapFolder.trim() } : {}),
    };
    let connection: Connection | undefined;
    if (
      await attempt(async () => {
        connection = await s.client.createConnection(body);
      }, setError)
    ) {
      setForm({ ...form, externalAccountId: '', name: '', imapFolder: '' });
      setCreds({});
      setSecrets({});
      setMade(connection!.id);
      await reload();
    }
  }

  return (
    <>
      <Failure error={error} />
      <form class="settings-form" onSubmit={create} aria-labelledby="connection-new">
        <h3 id="connection-new">Add a channel</h3>
        <label>
          Channel
          <select
            value={form.integrationKey}
            onChange={(e) => {
              setForm({ ...form, integrationKey: e.currentTarget.value });
              setCreds({});
              setSecrets({});
            }}
          >
            {INTEGRATIONS.map(([key]) => (
              <option key={key} value={key}>
                {channelName(key)} ({key})
              </option>
            ))}
          </select>
        </label>
        <label>
          {form.integrationKey === 'email.imap' ? 'Mailbox address' : 'Account id'}
          {form.integrationKey === 'livechat' ? ' (widget key; empty for a new one)' : ''}
          <input
            required={form.integrationKey !== 'livechat'}
            value={form.externalAccountId}
            maxLength={320}
            onInput={(e) => setForm({ ...form, externalAccountId: e.currentTarget.value })}
          />
        </label>
        <label>
          Name
          <input required value={form.name} maxLength={200} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </label>
        <CredentialFields integrationKey={form.integrationKey} values={creds} onInput={setCreds} replace={false} />
        {form.integrationKey === 'email.imap' && (
          <label>
            Folder
            <input
              value={form.imapFolder}
              maxLength={255}
              placeholder="INBOX"
              onInput={(e) => setForm({ ...form, imapFolder: e.currentTarget.value })}
            />
          </label>
        )}
        <SecretFields integrationKey={form.integrationKey} values={secrets} onInput={setSecrets} replace={false} />
        <label class="check">
          <input type="checkbox" checked={form.autoAssign} onChange={(e) => setForm({ ...form, autoAssign: e.currentTarget.checked })} />
          Assign new conversations automatically
        </label>
        <button type="submit" class="primary">
          Connect
        </button>
      </form>
      {made !== null && data?.some((c) => c.id === made) && (
        <section class="settings-form" aria-labelledby="connection-made">
          <h3 id="connection-made">Now tell the provider</h3>
          <Setup c={data.find((c) => c.id === made)!} />
          <button type="button" onClick={() => setMade(null)}>
            Done
          </button>
        </section>
      )}
      {data && data.length === 0 && <p class="empty">No connections yet.</p>}
      <ul class="settings-list" aria-label="Connections">
        {(data ?? []).map((c) => (
          <li key={c.id}>
            {livechatOf === c.id ? (
              <LivechatSettings
                c={c}
                onDone={(changed) => {
                  setLivechatOf(null);
                  if (changed) void reload();
                }}
              />
            ) : editing === c.id ? (
              <EditConnection
                c={c}
                onDone={(changed) => {
                  setEditing(null);
                  if (changed) void reload();
                }}
              />
            ) : (
              <>
                <div>
                  <strong>{c.name}</strong>
                  <p class="muted">
                    {channelName(c.integrationKey)} · {c.externalAccountId} · credentials {c.hasCredentials ? 'set' : 'none'}
                    {c.autoAssign ? ' · auto-assign' : ''}
                  </p>
                  <Health c={c} />
                </div>
                <div class="row-actions">
                  <button type="button" id={`connection-${c.id}-edit`} onClick={() => setEditing(c.id)} aria-label={`Edit ${c.name}`}>
                    Edit
                  </button>
                  <button type="button" onClick={() => setMade(c.id)} aria-label={`Set up ${c.name}`}>
                    Set up
                  </button>
                  {c.integrationKey === 'livechat' && (
                    <button
                      type="button"
                      id={`connection-${c.id}-livechat`}
                      onClick={() => setLivechatOf(c.id)}
                      aria-label={`Live chat settings of ${c.name}`}
                    >
                      Live chat settings
                    </button>
                  )}
                  <DeleteButton c={c} onDeleted={() => void reload()} />
                </div>
              </>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

/** Last delivery and last error, as the connection records them. */
function Health({ c }: { c: Connection }) {
  const when = (at: string | null) => (at ? new Date(at).toLocaleString() : 'never');
  return (
    <p class="muted">
      Last delivery: {when(c.lastDeliveryAt)}
      {c.lastError && (
        <>
          {' '}
          ·{' '}
          <span role="note">
            last error ({when(c.lastErrorAt)}): {c.lastError}
          </span>
        </>
      )}
    </p>
  );
}

/** A value to paste elsewhere: read-only, selectable, with a copy button. */
function Copyable({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="row-actions">
      <label>
        {label}
        <input readOnly value={value} onFocus={(e) => e.currentTarget.select()} />
      </label>
      <button
        type="button"
        aria-label={`Copy the ${label.toLowerCase()}`}
        onClick={() =>
          void navigator.clipboard?.writeText(value).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

/** What to paste into the provider's console, the steps, and "Check connection". */
function Setup({ c }: { c: Connection }) {
  const s = useStore(session)!;
  const [result, setResult] = useState<ConnectionCheck | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <div>
      <Failure error={error} />
      {c.webhookUrl && c.integrationKey !== 'telegram' && <Copyable label="Webhook URL" value={c.webhookUrl} />}
      {c.webhookVerifyToken && <Copyable label="Verify token" value={c.webhookVerifyToken} />}
      {c.integrationKey === 'livechat' && <Copyable label="Embed snippet" value={embedSnippet(c)} />}
      {STEPS[c.integrationKey] && <p>{STEPS[c.integrationKey]}</p>}
      <div class="row-actions">
        {c.integrationKey === 'telegram' && (
          <button
            type="button"
            onClick={async () => {
              setResult(null);
              if (await attempt(() => s.client.connectTelegramWebhook(c.id), setError))
                setResult({ ok: true, message: "Telegram sends this bot's messages to the service now" });
            }}
          >
            Connect webhook
          </button>
        )}
        <button
          type="button"
          onClick={async () => {
            setResult(null);
            await attempt(async () => setResult(await s.client.checkConnection(c.id)), setError);
          }}
        >
          Check connection
        </button>
      </div>
      {result && (
        <p role="status" class={result.ok ? 'ok' : 'error'}>
          {result.ok ? 'Working: ' : 'Not working: '}
          {result.message}
        </p>
      )}
    </div>
  );
}

/** Deleting takes a second, deliberate press: its URL stops answering at once. */
function DeleteButton({ c, onDeleted }: { c: Connection; onDeleted(): void }) {
  const s = useStore(session)!;
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!confirming)
    return (
      <button type="button" onClick={() => setConfirming(true)} aria-label={`Delete ${c.name}`}>
        Delete
      </button>
    );
  return (
    <fieldset class="inline" aria-label={`Confirm deleting ${c.name}`}>
      <Failure error={error} />
      <span>Delete {c.name}? Its threads stay, read-only.</span>{' '}
      <button
        type="button"
        class="danger"
        onClick={async () => {
          if (await attempt(() => s.client.deleteConnection(c.id), setError)) onDeleted();
        }}
      >
        Yes, delete
      </button>
      <button type="button" onClick={() => setConfirming(false)}>
        Keep it
      </button>
    </fieldset>
  );
}
