import type { Notification as InboxNotification } from '../../../packages/client/src/index';
import { navigate, route, threadIdOf } from '../shared/router';
import { createStore } from '../shared/store';
import { describe } from './describe';

/**
 * What a notification does beyond the bell (docs/console.md, "Desktop notifications and
 * sound"): a browser notification, once the agent allowed them from the bell's button (the
 * console never asks on its own, since a prompt on load is refused by most people and then
 * blocked for good), and a short tone when the agent turned the sound on (kept in this
 * browser). Only for what needs the agent: assigned, mentioned, a contact's message.
 */
const ALERTED: readonly InboxNotification['type'][] = ['assigned', 'mentioned', 'message'];
const SOUND_KEY = 'inbox.notify.sound';

type Permission = NotificationPermission | 'unsupported';
const supported = () => typeof globalThis.Notification === 'function';

export const permission = createStore<Permission>(supported() ? globalThis.Notification.permission : 'unsupported');
export const soundOn = createStore<boolean>(localStorage.getItem(SOUND_KEY) === 'on');
soundOn.subscribe((on) => localStorage.setItem(SOUND_KEY, on ? 'on' : 'off'));

/** Asks the browser, from the agent's click. */
export async function askPermission(): Promise<void> {
  if (!supported()) return;
  permission.set(await globalThis.Notification.requestPermission());
}

let audio: AudioContext | null = null;
/** Turning the sound on is a click, which lets the page start audio: the context is made then. */
export function setSound(on: boolean): void {
  soundOn.set(on);
  if (on) {
    audio ??= new AudioContext();
    void audio.resume().catch(() => undefined);
  }
}

/** A soft two-note chime, made here: no file to fetch or allow in the CSP. */
function chime(): void {
  audio ??= new AudioContext();
  const ctx = audio;
  const start = ctx.currentTime;
  for (const [i, hz] of [880, 1320].entries()) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = hz;
    gain.gain.setValueAtTime(0.0001, start + i * 0.12);
    gain.gain.exponentialRampToValueAtTime(0.15, start + i * 0.12 + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + i * 0.12 + 0.25);
    osc.connect(gain).connect(ctx.destination);
    osc.start(start + i * 0.12);
    osc.stop(start + i * 0.12 + 0.3);
  }
}

/** `onOpen`: the agent clicked the browser's notification (it opens the thread too). */
export function alert(n: InboxNotification, onOpen: () => void): void {
  if (!ALERTED.includes(n.type) || n.readAt) return;
  // A contact's message in the conversation the agent is reading is already in front of them.
  if (n.type === 'message' && document.visibilityState === 'visible' && threadIdOf(route.get()) === n.threadId) return;
  if (soundOn.get()) chime();
  if (permission.get() !== 'granted' || !supported()) return;
  const shown = new globalThis.Notification('Inbox', { body: describe(n), tag: `inbox-notification-${n.id}` });
  shown.onclick = () => {
    focus();
    onOpen();
    if (n.threadId !== null) navigate(`/c/${n.threadId}`);
    shown.close();
  };
}
