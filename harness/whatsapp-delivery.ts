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
}

/** The JSON body of a delivery carrying one inbound text message. */
export function whatsappTextBody(m: WhatsappText): string {
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
              metadata: { display_phone_number: '15550783881', phone_number_id: m.phoneNumberId },
              contacts: [{ profile: { name: m.name }, wa_id: m.from }],
              messages: [
                { from: m.from, id: m.id, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: m.text } },
              ],
            },
          },
        ],
      },
    ],
  });
}
