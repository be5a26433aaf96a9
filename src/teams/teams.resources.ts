import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { TeamsTable } from '../db/types.js';
import { Nullable, Timestamp } from '../http/schemas.js';
import { type BusinessHours, BusinessHoursSetting } from '../sla/business-hours.js';

export const TEAM_NAME_MAX = 60;

export const TeamResource = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String({ description: `1–${TEAM_NAME_MAX} characters, unique in the workspace (whatever the case)` }),
    description: Nullable(Type.String()),
    memberIds: Type.Array(Type.Integer(), { description: 'the users of the team, lowest id first' }),
    autoAssign: Type.Boolean({ description: "whether the team's threads are routed to its online members under their cap" }),
    businessHours: Type.With(BusinessHoursSetting, {
      description: "the team's own business hours, which win over the workspace's for its threads; null = the workspace's",
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Team' },
);
export type Team = Static<typeof TeamResource>;

export function teamResource(row: Selectable<TeamsTable>, memberIds: number[]): Team {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    memberIds,
    autoAssign: row.auto_assign,
    businessHours: row.business_hours as BusinessHours | null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
