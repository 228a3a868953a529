// Hashes and ids: the rollout bucket and the namespace hash (as the Swift client's), and UUIDs for events.

// ---- Hashes and ids ---------------------------------------------------------------------------

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;
export const utf8 = new TextEncoder();

/** FNV-1a, 64 bits, over the UTF-8 bytes of `text`: the Swift client's hash, byte for byte. */
export function fnv1a64(text) {
  let hash = FNV_OFFSET;
  for (const byte of utf8.encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * FNV_PRIME) & MASK_64;
  }
  return hash;
}

/** The installation's bucket 0–99 for a campaign: sticky, whatever the data-collection choice. */
export function rolloutBucket(campaignId, installationId) {
  return Number(fnv1a64(`${campaignId}:${installationId}`) % 100n);
}

function randomBytes(count, random) {
  const bytes = new Uint8Array(count);
  if (random) {
    for (let index = 0; index < count; index += 1) bytes[index] = Math.floor(random() * 256) & 0xff;
  } else {
    globalThis.crypto.getRandomValues(bytes);
  }
  return bytes;
}

function uuidText(bytes) {
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits, so ids sort by time. */
export function uuidV7(milliseconds, random) {
  const bytes = randomBytes(16, random);
  let time = Math.max(0, Math.floor(milliseconds));
  for (let index = 5; index >= 0; index -= 1) {
    bytes[index] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  return uuidText(bytes);
}

export function uuidV4(random) {
  const bytes = randomBytes(16, random);
  bytes[6] = 0x40 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  return uuidText(bytes);
}
