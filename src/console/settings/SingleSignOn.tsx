import { useState } from 'preact/hooks';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, useLoad } from '../shared/use-load';
import { Failure } from './Failure';

/**
 * Single sign-on with the workspace's OpenID Connect provider (docs/security.md, "Single
 * sign-on"). The client secret is write-only: the service never answers it, so the field
 * stays empty and an empty field keeps the one set.
 */
export function SingleSignOn() {
  const s = useStore(session)!;
  const workspace = useLoad(() => s.client.workspace());
  const [edits, setEdits] = useState<Record<string, string | boolean>>({});
  const [saved, setSaved] = useState<string | null>(null);
  const sso = workspace.data?.sso ?? null;
  const value = (field: string, fallback: string | boolean) => (field in edits ? edits[field]! : fallback);
  const set = (field: string, v: string | boolean) => setEdits({ ...edits, [field]: v });
  const issuer = value('issuer', sso?.issuer ?? '') as string;
  const clientId = value('clientId', sso?.clientId ?? '') as string;
  const clientSecret = value('clientSecret', '') as string;
  const domains = value('domains', sso?.allowedDomains.join(', ') ?? '') as string;
  const role = value('role', sso?.defaultRoles.includes('admin') ? 'admin' : 'agent') as string;
  const enforce = value('enforce', sso?.enforce ?? false) as boolean;

  async function save(e: Event) {
    e.preventDefault();
    setSaved(null);
    const patch = {
      issuer: issuer.trim(),
      clientId: clientId.trim(),
      ...(clientSecret ? { clientSecret } : {}),
      allowedDomains: domains
        .split(/[\s,]+/)
        .map((d) => d.trim())
        .filter(Boolean),
      defaultRoles: [role as 'agent' | 'admin'],
      enforce,
    };
    if (await attempt(() => s.client.updateWorkspace({ sso: patch }), workspace.setError)) {
      setEdits({});
      setSaved('Single sign-on is saved.');
      await workspace.reload();
    }
  }

  async function turnOff() {
    setSaved(null);
    if (await attempt(() => s.client.updateWorkspace({ sso: null }), workspace.setError)) {
      setEdits({});
      setSaved('Single sign-on is off.');
      await workspace.reload();
    }
  }

  const origin = location.origin;
  return (
    <>
      <Failure error={workspace.error} />
      {saved && (
        <p class="notice" role="status">
          {saved}
        </p>
      )}
      <p>
        Register a web application at your identity provider with the redirect URI <code>{origin}/auth/sso/callback</code>. People sign in
        with “Single sign-on (SSO)” and the workspace number <strong>{workspace.data?.id ?? '…'}</strong>, or from{' '}
        <code>
          {origin}/auth/sso/{workspace.data?.id ?? '…'}/start
        </code>
        .
      </p>
      <form class="settings-form" onSubmit={save} aria-labelledby="sso-title">
        <h3 id="sso-title">OpenID Connect</h3>
        <label>
          Issuer URL
          <input type="url" required maxLength={500} value={issuer} onInput={(e) => set('issuer', e.currentTarget.value)} />
        </label>
        <label>
          Client ID
          <input required maxLength={500} value={clientId} onInput={(e) => set('clientId', e.currentTarget.value)} />
        </label>
        <label>
          Client secret
          <input
            type="password"
            autocomplete="off"
            required={!sso}
            maxLength={1000}
            placeholder={sso ? 'Set; leave empty to keep it' : ''}
            value={clientSecret}
            onInput={(e) => set('clientSecret', e.currentTarget.value)}
          />
        </label>
        <label>
          Allowed e-mail domains (comma-separated)
          <input required value={domains} onInput={(e) => set('domains', e.currentTarget.value)} />
        </label>
        <label>
          Role of people signing in for the first time
          <select value={role} onChange={(e) => set('role', e.currentTarget.value)}>
            <option value="agent">Agent</option>
            <option value="admin">Admin</option>
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={enforce} onChange={(e) => set('enforce', e.currentTarget.checked)} /> Only single sign-on (admins
          with two-factor sign-in keep their password)
        </label>
        <button type="submit" class="primary">
          Save single sign-on
        </button>
        {sso && (
          <button type="button" onClick={turnOff}>
            Turn single sign-on off
          </button>
        )}
      </form>
    </>
  );
}
