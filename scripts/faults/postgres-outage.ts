import type { FaultPart } from './part.js';
export const outagePart: FaultPart = { key: 'postgres-outage', title: 'postgres-outage', async run() {} };
