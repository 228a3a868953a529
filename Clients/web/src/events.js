// Events (docs/delivery-semantics.md §6, §7): what is queued and counted, what leaves by beacon, and push payloads.

import { LIMITS, isRecord, finiteOr } from "./values.js";
import { utf8 } from "./ids.js";

export const DISCARD_REASONS = ["orientation", "image_fetch", "timeout", "delegate", "renderer_timeout", "ineligible", "stack_full", "throttled"];
export const CLICK_ACTIONS = ["primary", "secondary", "body"];
export const DISMISS_TYPES = ["auto", "click", "swipe", "unknown"];
export const ERROR_CODES = ["image_fetch", "image_display", "image_format", "unspecified"];

// ---- Push payloads (docs/delivery-semantics.md §4) ----------------------------------------------

/** The push campaign's id in a notification's data: a whole number from 1 to 2^53 − 1, or one written in
 *  decimal digits (FCM data carries only strings); null for anything else. */
export function pushCampaignId(userInfo) {
  const raw = isRecord(userInfo) ? userInfo.herald_campaign_id : undefined;
  const number = typeof raw === "string" && /^\d{1,20}$/.test(raw) ? Number(raw) : raw;
  return typeof number === "number" && Number.isSafeInteger(number) && number >= 1 ? number : null;
}

/** Whether a push asks for a refresh: APNs `aps.content-available` 1, or the data key `herald_refresh` "1". */
export function silentPush(userInfo) {
  if (!isRecord(userInfo)) return false;
  const available = isRecord(userInfo.aps) ? userInfo.aps["content-available"] : undefined;
  return available === 1 || available === "1" || userInfo.herald_refresh === "1";
}

/** Splits events into request bodies of at most LIMITS.batch events and `maxBytes` UTF-8 bytes. */
/** Beacon bodies of at most `maxBytes`: the events in batches, the discard counts in the first (they are few and small). */
export function bodiesOf(events, discards, maxBytes) {
  const bodies = [];
  let batch = [];
  const first = discards.length > 0 ? { discards } : {};
  let bytes = discards.length > 0 ? utf8.encode(JSON.stringify(first)).length : 0;
  const wrapper = utf8.encode('{"events":[]}').length;
  const body = (events) => JSON.stringify(bodies.length === 0 ? { events, ...first } : { events });
  for (const event of events) {
    const size = utf8.encode(JSON.stringify(event)).length + 1;
    if (wrapper + size > maxBytes) continue; // cannot go this way at all; the next fetch upload takes it
    if (batch.length === LIMITS.batch || wrapper + bytes + size > maxBytes) {
      bodies.push(body(batch));
      batch = [];
      bytes = 0;
    }
    batch.push(event);
    bytes += size;
  }
  if (batch.length > 0 || (bodies.length === 0 && discards.length > 0)) bodies.push(body(batch));
  return bodies;
}

const DAY_TEXT = /^\d{4}-\d{2}-\d{2}$/;

/** The discard counts waiting (docs/delivery-semantics.md §7), each as kept: what it counts, whether data
 *  collection was on when it started, and whether an upload took it (then its count is fixed). */
export function readDiscards(stored) {
  const discards = Array.isArray(stored) ? stored : [];
  return discards.filter((entry) => isRecord(entry) && typeof entry.id === "string" && Number.isSafeInteger(entry.campaignId)
    && DISCARD_REASONS.includes(entry.reason) && typeof entry.day === "string" && DAY_TEXT.test(entry.day)
    && Number.isSafeInteger(entry.count) && entry.count >= 1 && entry.count <= LIMITS.discardCount)
    .map((entry) => ({ ...entry, identified: entry.identified === true, sent: entry.sent === true }))
    .slice(-LIMITS.discardCounts);
}

export function readQueue(stored) {
  const queue = isRecord(stored) ? stored : {};
  return {
    events: Array.isArray(queue.events) ? queue.events.filter(isRecord).slice(-LIMITS.queue) : [],
    dropped: Math.max(0, finiteOr(queue.dropped, 0)),
  };
}
