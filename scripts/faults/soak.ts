import type { FaultPart } from './part.js';
export const soakPart: FaultPart = { key: 'soak', title: 'soak', async run() {} };
