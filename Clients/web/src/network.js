// Requests to Herald: a deadline on each, and the waits after failures.

import { LIMITS } from "./values.js";

// ---- Retries ----------------------------------------------------------------------------------

/** Waits after failures: 1 s, 2 s, 4 s … at most 5 minutes, each ±20 %, never sooner than the server's Retry-After. */
export class Backoff {
  constructor(random) {
    this.random = random;
    this.failures = 0;
    this.retryAt = -Infinity;
  }

  ready(now) {
    return now >= this.retryAt;
  }

  failed(now, retryAfterMs) {
    const nominal = Math.min(LIMITS.backoffSeconds, 2 ** Math.min(this.failures, 30)) * 1000;
    const jittered = nominal * (1 + (this.random() * 2 - 1) * LIMITS.jitter);
    this.failures += 1;
    this.retryAt = now + Math.max(jittered, retryAfterMs);
    return this.retryAt;
  }

  succeeded() {
    this.failures = 0;
    this.retryAt = -Infinity;
  }
}

/** Retry-After in milliseconds from `now`: delay-seconds or an HTTP date; 0 when absent or unreadable. */
export function retryAfterMs(response, now) {
  const value = (response.headers && response.headers.get("Retry-After") || "").trim();
  if (/^\d{1,9}$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : 0;
}

export const transient = (status) => status === 408 || status === 429 || status >= 500;
export const refusesKey = (status) => status === 401 || status === 403;

/** A request that gives up after LIMITS.requestMs, so a silent network cannot hold the client. */
export async function send(fetchFunction, url, init) {
  const controller = typeof AbortController === "function" ? new AbortController() : null;
  const timer = setTimeout(() => controller && controller.abort(), LIMITS.requestMs);
  try {
    return await fetchFunction(url, controller ? { ...init, signal: controller.signal } : init);
  } finally {
    clearTimeout(timer);
  }
}
