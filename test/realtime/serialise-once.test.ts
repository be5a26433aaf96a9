import { describe, expect, it } from 'vitest';
import { notifyPayload, type RealtimeEvent } from '../../src/realtime/publish.js';
import { jsonOnce } from '../../src/text/json-once.js';
import { eventBody, publicEventId } from '../../src/webhooks-out/outbox.js';

// A thread shared by the realtime and the outbound event of one announcement.
const thread = {
  id: 7,
  contactName: 'Zoë "Z" \\ Ünal\n',
  labels: ['vip', 'ß'],
  sla: { firstResponse: null },
  lastMessagePreview: '</script>\u2028',
};

describe('events whose data is serialised once', () => {
  it('a realtime payload reads as JSON.stringify writes the event, with and without a target', () => {
    const serialise = jsonOnce();
    // As announcements makes them: the target, when there is one, after the data.
    const events: RealtimeEvent[] = [
      { type: 'thread.updated', workspaceId: 3, data: thread },
      { type: 'notification.created', workspaceId: 3, data: { id: 1 }, targetUserId: 11 },
    ];
    for (const event of events) expect(notifyPayload(event, serialise)).toBe(JSON.stringify(event));
  });

  it('an event body is the text JSON.stringify writes, and the data both events share is serialised once', () => {
    let serialised = 0;
    const shared = {
      toJSON() {
        serialised++;
        return thread;
      },
    };
    const serialise = jsonOnce();
    const at = new Date('2026-11-27T12:00:00.123Z');
    const id = '0193a5b2-0000-7000-8000-000000000001';
    const event = { type: 'thread.updated' as const, workspaceId: 3, data: shared };
    expect(eventBody(id, event, at, serialise)).toBe(
      JSON.stringify({ id: publicEventId(id), type: event.type, createdAt: at.toISOString(), workspaceId: 3, data: thread }),
    );
    expect(notifyPayload(event, serialise)).toBe(JSON.stringify({ ...event, data: thread }));
    expect(serialised).toBe(1);
  });

  it('an event id is evt_ and its UUID without dashes, in whatever form the UUID came', () => {
    expect(publicEventId('0193a5b2-0000-7000-8000-000000000001')).toBe('evt_0193a5b2000070008000000000000001');
    expect(publicEventId('0193a5b2000070008000000000000001')).toBe('evt_0193a5b2000070008000000000000001');
  });
});
