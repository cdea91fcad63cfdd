// The files of a zip archive whose entries are stored, not compressed (the
// scene export's zip, app/scene/bundle.go), read through its central
// directory: Go's writer leaves the sizes out of the local headers.

/** Returns a Map from each entry's name to its bytes. */
export function storedZipEntries(zip) {
  const b = Buffer.from(zip);
  const end = b.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a zip: no end of central directory');
  const count = b.readUInt16LE(end + 10);
  let at = b.readUInt32LE(end + 16);
  const out = new Map();
  for (let i = 0; i < count; i++) {
    if (b.readUInt32LE(at) !== 0x02014b50) throw new Error(`zip entry ${i}: no central directory header`);
    const method = b.readUInt16LE(at + 10);
    const size = b.readUInt32LE(at + 20);
    const nameLen = b.readUInt16LE(at + 28);
    const skip = nameLen + b.readUInt16LE(at + 30) + b.readUInt16LE(at + 32);
    const local = b.readUInt32LE(at + 42);
    const name = b.toString('utf8', at + 46, at + 46 + nameLen);
    if (method !== 0) throw new Error(`zip entry ${name} is compressed (method ${method})`);
    const data = local + 30 + b.readUInt16LE(local + 26) + b.readUInt16LE(local + 28);
    out.set(name, b.subarray(data, data + size));
    at += 46 + skip;
  }
  return out;
}
