/*
 * inbox live chat widget. Plain JavaScript, no build step, no dependencies.
 *
 *   <script src="https://inbox.example/livechat/widget.js" data-widget-key="wk_…" async></script>
 *
 * Its heading, accent colour, greeting and pre-chat form are the widget's settings, read at
 * start from `GET /v1/livechat/:widgetKey/config` (set in the console). Optional attributes:
 * data-title (the heading) and data-color (the accent) when the settings leave them unset,
 * data-mode="page" (fills the page instead of a floating button; the hosted page uses it).
 * The visitor token is kept in localStorage per widget key; agents' replies arrive over a
 * websocket, which reconnects after the network drops and then reads the thread again.
 * Visitors may attach a file (uploaded first, then sent by id); images show inline, other
 * files as links, both through the signed links the service gives visitors.
 * A satisfaction survey (a message ending in the service's `/csat/<token>` link, sent when an
 * agent resolves the conversation) shows five buttons under it, which post the rating there.
 */
(() => {
  const script = document.currentScript;
  if (!script?.dataset.widgetKey) return;
  const key = script.dataset.widgetKey;
  const pageMode = script.dataset.mode === 'page';
  let title = script.dataset.title || 'Chat with us';
  const accent = script.dataset.color || '#2348c9';
  let preChat = { name: false, email: false };
  // The service's base URL is where this script came from (a path prefix included).
  const base = script.src.replace(/\/livechat\/widget\.js(?:[?#].*)?$/, '');
  const api = `${base}/v1/livechat/${encodeURIComponent(key)}`;
  const storageKey = `inbox-livechat:${key}`;

  // ---- the visitor token, kept across page loads (memory only when storage is refused) ----
  let memory = null;
  const store = {
    get() {
      try {
        return JSON.parse(localStorage.getItem(storageKey) || 'null');
      } catch {
        return memory;
      }
    },
    set(value) {
      memory = value;
      try {
        if (value) localStorage.setItem(storageKey, JSON.stringify(value));
        else localStorage.removeItem(storageKey);
      } catch {
        /* private mode: memory only */
      }
    },
  };

  // ---- the DOM, inside a shadow root so the host page's styles neither leak in nor out ----
  const host = document.createElement('div');
  host.setAttribute('data-inbox-livechat', '');
  const root = host.attachShadow({ mode: 'open' });
  root.innerHTML = `
<style>
  :host { all: initial; }
  * { box-sizing: border-box; }
  .launcher, .panel { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #16181d; }
  .launcher { position: fixed; right: 20px; bottom: 20px; z-index: 2147483000; width: 56px; height: 56px; border-radius: 50%;
    border: 0; background: var(--accent); color: var(--on-accent); box-shadow: 0 4px 16px rgba(0,0,0,.25); cursor: pointer; display: grid; place-items: center; }
  .launcher svg { width: 28px; height: 28px; }
  .launcher[aria-expanded="true"] .when-closed, .launcher[aria-expanded="false"] .when-open { display: none; }
  .panel { position: fixed; right: 20px; bottom: 88px; z-index: 2147483000; width: 360px; height: min(560px, calc(100vh - 110px));
    display: flex; flex-direction: column; background: #fff; border-radius: 14px; box-shadow: 0 12px 40px rgba(0,0,0,.28); overflow: hidden; }
  .panel[hidden] { display: none; }
  .page { position: static; width: 100%; max-width: 720px; height: 100vh; height: 100dvh; margin: 0 auto; border-radius: 0; box-shadow: none; }
  header { display: flex; align-items: center; gap: 8px; padding: 14px 16px; background: var(--accent); color: var(--on-accent); }
  h1, h2 { flex: 1; margin: 0; font-size: 17px; font-weight: 600; }
  .close { border: 0; background: transparent; color: inherit; width: 36px; height: 36px; border-radius: 8px; cursor: pointer; font-size: 22px; line-height: 1; }
  .status { margin: 0; padding: 6px 16px; font-size: 13px; background: #fff4d6; color: #5c4400; }
  .status:empty { display: none; }
  .log { flex: 1; overflow-y: auto; padding: 16px; background: #f5f6f8; }
  .items { min-height: 100%; margin: 0; padding: 0; list-style: none; display: flex; flex-direction: column; gap: 8px; }
  .hint { margin: auto 0; text-align: center; color: #4a505c; }
  .msg { max-width: 80%; padding: 8px 12px; border-radius: 14px; white-space: pre-wrap; overflow-wrap: anywhere; }
  .theirs { align-self: flex-start; background: #fff; border: 1px solid #dcdfe5; border-bottom-left-radius: 4px; }
  .mine { align-self: flex-end; background: var(--accent); color: var(--on-accent); border-bottom-right-radius: 4px; }
  .who { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  time { display: block; margin-top: 2px; font-size: 11px; opacity: .75; }
  .files { display: flex; flex-direction: column; gap: 4px; margin-top: 4px; }
  .files img { display: block; max-width: 100%; max-height: 240px; border-radius: 8px; }
  .files a { color: inherit; }
  form { display: grid; grid-template-columns: auto 1fr auto; gap: 8px; padding: 12px; border-top: 1px solid #dcdfe5; background: #fff; }
  .intro { grid-column: 1 / -1; display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
  .intro[hidden] { display: none; }
  label { display: block; font-size: 12px; font-weight: 600; color: #33373f; margin-bottom: 2px; }
  input, textarea { width: 100%; font: inherit; color: inherit; padding: 8px 10px; border: 1px solid #8a909c; border-radius: 8px; background: #fff; }
  textarea { resize: none; min-height: 42px; max-height: 120px; }
  .send { align-self: end; height: 42px; padding: 0 16px; border: 0; border-radius: 8px; background: var(--accent); color: var(--on-accent); font: inherit; font-weight: 600; cursor: pointer; }
  .send:disabled { opacity: .6; cursor: progress; }
  .attach { align-self: end; display: grid; place-items: center; width: 42px; height: 42px; margin: 0; border: 1px solid #8a909c;
    border-radius: 8px; cursor: pointer; color: #33373f; }
  .attach svg { width: 22px; height: 22px; }
  .attach input { position: absolute; width: 1px; height: 1px; opacity: 0; }
  .attach:focus-within { outline: 3px solid #f0a500; outline-offset: 2px; }
  .chosen { grid-column: 1 / -1; margin: 0; font-size: 13px; color: #33373f; }
  .chosen:empty { display: none; }
  .csat { margin-top: 8px; }
  .csat p { margin: 0 0 6px; font-size: 13px; }
  .csat .choices { display: flex; gap: 6px; }
  .csat button { min-width: 40px; height: 40px; border: 1px solid #8a909c; border-radius: 8px; background: #fff; color: #16181d;
    font: inherit; font-weight: 600; cursor: pointer; }
  .csat button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: var(--on-accent); }
  .csat .said { margin: 6px 0 0; }
  .error { grid-column: 1 / -1; margin: 0; color: #a8071a; font-size: 13px; }
  .error:empty { display: none; }
  :focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
  @media (max-width: 480px) {
    .panel:not(.page) { inset: 0; width: 100%; height: 100%; border-radius: 0; }
    .intro { grid-template-columns: 1fr; }
  }
</style>
${
  pageMode
    ? ''
    : `<button class="launcher" type="button" aria-expanded="false" aria-controls="panel" aria-label="Open chat: ${escapeHtml(title)}">
  <svg class="when-closed" viewBox="0 0 24 24" aria-hidden="true" fill="currentColor"><path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z"/></svg>
  <svg class="when-open" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2.5" stroke-linecap="round"><path d="M6 9l6 6 6-6"/></svg>
</button>`
}
<section class="panel${pageMode ? ' page' : ''}" id="panel" aria-labelledby="title" ${pageMode ? '' : 'role="dialog" hidden'}>
  <header>
    ${pageMode ? '<h1 id="title"></h1>' : '<h2 id="title"></h2><button class="close" type="button" aria-label="Close chat">×</button>'}
  </header>
  <p class="status" role="status"></p>
  <div class="log" role="log" aria-live="polite" aria-label="Conversation" tabindex="0"><ol class="items"></ol></div>
  <form novalidate>
    <div class="intro">
      <div><label for="name">Your name (optional)</label><input id="name" name="name" autocomplete="name" maxlength="200"></div>
      <div><label for="email">E-mail (optional)</label><input id="email" name="email" type="email" autocomplete="email" maxlength="320"></div>
    </div>
    <label class="attach" title="Attach a file"><svg viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M21 11.5l-8.6 8.6a5.5 5.5 0 0 1-7.8-7.8l8.6-8.6a3.7 3.7 0 0 1 5.2 5.2l-8.6 8.6a1.8 1.8 0 0 1-2.6-2.6l8-8"/></svg><input id="file" name="file" type="file" aria-label="Attach a file"></label>
    <div><label for="text">Message</label><textarea id="text" name="text" rows="1" maxlength="4096" placeholder="Write a message…" enterkeyhint="send"></textarea></div>
    <button class="send" type="submit">Send</button>
    <p class="chosen" aria-live="polite"></p>
    <p class="error" role="alert"></p>
  </form>
</section>`;
  setAccent(accent);
  const $ = (selector) => root.querySelector(selector);
  const panel = $('.panel');
  const launcher = $('.launcher');
  const log = $('.log'); // scrolls
  const items = $('.items'); // the messages, a list inside the live region
  const statusLine = $('.status');
  const errorLine = $('.error');
  const form = $('form');
  const textBox = $('#text');
  const sendButton = $('.send');
  const intro = $('.intro');
  const fileInput = $('#file');
  const chosen = $('.chosen');
  $('#title').textContent = title;

  /** The accent, and the text colour that reads on it: white, or near-black on a light accent. */
  function setAccent(colour) {
    host.style.setProperty('--accent', colour);
    host.style.setProperty('--on-accent', readableOn(colour));
  }

  /** White or #16181d, whichever contrasts more with a `#rgb`/`#rrggbb` colour (WCAG luminance). */
  function readableOn(colour) {
    const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(colour.trim());
    if (!hex) return '#fff';
    const digits = hex[1].length === 3 ? [...hex[1]].map((d) => d + d).join('') : hex[1];
    const [r, g, b] = [0, 2, 4].map((i) => {
      const c = Number.parseInt(digits.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    const light = 0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05;
    // #16181d's luminance is 0.0091.
    return 1.05 / light >= light / 0.0591 ? '#fff' : '#16181d';
  }

  function escapeHtml(s) {
    return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  }

  // ---- the conversation on screen ----
  const shown = new Map(); // message id → its <li>
  const hint = document.createElement('li');
  hint.className = 'hint';
  hint.textContent = 'Ask us anything. We reply right here.';
  items.append(hint);

  /** The settings from the console: heading, accent, greeting, and which fields to require first. */
  function applyConfig(config) {
    if (config.title) {
      title = config.title;
      $('#title').textContent = title;
      launcher?.setAttribute('aria-label', `${panel.hidden ? 'Open' : 'Close'} chat: ${title}`);
    }
    if (config.colour) setAccent(config.colour);
    if (config.greeting) hint.textContent = config.greeting;
    if (config.preChatForm) preChat = config.preChatForm;
    for (const [field, label] of [
      ['name', 'Your name'],
      ['email', 'E-mail'],
    ]) {
      const input = $(`#${field}`);
      input.required = !!preChat[field];
      input.setAttribute('aria-required', String(!!preChat[field]));
      root.querySelector(`label[for="${field}"]`).textContent = preChat[field] ? label : `${label} (optional)`;
    }
  }

  function render(message) {
    let item = shown.get(message.id);
    if (!item) {
      item = document.createElement('li');
      item.className = `msg ${message.direction === 'inbound' ? 'mine' : 'theirs'}`;
      const who = document.createElement('span');
      who.className = 'who';
      who.textContent = message.direction === 'inbound' ? 'You: ' : 'Support: ';
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = message.text;
      const time = document.createElement('time');
      time.dateTime = message.createdAt;
      time.textContent = new Date(message.createdAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
      const files = document.createElement('div');
      files.className = 'files';
      item.append(who, text, files, time);
      const survey = message.direction === 'outbound' ? SURVEY_LINK.exec(message.text) : null;
      if (survey) item.append(surveyButtons(survey[1]));
      item.dataset.at = `${Date.parse(message.createdAt)}`;
      item.dataset.id = `${message.id}`;
      const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
      // Keep the thread in order: a message read late (after a reconnect) goes where it belongs.
      const after = [...shown.values()].find(
        (li) =>
          Number(li.dataset.at) > Date.parse(message.createdAt) ||
          (Number(li.dataset.at) === Date.parse(message.createdAt) && Number(li.dataset.id) > message.id),
      );
      items.insertBefore(item, after || null);
      shown.set(message.id, item);
      hint.remove();
      if (nearBottom || message.direction === 'inbound') log.scrollTop = log.scrollHeight;
    }
    item.dataset.status = message.status;
    renderFiles(item.querySelector('.files'), message.attachments || []);
  }

  // ---- the satisfaction survey: its link's token, rated here with one click ----
  const SURVEY_LINK = /\/csat\/([A-Za-z0-9_-]{20,64})\s*$/;
  const CHOICES = ['very dissatisfied', 'dissatisfied', 'neutral', 'satisfied', 'very satisfied'];

  function surveyButtons(token) {
    const box = document.createElement('div');
    box.className = 'csat';
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', 'Rate this conversation from 1 to 5');
    const label = document.createElement('p');
    label.textContent = 'Rate us (1 = poor, 5 = great):';
    label.setAttribute('aria-hidden', 'true');
    const row = document.createElement('div');
    row.className = 'choices';
    const said = document.createElement('p');
    said.className = 'said';
    said.setAttribute('role', 'status');
    const buttons = CHOICES.map((words, i) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = String(i + 1);
      button.setAttribute('aria-label', `${i + 1} of 5: ${words}`);
      button.setAttribute('aria-pressed', 'false');
      button.addEventListener('click', async () => {
        said.textContent = '';
        try {
          const res = await fetch(`${base}/csat/${token}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ rating: i + 1 }),
            credentials: 'omit',
          });
          if (res.ok) {
            for (const b of buttons) b.setAttribute('aria-pressed', String(b === button));
            said.textContent = 'Thank you for your rating!';
          } else said.textContent = res.status === 410 ? 'This survey has closed.' : 'Could not save your rating. Please try again.';
        } catch {
          said.textContent = 'Could not save your rating: check your connection and try again.';
        }
      });
      return button;
    });
    row.append(...buttons);
    box.append(label, row, said);
    return box;
  }

  /** Images inline, other files as links; a file still being fetched says so. */
  function renderFiles(box, attachments) {
    box.replaceChildren(
      ...attachments.map((a) => {
        const name = a.filename || (a.kind === 'image' ? 'image' : 'file');
        if (a.status !== 'stored') {
          const note = document.createElement('span');
          note.textContent = a.status === 'failed' ? `${name} (could not be loaded)` : `${name} (loading…)`;
          return note;
        }
        // Only raster images show inline: the service serves any other image type (SVG) as a
        // download, which an <img> could not show.
        if ((a.kind === 'image' || a.kind === 'sticker') && /^image\/(png|jpeg|gif|webp)$/.test(a.contentType)) {
          const img = document.createElement('img');
          img.src = a.url;
          img.alt = name;
          img.loading = 'lazy';
          return img;
        }
        const link = document.createElement('a');
        link.href = a.url;
        link.textContent = name;
        link.target = '_blank';
        link.rel = 'noopener noreferrer';
        return link;
      }),
    );
  }

  function setStatus(text) {
    statusLine.textContent = text;
  }

  // ---- talking to the service ----
  let session = store.get(); // { token, threadId } once a conversation is open
  intro.hidden = !!session;

  async function call(method, path, body) {
    const headers = { accept: 'application/json' };
    const form = body instanceof FormData;
    if (body !== undefined && !form) headers['content-type'] = 'application/json';
    if (session) headers.authorization = `Bearer ${session.token}`;
    const res = await fetch(`${api}${path}`, {
      method,
      headers,
      body: body === undefined || form ? body : JSON.stringify(body),
      credentials: 'omit',
    });
    const json = await res.json().catch(() => ({}));
    return { status: res.status, json, retryAfter: res.headers.get('retry-after') };
  }

  function forget() {
    session = null;
    store.set(null);
    intro.hidden = false;
    closeSocket();
  }

  /** Reads the thread (the newest 100) and shows what is not on screen yet; false when the token no longer works. */
  async function refresh() {
    if (!session) return false;
    const res = await call('GET', '/messages?limit=100');
    // 401: the token ended; 404: the widget was deleted. Either way this conversation is over.
    if (res.status === 401 || res.status === 404) {
      forget();
      return false;
    }
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    for (const m of res.json.data.slice().reverse()) render(m);
    return true;
  }

  // ---- the socket: agents' replies live; reconnects with a growing delay (1 s … 10 s) ----
  let socket = null;
  let retryDelay = 1000;
  let retryTimer = null;

  function closeSocket() {
    clearTimeout(retryTimer);
    if (socket) {
      const s = socket;
      socket = null;
      s.onclose = null;
      s.close();
    }
  }

  function connect() {
    if (!session || socket) return;
    clearTimeout(retryTimer);
    setStatus(navigator.onLine === false ? 'You are offline. Reconnecting…' : 'Connecting…');
    const url = `${api.replace(/^http/, 'ws')}/socket?visitorToken=${encodeURIComponent(session.token)}`;
    const s = new WebSocket(url);
    socket = s;
    s.onopen = async () => {
      // Open first, then read: nothing sent in between can be missed.
      retryDelay = 1000;
      setStatus('');
      try {
        await refresh();
      } catch {
        /* shown on the next reconnect */
      }
    };
    s.onmessage = (event) => {
      try {
        const frame = JSON.parse(event.data);
        if (frame?.data && (frame.type === 'message.created' || frame.type === 'message.updated')) render(frame.data);
      } catch {
        /* not a frame of ours */
      }
    };
    s.onclose = async () => {
      if (socket !== s) return;
      socket = null;
      setStatus('Connection lost. Reconnecting…');
      // A token that no longer works ends here (a new conversation starts with the next message).
      const alive = await refresh().catch(() => true);
      if (!alive) {
        setStatus('');
        return;
      }
      retryTimer = setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 10_000);
    };
  }

  window.addEventListener('online', () => {
    retryDelay = 1000;
    if (!socket) connect();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && !socket) connect();
  });

  /** What the pre-chat form still lacks, said to the visitor (the field gets the focus); null when complete. */
  function missing() {
    if (session) return null;
    if (preChat.name && !$('#name').value.trim()) return ['name', 'Please enter your name.'];
    if (preChat.email && !$('#email').value.trim()) return ['email', 'Please enter your e-mail address.'];
    return null;
  }

  async function start() {
    const body = {};
    const name = $('#name').value.trim();
    const email = $('#email').value.trim();
    if (name) body.name = name;
    if (email) body.email = email;
    const res = await call('POST', '/conversations', body);
    if (res.status !== 201) return res;
    session = { token: res.json.data.visitorToken, threadId: res.json.data.threadId };
    store.set(session);
    intro.hidden = true;
    connect();
    return res;
  }

  function explain(res) {
    if (res.status === 413) return 'That file is too large to send.';
    if (res.status === 429) return `You are sending messages too quickly. Please wait ${res.retryAfter || 'a few'} seconds.`;
    if (res.status === 422 && /email/i.test(res.json.error?.message || '')) return 'Please check the e-mail address.';
    return res.json.error?.message || `Something went wrong (HTTP ${res.status}).`;
  }

  /** The message body: the text, and the file uploaded first (its id) when one is chosen. */
  async function compose(text, file) {
    const body = text ? { text } : {};
    if (!file) return { body };
    const data = new FormData();
    data.append('file', file, file.name);
    const uploaded = await call('POST', '/attachments', data);
    if (uploaded.status !== 201) return { res: uploaded };
    body.attachmentIds = [uploaded.json.data.id];
    return { body };
  }

  async function sendOnce(text, file) {
    const { body, res } = await compose(text, file);
    return res || call('POST', '/messages', body);
  }

  async function send(text, file) {
    if (!session) {
      const started = await start();
      if (started.status !== 201) return explain(started);
    }
    let res = await sendOnce(text, file);
    if (res.status === 401) {
      // The token expired: start over once.
      forget();
      const started = await start();
      if (started.status !== 201) return explain(started);
      res = await sendOnce(text, file);
    }
    if (res.status !== 201) return explain(res);
    render(res.json.data);
    return null;
  }

  fileInput.addEventListener('change', () => {
    const file = fileInput.files[0];
    chosen.textContent = file ? `Attached: ${file.name}` : '';
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = textBox.value.trim();
    const file = fileInput.files[0] || null;
    if ((!text && !file) || sendButton.disabled) return;
    errorLine.textContent = '';
    const lacking = missing();
    if (lacking) {
      errorLine.textContent = lacking[1];
      $(`#${lacking[0]}`).focus();
      return;
    }
    sendButton.disabled = true;
    try {
      const problem = await send(text, file);
      if (problem) errorLine.textContent = problem;
      else {
        textBox.value = '';
        fileInput.value = '';
        chosen.textContent = '';
        grow();
      }
    } catch {
      errorLine.textContent = 'Could not send: check your connection and try again.';
    } finally {
      sendButton.disabled = false;
      textBox.focus();
    }
  });

  // Enter sends, Shift+Enter starts a new line; the box grows with its text.
  textBox.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  function grow() {
    textBox.style.height = 'auto';
    textBox.style.height = `${Math.min(textBox.scrollHeight + 2, 120)}px`;
  }
  textBox.addEventListener('input', grow);

  // ---- opening and closing the floating panel ----
  function setOpen(open) {
    panel.hidden = !open;
    launcher.setAttribute('aria-expanded', String(open));
    launcher.setAttribute('aria-label', `${open ? 'Close' : 'Open'} chat: ${title}`);
    if (open) {
      textBox.focus();
      log.scrollTop = log.scrollHeight;
    } else launcher.focus();
  }
  if (!pageMode) {
    launcher.addEventListener('click', () => setOpen(panel.hidden));
    $('.close').addEventListener('click', () => setOpen(false));
    panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') setOpen(false);
    });
  }

  // Unset or unreadable settings leave the defaults: the chat works either way.
  fetch(`${api}/config`, { headers: { accept: 'application/json' }, credentials: 'omit' })
    .then((res) => (res.ok ? res.json() : null))
    .then((json) => json?.data && applyConfig(json.data))
    .catch(() => {});

  const mount = () => {
    document.body.append(host);
    if (pageMode) textBox.focus();
    if (session) connect();
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);
})();
