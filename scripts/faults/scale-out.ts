import type { FaultPart } from './part.js';
export const scaleOutPart: FaultPart = { key: 'scale-out', title: 'scale-out', async run() {} };
