// Limits, defaults and the small value checks every part of the client uses.

export const DEFAULTS = Object.freeze({
  sessionTimeoutSeconds: 10,
  displayTimeoutSeconds: 10,
  rendererTimeoutSeconds: 10,
  minimumIntervalSeconds: 30,
  pollAfterSeconds: 60,
  // A conversion goal that does not say its window (Campaign JSON's default).
  conversionWindowHours: 72,
});

export const LIMITS = Object.freeze({
  stack: 50,
  queue: 1000,
  batch: 500,
  // Discard counts waiting (one per campaign, reason and UTC day), what one may say, and how many a batch carries.
  discardCounts: 200,
  discardCount: 10000,
  discardBatch: 500,
  // A beacon's body: Chrome allows 64 KiB of keep-alive bodies in flight, headers not counted.
  beaconBytes: 60000,
  backoffSeconds: 300,
  jitter: 0.2,
  versionLength: 256,
  patternLength: 100,
  // A version regex that runs longer than this does not match (docs/campaign-json.md).
  patternBudgetMs: 10,
  // A worker that has not answered by then is stuck in a pattern: it is terminated.
  patternWorkerMs: 250,
  patternWorkerStartMs: 3000,
  patternResults: 1000,
  campaigns: 1000,
  images: 500,
  impressionsKept: 1000,
  conversionWindowHours: [1, 720],
  requestMs: 15000,
  pollSeconds: [1, 86400],
  // setTimeout's longest delay; a later deadline is waited for in steps.
  timerMs: 2147483647,
  // Events wait this long after the last one before an upload, so a burst goes in one request.
  uploadDelayMs: 2000,
});

// ---- Small values -----------------------------------------------------------------------------

export const isRecord = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
export const isFilterValue = (value) => typeof value === "string" || typeof value === "number" || typeof value === "boolean";
export const ownProperty = (object, key) => isRecord(object) && Object.prototype.hasOwnProperty.call(object, key);
export const nonBlank = (value) => typeof value === "string" && value.trim() !== "";
export const finiteOr = (value, fallback) => (typeof value === "number" && Number.isFinite(value) ? value : fallback);

/** Milliseconds since 1970 of an RFC 3339 time, or null for anything else. */
export function parseTime(value) {
  if (typeof value !== "string") return null;
  const milliseconds = Date.parse(value);
  return Number.isFinite(milliseconds) ? milliseconds : null;
}

/** Errors in the app's callbacks are the app's: thrown again outside the client, so its state stays whole. */
export function rethrowLater(error) {
  setTimeout(() => {
    throw error;
  }, 0);
}

export function callDelegate(delegate, name, ...args) {
  const callback = delegate && delegate[name];
  if (typeof callback !== "function") return undefined;
  try {
    return callback.apply(delegate, args);
  } catch (error) {
    rethrowLater(error);
    return undefined;
  }
}
