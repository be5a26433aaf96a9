import { Type } from 'typebox';
import type { PreChatForm } from '../db/types.js';
import { errors } from '../http/errors.js';
import { Nullable } from '../http/schemas.js';

/** The widget's look and first words, set per livechat connection (docs/livechat.md, "Settings"). */
export const LivechatTitle = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'livechat only: the widget\'s heading; null = the widget\'s default ("Chat with us")',
});
export const LivechatColour = Type.String({
  pattern: '^#[0-9A-Fa-f]{6}$',
  description: "livechat only: the widget's accent colour, #rrggbb; null = the widget's default",
});
export const LivechatGreeting = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'livechat only: what the widget shows before the first message; null = its default',
});
export const PreChatFormSchema = Type.Object(
  {
    name: Type.Boolean({ description: "ask the visitor's name before the first message" }),
    email: Type.Boolean({ description: "ask the visitor's e-mail before the first message" }),
  },
  {
    additionalProperties: false,
    description: 'livechat only: the fields the widget requires before the first message; what the visitor types goes on the contact',
  },
);

/** The settings as given on create or PATCH; null clears a text setting. */
export interface LivechatSettingsInput {
  title?: string | null;
  colour?: string | null;
  greeting?: string | null;
  preChatForm?: PreChatForm;
}

/** The settings as stored: text trimmed (blank = null), the colour in lowercase. */
export interface LivechatSettings {
  livechatTitle?: string | null;
  livechatColour?: string | null;
  livechatGreeting?: string | null;
  livechatPreChat?: PreChatForm;
}

export const LIVECHAT_SETTINGS = ['title', 'colour', 'greeting', 'preChatForm'] as const;

const text = (value: string | null | undefined) => (value === undefined || value === null ? value : value.trim() || null);

/**
 * What to store of the settings given; 422 naming the first one when the connection is not a
 * live chat (only a widget has a heading or a pre-chat form).
 */
export function checkLivechatSettings(integrationKey: string, input: LivechatSettingsInput): LivechatSettings {
  const given = LIVECHAT_SETTINGS.find((field) => input[field] !== undefined);
  if (given === undefined) return {};
  if (integrationKey !== 'livechat') throw errors.validation(`${given} applies to livechat connections only`);
  return {
    livechatTitle: text(input.title),
    livechatColour: input.colour === undefined || input.colour === null ? input.colour : input.colour.toLowerCase(),
    livechatGreeting: text(input.greeting),
    livechatPreChat: input.preChatForm === undefined ? undefined : { name: input.preChatForm.name, email: input.preChatForm.email },
  };
}

/** The settings in a connection answer and in the widget's config. */
export const LivechatSettingsFields = {
  title: Nullable(LivechatTitle),
  colour: Nullable(LivechatColour),
  greeting: Nullable(LivechatGreeting),
  preChatForm: PreChatFormSchema,
};
