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

  it('bodies made one after another each carry their own time, type and workspace', () => {
    const made = [
      { at: new Date('2026-11-27T12:00:00.123Z'), type: 'message.created' as const, workspaceId: 3 },
      { at: new Date('2026-11-27T12:00:00.123Z'), type: 'thread.updated' as const, workspaceId: 12345678 },
      { at: new Date('2026-11-27T12:00:01Z'), type: 'message.created' as const, workspaceId: 3 },
      { at: new Date('1999-01-01T00:00:00Z'), type: 'ping' as const, workspaceId: 0 },
    ];
    for (const [n, { at, type, workspaceId }] of made.entries()) {
      const id = `0193a5b2-0000-7000-8000-00000000000${n}`;
      expect(eventBody(id, { type, workspaceId, data: thread }, at)).toBe(
        JSON.stringify({ id: publicEventId(id), type, createdAt: at.toISOString(), workspaceId, data: thread }),
      );
    }
  });

  it('an event id is evt_ and its UUID without dashes, in whatever form the UUID came', () => {
    expect(publicEventId('0193a5b2-0000-7000-8000-000000000001')).toBe('evt_0193a5b2000070008000000000000001');
    expect(publicEventId('0193a5b2-0000-7000-8000-00000000000f')).toBe('evt_0193a5b200007000800000000000000f');
    expect(publicEventId('0193a5b2000070008000000000000001')).toBe('evt_0193a5b2000070008000000000000001');
    expect(publicEventId('0193a5b2-0000-7000-8000-0000000000é1')).toBe('evt_0193a5b20000700080000000000000é1');
  });
});
