import { CHUNK_BYTES, postgresStorage } from '../../src/attachments/postgres-storage.js';
import { useTestContext } from '../helpers/app.js';
import { storageContract } from './storage-contract.js';

const ctx = await useTestContext();
const store = postgresStorage(ctx.deps.db);

// A chunk being inserted, the next being gathered, and the pieces it is gathered from.
storageContract('postgres', () => store, { heldBytes: 6 * CHUNK_BYTES });
