// The provider traffic the bench and the fault suite send: a WhatsApp Cloud API delivery of one
// text message, as Meta POSTs it to a webhook.

export interface WhatsappText {
  /** The business line the delivery is for (`metadata.phone_number_id`). */
  phoneNumberId: string;
  /** The customer's WhatsApp id, and the name on their profile. */
  from: string;
  name: string;
  /** The provider's message id: unique per message, the key a provider retry repeats. */
  id: string;
  text: string;
  /** The provider's timestamp in Unix seconds; now when absent. */
  timestamp?: number;
}

/** Meta's envelope around one change of the business line `phoneNumberId`. */
function envelope(phoneNumberId: string, value: Record<string, unknown>): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              ...value,
            },
          },
        ],
      },
    ],
  });
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The JSON body of a delivery carrying one inbound text message. */
export function whatsappTextBody(m: WhatsappText): string {
  return envelope(m.phoneNumberId, {
    contacts: [{ profile: { name: m.name }, wa_id: m.from }],
    messages: [{ from: m.from, id: m.id, timestamp: String(m.timestamp ?? nowSeconds()), type: 'text', text: { body: m.text } }],
  });
}

/** The JSON body of a delivery carrying one receipt for the message `id` sent to `recipient`. */
export function whatsappStatusBody(s: { phoneNumberId: string; id: string; status: string; recipient: string }): string {
  return envelope(s.phoneNumberId, {
    statuses: [{ id: s.id, status: s.status, timestamp: String(nowSeconds()), recipient_id: s.recipient }],
  });
}
