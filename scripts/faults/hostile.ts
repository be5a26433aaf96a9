import type { FaultPart } from './part.js';
export const hostilePart: FaultPart = { key: 'hostile', title: 'hostile', async run() {} };
