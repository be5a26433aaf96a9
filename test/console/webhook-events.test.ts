import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENTS } from '../../src/console/settings/webhook-events.js';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../src/messaging/events.js';

describe('the console’s new-endpoint form', () => {
  it('offers every event type an endpoint may subscribe to, after "every event"', () => {
    expect(WEBHOOK_EVENTS).toEqual(['*', ...SUBSCRIBABLE_EVENT_TYPES]);
  });
});
