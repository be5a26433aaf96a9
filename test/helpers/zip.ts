import { crc32, inflateRawSync } from 'node:zlib';

/**
 * Reads a whole zip (small ones, in tests) from its central directory, as an unzip tool does:
 * each entry's bytes, inflated or stored, checked against the size and CRC-32 the directory
 * records. Written apart from the service's zip writer so a test proves the file opens.
 */
export function readZip(zip: Buffer): Map<string, Buffer> {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip: no end of central directory');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const entries = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('a broken central directory');
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(dataAt, dataAt + compressed);
    const bytes = method === 8 ? inflateRawSync(raw) : method === 0 ? Buffer.from(raw) : undefined;
    if (!bytes) throw new Error(`${name}: compression method ${method}`);
    if (bytes.length !== size || crc32(bytes) !== crc) throw new Error(`${name}: size or CRC-32 differs`);
    entries.set(name, bytes);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
